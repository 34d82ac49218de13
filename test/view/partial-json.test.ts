/**
 * The start of a cut JSON text read as far as it goes (a long value in a page of rows is shown as
 * fields from its first 4,096 characters): each case's reading written out by hand.
 */
import { describe, expect, it } from "@jest/globals";
import { partialJson } from "../../lib/view/partial-json.js";

describe("partialJson", () => {
  it.each([
    ['{"text":"xxxx', { text: "xxxx" }],
    ['{"a":1,"b":"ab\\', { a: 1, b: "ab" }],
    ['{"a":"\\u00', { a: "" }],
    ['{"a":{"b":[1,2,3', { a: { b: [1, 2] } }],
    ['{"a":1,"b', { a: 1 }],
    ['{"a":1,"b":', { a: 1 }],
    ['{"a":[{"x":"y"},{"x":"z', { a: [{ x: "y" }, { x: "z" }] }],
    ['["a","b', ["a", "b"]],
    ['{"a":"b"}', { a: "b" }],
  ] as [string, unknown][])("reads %j as far as it goes", (start, expected) => {
    expect(partialJson(start)).toEqual(expected);
  });

  it("gives undefined for text that is not the start of JSON", () => {
    expect(partialJson("not json at all")).toBeUndefined();
  });
});
