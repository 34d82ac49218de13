import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { Signature } from "../../lib/signature/signature.js";
import { shapeToJsonSchema, zodToJsonSchema } from "../../lib/signature/json-schema.js";
import { t } from "../../lib/signature/temporal.js";
import { Classify } from "../fixtures/classify.js";

describe("shapeToJsonSchema", () => {
  it("renders the API example signature exactly (draft-06, declaration order, required without defaults)", () => {
    expect(Classify.inputJsonSchema()).toEqual({
      $schema: "http://json-schema.org/draft-06/schema#",
      type: "object",
      properties: { sentence: { type: "string", description: "text to classify" } },
      required: ["sentence"],
    });
    const out = Classify.outputJsonSchema();
    expect(out).toEqual({
      $schema: "http://json-schema.org/draft-06/schema#",
      type: "object",
      properties: {
        sentiment: { type: "string", enum: ["positive", "negative", "neutral"] },
        confidence: { type: "number", default: 1 },
      },
      required: ["sentiment"],
    });
    expect(Object.keys(out.properties as object)).toEqual(["sentiment", "confidence"]);
  });

  it("maps int to integer without zod's safe-integer bounds, and float to number", () => {
    expect(shapeToJsonSchema({ n: z.number().int(), f: z.number(), b: z.boolean() }).properties).toEqual({
      n: { type: "integer" },
      f: { type: "number" },
      b: { type: "boolean" },
    });
  });

  it("leaves optional, nullable, nullish and defaulted fields out of required", () => {
    const s = shapeToJsonSchema({
      a: z.string(),
      b: z.string().optional(),
      c: z.string().nullable(),
      d: z.string().nullish(),
      e: z.string().default("x"),
    });
    expect(s.required).toEqual(["a"]);
    expect((s.properties as Record<string, unknown>).c).toEqual({ type: ["string", "null"] });
    expect((s.properties as Record<string, unknown>).e).toEqual({ type: "string", default: "x" });
  });

  it("renders a nullable object as anyOf with null", () => {
    const s = shapeToJsonSchema({ o: z.object({ x: z.string() }).nullable() });
    expect((s.properties as Record<string, unknown>).o).toEqual({
      anyOf: [{ type: "object", properties: { x: { type: "string" } }, required: ["x"] }, { type: "null" }],
    });
  });

  it("renders arrays with items and nested objects without additionalProperties:false", () => {
    const s = shapeToJsonSchema({ items: z.array(z.object({ name: z.string(), qty: z.number().int().optional() }).strict()) });
    expect((s.properties as Record<string, unknown>).items).toEqual({
      type: "array",
      items: { type: "object", properties: { name: { type: "string" }, qty: { type: "integer" } }, required: ["name"] },
    });
  });

  it("renders records as additionalProperties with the value schema and no propertyNames noise", () => {
    const s = shapeToJsonSchema({ scores: z.record(z.string(), z.number()) });
    expect((s.properties as Record<string, unknown>).scores).toEqual({ type: "object", additionalProperties: { type: "number" } });
  });

  it("renders unions as anyOf, also for simple member types and discriminated unions", () => {
    const s = shapeToJsonSchema({
      u: z.union([z.string(), z.number()]),
      un: z.union([z.string(), z.number()]).nullable(),
      du: z.discriminatedUnion("k", [z.object({ k: z.literal("a") }), z.object({ k: z.literal("b") })]),
    });
    const p = s.properties as Record<string, Record<string, unknown>>;
    expect(p.u).toEqual({ anyOf: [{ type: "string" }, { type: "number" }] });
    expect(p.un).toEqual({ anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] });
    expect(p.du).toEqual({
      anyOf: [
        { type: "object", properties: { k: { type: "string", const: "a" } }, required: ["k"] },
        { type: "object", properties: { k: { type: "string", const: "b" } }, required: ["k"] },
      ],
    });
  });

  it("renders t.date as format date and t.dateTime / z.date as format date-time", () => {
    const s = shapeToJsonSchema({ d: t.date().describe("day"), dt: t.dateTime(), at: z.date() });
    expect(s.properties).toEqual({
      d: { type: "string", format: "date", description: "day" },
      dt: { type: "string", format: "date-time" },
      at: { type: "string", format: "date-time" },
    });
  });

  it("renders a TypeScript string enum as a string enum of its values", () => {
    enum Color { Red = "red", Green = "green" }
    expect(shapeToJsonSchema({ c: z.enum(Color) }).properties).toEqual({ c: { type: "string", enum: ["red", "green"] } });
  });

  it("puts getter-based recursive objects with a meta id into $defs referenced by $ref", () => {
    const Node: z.ZodType = z.object({ name: z.string(), get children() { return z.array(Node); } }).meta({ id: "TreeNode" });
    const s = shapeToJsonSchema({ root: Node });
    expect((s.properties as Record<string, unknown>).root).toEqual({ $ref: "#/$defs/TreeNode" });
    expect(s.$defs).toEqual({
      TreeNode: {
        type: "object",
        properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/TreeNode" } } },
        required: ["name", "children"],
      },
    });
  });

  it("puts a z.lazy recursive type into $defs, referenced from the field and from itself", () => {
    const Cat: z.ZodType = z.lazy(() => z.object({ name: z.string(), sub: z.array(Cat) }));
    const s = shapeToJsonSchema({ cat: Cat });
    // zod names an unnamed definition itself; the test fixes the structure, not the chosen name.
    const ref = ((s.properties as Record<string, { $ref?: string }>).cat?.$ref ?? "") as string;
    const name = /^#\/\$defs\/([^/]+)$/.exec(ref)?.[1] as string;
    expect(name).toBeDefined();
    expect(s).toEqual({
      $schema: "http://json-schema.org/draft-06/schema#",
      type: "object",
      properties: { cat: { $ref: `#/$defs/${name}` } },
      required: ["cat"],
      $defs: {
        [name]: {
          type: "object",
          properties: { name: { type: "string" }, sub: { type: "array", items: { $ref: `#/$defs/${name}` } } },
          required: ["name", "sub"],
        },
      },
    });
  });

  it("returns a fresh copy so a caller's edits do not leak into later calls", () => {
    const shape = { a: z.string() };
    const first = shapeToJsonSchema(shape);
    (first.properties as Record<string, unknown>).a = "mutated";
    expect((shapeToJsonSchema(shape).properties as Record<string, unknown>).a).toEqual({ type: "string" });
  });
});

describe("zodToJsonSchema", () => {
  it("renders one value without $schema", () => {
    expect(zodToJsonSchema(z.array(z.number().int()))).toEqual({ type: "array", items: { type: "integer" } });
  });
});
