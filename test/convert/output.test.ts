import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { Signature } from "../../lib/signature/signature.js";
import { compiled } from "../../lib/signature/compile.js";
import { OutputError } from "../../lib/errors.js";
import { convertOutputs, convertValue } from "../../lib/convert/output.js";

function outputs(output: Record<string, z.ZodType>, value: unknown, raw = "RAW") {
  return convertOutputs(compiled(Signature.define({ name: "Sig", output })), value, raw);
}

function outputError(fn: () => unknown): OutputError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OutputError);
    return error as OutputError;
  }
  throw new Error("expected an OutputError, nothing was thrown");
}

describe("convertOutputs: the reply object", () => {
  it("rejects a reply that is not an object with path \"\" and the raw text", () => {
    const e = outputError(() => outputs({ a: z.string() }, ["x"], "the raw reply"));
    expect(e.path).toBe("");
    expect(e.raw).toBe("the raw reply");
    expect(e.received).toEqual(["x"]);
  });

  it("ignores keys the signature does not declare and keeps declaration order", () => {
    const r = outputs({ b: z.string(), a: z.number() }, { extra: 1, a: 2, b: "x" });
    expect(r).toEqual({ b: "x", a: 2 });
    expect(Object.keys(r)).toEqual(["b", "a"]);
  });

  it("applies output defaults for missing fields and never raises for them", () => {
    expect(outputs({ c: z.number().default(1), tags: z.array(z.string()).default([]) }, {})).toEqual({ c: 1, tags: [] });
  });

  it("returns a fresh default each call so callers cannot mutate the declared default", () => {
    const sig = { tags: z.array(z.string()).default([]) };
    (outputs(sig, {}).tags as string[]).push("x");
    expect(outputs(sig, {}).tags).toEqual([]);
  });

  it("returns null for missing optional, nullable and nullish fields", () => {
    expect(outputs({ a: z.string().optional(), b: z.number().nullable(), c: z.boolean().nullish() }, {})).toEqual({ a: null, b: null, c: null });
  });

  it("raises OutputError for a missing required field, naming it", () => {
    const e = outputError(() => outputs({ answer: z.string() }, {}, "{}"));
    expect(e.path).toBe("answer");
    expect(e.expected).toBe("string");
    expect(e.message).toContain('Output field "answer"');
    expect(e.message).toContain("missing");
    expect(e.raw).toBe("{}");
  });
});

describe("convertValue: scalars", () => {
  it("accepts strings and stringifies numbers and booleans sent for a string field", () => {
    expect(convertValue(z.string(), "x", "p", "")).toBe("x");
    expect(convertValue(z.string(), 42, "p", "")).toBe("42");
    expect(convertValue(z.string(), true, "p", "")).toBe("true");
    expect(() => convertValue(z.string(), { a: 1 }, "p", "")).toThrow(OutputError);
  });

  it("accepts numbers and numeric strings for number fields", () => {
    expect(convertValue(z.number(), 3.5, "p", "")).toBe(3.5);
    expect(convertValue(z.number(), "3.5", "p", "")).toBe(3.5);
    expect(convertValue(z.number().int(), "42", "p", "")).toBe(42);
  });

  it("rejects non-numeric strings with a message naming path, expected and received", () => {
    const e = outputError(() => convertValue(z.number(), "abc", "items[2].price", "raw"));
    expect(e.message).toBe('Output field "items[2].price": expected number, received "abc"');
    expect(e).toMatchObject({ path: "items[2].price", expected: "number", received: "abc", raw: "raw" });
  });

  it("requires an integer for an int field", () => {
    const e = outputError(() => convertValue(z.number().int(), 3.5, "n", ""));
    expect(e.expected).toBe("integer");
  });

  it("accepts true/false and the strings \"true\"/\"false\" for booleans, nothing else", () => {
    expect(convertValue(z.boolean(), true, "b", "")).toBe(true);
    expect(convertValue(z.boolean(), "false", "b", "")).toBe(false);
    expect(() => convertValue(z.boolean(), "yes", "b", "")).toThrow(OutputError);
    expect(() => convertValue(z.boolean(), 1, "b", "")).toThrow(OutputError);
  });

  it("enforces the schema's own checks on converted values", () => {
    expect(() => convertValue(z.string().min(3), "ab", "s", "")).toThrow(OutputError);
    expect(convertValue(z.number().int().min(0), "5", "n", "")).toBe(5);
    expect(() => convertValue(z.number().int().min(0), -1, "n", "")).toThrow(OutputError);
  });
});

describe("convertValue: enums and literals", () => {
  const Sentiment = z.enum(["positive", "negative", "neutral"]);

  it("matches exactly first", () => {
    expect(convertValue(Sentiment, "negative", "s", "")).toBe("negative");
  });

  it("accepts a unique case-insensitive match", () => {
    expect(convertValue(Sentiment, "Positive", "s", "")).toBe("positive");
  });

  it("rejects an ambiguous case-insensitive match", () => {
    const e = outputError(() => convertValue(z.enum(["Yes", "YES", "no"]), "yes", "s", ""));
    expect(e.message).toContain("ambiguous");
  });

  it("rejects an unknown value, listing the allowed values", () => {
    const e = outputError(() => convertValue(Sentiment, "angry", "sentiment", ""));
    expect(e.message).toBe('Output field "sentiment": expected one of "positive", "negative", "neutral", received "angry"');
  });

  it("returns the value of a TypeScript string enum", () => {
    enum Color { Red = "red", Green = "green" }
    expect(convertValue(z.enum(Color), "GREEN", "c", "")).toBe(Color.Green);
  });

  it("returns the value of a TypeScript numeric enum, also from its text", () => {
    enum Level { Low, High }
    expect(convertValue(z.enum(Level), 1, "l", "")).toBe(Level.High);
    expect(convertValue(z.enum(Level), "0", "l", "")).toBe(Level.Low);
    expect(() => convertValue(z.enum(Level), "High", "l", "")).toThrow(OutputError);
  });

  it("converts literals like single-valued enums", () => {
    expect(convertValue(z.literal("ok"), "OK", "l", "")).toBe("ok");
    expect(() => convertValue(z.literal("ok"), "no", "l", "")).toThrow(OutputError);
  });
});

describe("convertValue: structures", () => {
  it("converts objects nested three levels deep with their own defaults and optionals", () => {
    const schema = z.object({
      a: z.object({
        b: z.object({ c: z.number(), d: z.string().default("dd"), e: z.string().optional() }),
      }),
    });
    expect(convertValue(schema, { a: { b: { c: "7", junk: 1 } } }, "", "")).toEqual({ a: { b: { c: 7, d: "dd", e: null } } });
    const e = outputError(() => convertValue(schema, { a: { b: { c: "x" } } }, "root", ""));
    expect(e.path).toBe("root.a.b.c");
  });

  it("converts arrays of structs element-wise and reports the element path", () => {
    const schema = z.array(z.object({ name: z.string(), price: z.number() }));
    expect(convertValue(schema, [{ name: "a", price: "1.5" }], "items", "")).toEqual([{ name: "a", price: 1.5 }]);
    const e = outputError(() =>
      convertValue(schema, [{ name: "a", price: 1 }, { name: "b", price: 2 }, { name: "c", price: "abc" }], "items", ""),
    );
    expect(e.path).toBe("items[2].price");
    expect(e.message).toBe('Output field "items[2].price": expected number, received "abc"');
  });

  it("rejects a non-array for an array field", () => {
    expect(() => convertValue(z.array(z.string()), "a,b", "tags", "")).toThrow(OutputError);
  });

  it("converts record values and reports the key in the path", () => {
    const schema = z.record(z.string(), z.number().int());
    expect(convertValue(schema, { a: "1", b: 2 }, "scores", "")).toEqual({ a: 1, b: 2 });
    expect(outputError(() => convertValue(schema, { a: 1, b: "x" }, "scores", "")).path).toBe("scores.b");
  });

  it("converts z.lazy recursive structures", () => {
    type Tree = { name: string; children: Tree[] };
    const TreeSchema: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(TreeSchema).default([]) }));
    expect(convertValue(TreeSchema, { name: "r", children: [{ name: "c", children: [{ name: 5 }] }] }, "t", "")).toEqual({
      name: "r",
      children: [{ name: "c", children: [{ name: "5", children: [] }] }],
    });
    expect(outputError(() => convertValue(TreeSchema, { name: "r", children: [{ children: [] }] }, "t", "")).path).toBe(
      "t.children[0].name",
    );
  });

  it("converts getter-based recursive objects", () => {
    const Node: z.ZodType = z.object({ v: z.number(), get next() { return Node.nullable(); } });
    expect(convertValue(Node, { v: "1", next: { v: 2 } }, "n", "")).toEqual({ v: 1, next: { v: 2, next: null } });
  });
});

describe("convertValue: unions", () => {
  const Cash = z.object({ amount: z.number(), currency: z.string() });
  const Card = z.object({ number: z.string(), expiry: z.string(), holder: z.string().optional() });
  const Payment = z.union([Cash, Card]);

  it("picks the object member whose required keys are present", () => {
    expect(convertValue(Payment, { number: "4111", expiry: "12/30" }, "p", "")).toEqual({ number: "4111", expiry: "12/30", holder: null });
    expect(convertValue(Payment, { amount: "5", currency: "EUR" }, "p", "")).toEqual({ amount: 5, currency: "EUR" });
  });

  it("prefers the member with more matching keys when several fit", () => {
    const A = z.object({ id: z.string() });
    const B = z.object({ id: z.string(), label: z.string() });
    expect(convertValue(z.union([A, B]), { id: "1", label: "x" }, "u", "")).toEqual({ id: "1", label: "x" });
  });

  it("uses the discriminator of a discriminated union, case-insensitively if unique", () => {
    const Shape = z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("circle"), r: z.number() }),
      z.object({ kind: z.literal("square"), side: z.number() }),
    ]);
    expect(convertValue(Shape, { kind: "square", side: "2" }, "s", "")).toEqual({ kind: "square", side: 2 });
    expect(convertValue(Shape, { kind: "Circle", r: 1 }, "s", "")).toEqual({ kind: "circle", r: 1 });
    expect(outputError(() => convertValue(Shape, { kind: "square", side: "x" }, "s", "")).path).toBe("s.side");
  });

  it("prefers the member matching the JSON type of a scalar", () => {
    const U = z.union([z.number(), z.string()]);
    expect(convertValue(U, "42", "u", "")).toBe("42");
    expect(convertValue(U, 42, "u", "")).toBe(42);
  });

  it("raises OutputError listing the member types when no member converts", () => {
    const e = outputError(() => convertValue(Payment, { foo: 1 }, "pay", ""));
    expect(e.path).toBe("pay");
    expect(e.expected).toContain("object {amount, currency}");
    expect(e.expected).toContain("object {number, expiry, holder}");
  });
});

describe("convertValue: nulls and transforms", () => {
  it("accepts an explicit null for a nullable field and rejects it for a required one", () => {
    expect(outputs({ a: z.string().nullable() }, { a: null })).toEqual({ a: null });
    const e = outputError(() => outputs({ a: z.string() }, { a: null }));
    expect(e).toMatchObject({ path: "a", expected: "string", received: null });
  });

  it("uses the default when the model sends null for a defaulted field", () => {
    expect(outputs({ n: z.number().int().default(3) }, { n: null })).toEqual({ n: 3 });
  });

  it("converts the input side of a transform, then applies the transform", () => {
    expect(convertValue(z.string().transform((s) => s.length), 12345, "len", "")).toBe(5);
  });
});
