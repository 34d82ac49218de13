import { describe, expect, it } from "@jest/globals";
import { toStrictSchema } from "../../lib/lm/strict-schema.js";

describe("toStrictSchema", () => {
  it("lists every property as required and makes the optional ones nullable", () => {
    const strict = toStrictSchema({
      type: "object",
      properties: {
        a: { type: "string" },
        b: { type: "integer", description: "count" },
        c: { type: "string", enum: ["x", "y"] },
        d: { anyOf: [{ type: "string" }, { type: "number" }] },
      },
      required: ["a"],
    });
    expect(strict["required"]).toEqual(["a", "b", "c", "d"]);
    expect(strict["additionalProperties"]).toBe(false);
    const props = strict["properties"] as Record<string, unknown>;
    expect(props["a"]).toEqual({ type: "string" });
    expect(props["b"]).toEqual({ type: ["integer", "null"], description: "count" });
    expect(props["c"]).toEqual({ type: ["string", "null"], enum: ["x", "y", null] });
    expect(props["d"]).toEqual({ anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] });
  });

  it("keeps a record's value schema instead of replacing it with false", () => {
    const strict = toStrictSchema({
      type: "object",
      properties: {
        scores: { type: "object", propertyNames: { type: "string" }, additionalProperties: { type: "number" } },
        tags: { type: "object", additionalProperties: { type: "object", properties: { n: { type: "number" } } } },
      },
      required: ["scores", "tags"],
    });
    const props = strict["properties"] as Record<string, Record<string, unknown>>;
    expect(props["scores"]!["additionalProperties"]).toEqual({ type: "number" });
    // The value schema itself is made strict.
    expect(props["tags"]!["additionalProperties"]).toEqual({
      type: "object", properties: { n: { type: ["number", "null"] } }, required: ["n"], additionalProperties: false,
    });
  });

  it("strips $schema and default, and walks nested objects in arrays", () => {
    const strict = toStrictSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        items: { type: "array", items: { type: "object", properties: { name: { type: "string", default: "n/a" } } } },
      },
      required: ["items"],
    });
    expect(strict["$schema"]).toBeUndefined();
    const items = (strict["properties"] as any).items.items;
    expect(items).toEqual({
      type: "object", properties: { name: { type: ["string", "null"] } }, required: ["name"], additionalProperties: false,
    });
  });

  it("transforms $defs and wraps an optional $ref in anyOf with null", () => {
    const strict = toStrictSchema({
      type: "object",
      $defs: { Address: { type: "object", properties: { city: { type: "string" }, zip: { type: "string" } }, required: ["city"] } },
      properties: { home: { $ref: "#/$defs/Address" }, work: { $ref: "#/$defs/Address", description: "office" } },
      required: ["home"],
    });
    expect((strict["$defs"] as any).Address).toEqual({
      type: "object", properties: { city: { type: "string" }, zip: { type: ["string", "null"] } },
      required: ["city", "zip"], additionalProperties: false,
    });
    expect((strict["properties"] as any).home).toEqual({ $ref: "#/$defs/Address" });
    expect((strict["properties"] as any).work).toEqual({ anyOf: [{ $ref: "#/$defs/Address" }, { type: "null" }], description: "office" });
  });

  it("turns oneOf into anyOf and makes objects inside unions strict", () => {
    const strict = toStrictSchema({
      type: "object",
      properties: { v: { oneOf: [{ type: "object", properties: { k: { type: "string" } } }, { type: "null" }] } },
      required: ["v"],
    });
    const v = (strict["properties"] as any).v;
    expect(v.oneOf).toBeUndefined();
    expect(v.anyOf[0]).toEqual({ type: "object", properties: { k: { type: ["string", "null"] } }, required: ["k"], additionalProperties: false });
  });

  it("leaves an already nullable optional field alone and does not mutate its input", () => {
    const input = { type: "object", properties: { n: { type: ["string", "null"] } }, required: [] as string[] };
    const copy = structuredClone(input);
    expect((toStrictSchema(input)["properties"] as any).n).toEqual({ type: ["string", "null"] });
    expect(input).toEqual(copy);
  });
});
