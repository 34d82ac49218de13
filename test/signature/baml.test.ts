import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { renderBaml } from "../../lib/signature/baml.js";
import { t } from "../../lib/signature/temporal.js";

describe("renderBaml", () => {
  it("renders the API example as one class with literal-union enums and float", () => {
    const text = renderBaml("ClassifyOutput", {
      sentiment: z.enum(["positive", "negative", "neutral"]),
      confidence: z.number().default(1.0),
    });
    expect(text).toBe('class ClassifyOutput {\n  sentiment "positive" | "negative" | "neutral"\n  confidence float\n}');
  });

  it("writes string, int, float, bool, arrays, maps and optional types", () => {
    const text = renderBaml("Out", {
      s: z.string(),
      i: z.number().int(),
      f: z.number(),
      b: z.boolean(),
      tags: z.array(z.string()),
      scores: z.record(z.string(), z.number().int()),
      maybe: z.string().nullish(),
      either: z.union([z.string(), z.number()]).optional(),
    });
    for (const line of ["  s string", "  i int", "  f float", "  b bool", "  tags string[]", "  scores map<string, int>", "  maybe string?", "  either string | float | null"]) {
      expect(text).toContain(`${line}\n`);
    }
  });

  it("groups only a top-level union before a suffix, not one inside map<...>", () => {
    const text = renderBaml("Out", {
      labels: z.array(z.enum(["a", "b"])).optional(),
      grid: z.array(z.array(z.record(z.string(), z.union([z.string(), z.number()])))),
    });
    expect(text).toContain('  labels ("a" | "b")[]?\n');
    expect(text).toContain("  grid map<string, string | float>[][]\n");
  });

  it("does not read a quoted literal holding ' | ' or brackets as a union", () => {
    const text = renderBaml("Out", { ops: z.array(z.literal("a | b")), cmp: z.enum(["x > y", "x < y"]).optional() });
    expect(text).toContain('  ops "a | b"[]\n');
    expect(text).toContain('  cmp "x > y" | "x < y" | null\n');
  });

  it("declares nested structs as separate classes before the class that uses them", () => {
    const text = renderBaml("OrderOutput", {
      line_items: z.array(z.object({ sku: z.string(), dims: z.object({ w: z.number() }) })),
      shipping: z.object({ city: z.string() }).meta({ id: "Address" }),
    });
    expect(text).toContain("class LineItem {\n  sku string\n  dims Dims\n}");
    expect(text).toContain("class Address {\n  city string\n}");
    expect(text).toContain("  line_items LineItem[]\n  shipping Address\n");
    expect(text.indexOf("class Dims")).toBeLessThan(text.indexOf("class LineItem"));
    expect(text.indexOf("class LineItem")).toBeLessThan(text.indexOf("class OrderOutput"));
  });

  it("renders unions of structs as A | B and recursive structs by name", () => {
    const Node: z.ZodType = z.object({ name: z.string(), get children() { return z.array(Node); } }).meta({ id: "TreeNode" });
    const text = renderBaml("Out", {
      pay: z.union([z.object({ amount: z.number() }).meta({ id: "Cash" }), z.object({ card: z.string() }).meta({ id: "Card" })]),
      tree: Node,
    });
    expect(text).toContain("  pay Cash | Card\n");
    expect(text).toContain("class TreeNode {\n  name string\n  children TreeNode[]\n}");
    expect(text.match(/class TreeNode/g)).toHaveLength(1);
  });

  it("renders dates as string with a format comment, and descriptions with @description", () => {
    const text = renderBaml("Out", {
      due: t.date().describe("the deadline"),
      at: t.dateTime(),
      seen: z.date(),
    });
    expect(text).toContain('  due string @description("the deadline") // YYYY-MM-DD\n');
    expect(text).toContain("  at string // YYYY-MM-DDTHH:MM:SS+HH:MM\n");
    expect(text).toContain("  seen string // YYYY-MM-DDTHH:MM:SSZ (UTC)\n");
  });

  it("renders TypeScript enum values as a literal union", () => {
    enum Color { Red = "red", Green = "green" }
    expect(renderBaml("Out", { c: z.enum(Color) })).toContain('  c "red" | "green"\n');
  });

  it("gives two different structs wanting the same name distinct class names", () => {
    const text = renderBaml("Out", {
      a: z.object({ x: z.string() }).meta({ id: "Thing" }),
      b: z.object({ y: z.string() }).meta({ id: "Thing" }),
    });
    expect(text).toContain("class Thing {");
    expect(text).toContain("class Thing2 {");
  });
});
