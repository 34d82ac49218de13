import { describe, expect, it } from "@jest/globals";
import { strictSchemaProblem, toStrictSchema } from "../../lib/lm/strict-schema.js";

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

describe("strictSchemaProblem", () => {
  const object = (properties: Record<string, unknown>) => ({
    type: "object", properties, required: Object.keys(properties), additionalProperties: false,
  });

  it("accepts closed objects, arrays of them, unions, $defs and a property named like a keyword", () => {
    expect(strictSchemaProblem(object({
      not: { type: "string" },
      if: { type: "string", enum: ["allOf", "not"] },
      list: { type: "array", items: object({ n: { type: ["number", "null"] } }) },
      either: { anyOf: [{ type: "string" }, { $ref: "#/$defs/Item" }] },
    }))).toBeUndefined();
    expect(strictSchemaProblem({ ...object({ item: { $ref: "#/$defs/Item" } }), $defs: { Item: object({ a: { type: "string" } }) } }))
      .toBeUndefined();
  });

  it("names the first place strict mode cannot express, as a JSON pointer", () => {
    expect(strictSchemaProblem(object({ scores: { type: "object", additionalProperties: { type: "number" } } })))
      .toBe("/properties/scores: a record (additionalProperties is a value schema); strict mode needs additionalProperties: false");
    expect(strictSchemaProblem(object({ list: { type: "array", items: { type: "object" } } })))
      .toBe("/properties/list/items: an object without a fixed list of properties; strict mode needs additionalProperties: false");
    expect(strictSchemaProblem({ ...object({}), $defs: { "a/b": { type: ["object", "null"], properties: {}, additionalProperties: true } } }))
      .toBe("/$defs/a~1b: an object without a fixed list of properties; strict mode needs additionalProperties: false");
    expect(strictSchemaProblem(object({ x: { anyOf: [{ type: "string" }, { type: "string", not: { const: "" } }] } })))
      .toBe('/properties/x/anyOf/1: strict mode does not support "not"');
    expect(strictSchemaProblem(object({ m: { type: "object", patternProperties: { "^a": { type: "string" } }, additionalProperties: false } })))
      .toBe('/properties/m: strict mode does not support "patternProperties"');
    // z.any() / z.unknown(): OpenAI rejects a subschema without a type ("schema must have a 'type' key").
    expect(strictSchemaProblem(object({ list: { type: "array", items: {} } })))
      .toBe('/properties/list/items: a schema without a type (any value); strict mode needs "type", "anyOf", "$ref", "enum" or "const"');
    expect(strictSchemaProblem(object({ v: { description: "anything" } })))
      .toBe('/properties/v: a schema without a type (any value); strict mode needs "type", "anyOf", "$ref", "enum" or "const"');
    expect(strictSchemaProblem({ type: "array", items: { type: "string" } }))
      .toBe('/: the root must be an object schema, received type "array"');
  });

  it("finds the record that toStrictSchema keeps", () => {
    const schema = { type: "object", properties: { scores: { type: "object", additionalProperties: { type: "number" } } }, required: ["scores"] };
    expect(strictSchemaProblem(toStrictSchema(schema))).toMatch(/^\/properties\/scores: a record/);
  });
});
