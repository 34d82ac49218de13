import { describe, expect, it } from "@jest/globals";
import { canonicalJson } from "../../lib/canonical-json.js";
import { Temporal } from "../../lib/index.js";

describe("canonicalJson", () => {
  it("sorts keys at every level, inside arrays too", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  });

  it("keeps a key named __proto__ as data", () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"y":2,"x":1}}'))).toBe('{"__proto__":{"x":1,"y":2},"b":1}');
  });

  it("writes Temporal values as their ISO text and leaves out undefined fields", () => {
    expect(canonicalJson({ due: Temporal.PlainDate.from("2026-01-02"), gone: undefined })).toBe('{"due":"2026-01-02"}');
    expect(canonicalJson(undefined)).toBe("undefined");
  });
});
