/** The JSON Schema → zod translation of MCP tool inputs, on hand-written schemas (expected values written out). */
import { describe, expect, test } from "@jest/globals";
import { z } from "zod";
import { inputSchemaToZod } from "../../lib/mcp/schema-to-zod.js";

const parse = (schema: unknown, value: unknown) => z.object(inputSchemaToZod(schema).shape).safeParse(value).success;

describe("inputSchemaToZod", () => {
  const schema = {
    type: "object",
    properties: {
      name: { type: "string", description: "Who" },
      age: { type: "integer" },
      score: { type: "number" },
      ok: { type: "boolean" },
      kind: { enum: ["a", "b"] },
      level: { enum: [1, 2] },
      fixed: { const: "x" },
      list: { type: "array", items: { type: "number" } },
      maybe: { type: ["string", "null"] },
      inner: { type: "object", properties: { deep: { type: "string" } }, required: ["deep"] },
      free: { type: "object" },
      choice: { anyOf: [{ type: "string" }, { type: "number" }] },
      ref: { $ref: "#/definitions/x" },
    },
    required: ["name", "age"],
  };

  test("accepts what the schema allows and refuses what it does not", () => {
    expect(parse(schema, { name: "n", age: 3 })).toBe(true);
    expect(parse(schema, { name: "n" })).toBe(false);
    expect(parse(schema, { name: "n", age: 3.5 })).toBe(false);
    expect(parse(schema, { name: "n", age: 3, score: 0.5, ok: false, kind: "b", level: 2, fixed: "x", list: [1, 2], maybe: null })).toBe(true);
    expect(parse(schema, { name: "n", age: 3, kind: "c" })).toBe(false);
    expect(parse(schema, { name: "n", age: 3, level: 3 })).toBe(false);
    expect(parse(schema, { name: "n", age: 3, fixed: "y" })).toBe(false);
    expect(parse(schema, { name: "n", age: 3, list: ["1"] })).toBe(false);
    expect(parse(schema, { name: "n", age: 3, inner: {} })).toBe(false);
    expect(parse(schema, { name: "n", age: 3, free: { any: 1 }, choice: true, ref: [1] })).toBe(true);
  });

  test("keeps descriptions and notes each construct it does not translate, by path", () => {
    const { shape, notes } = inputSchemaToZod(schema);
    expect((shape.name as z.ZodType).description).toBe("Who");
    expect(notes).toEqual([
      "choice: anyOf is not translated; any value is accepted here and the server checks it",
      "ref: $ref is not translated; any value is accepted here and the server checks it",
    ]);
  });

  test("a schema without properties is an empty input", () => {
    expect(inputSchemaToZod({ type: "object" })).toEqual({ shape: {}, notes: [] });
    expect(inputSchemaToZod(undefined)).toEqual({ shape: {}, notes: [] });
  });
});
