import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { renderToonSchema } from "../../lib/signature/toon-schema.js";
import { t } from "../../lib/signature/temporal.js";

describe("renderToonSchema", () => {
  it("lists fields in declaration order, one per line, with optional markers and enum options", () => {
    const text = renderToonSchema({
      sentiment: z.enum(["positive", "negative", "neutral"]).describe("the label"),
      confidence: z.number().default(1),
      note: z.string().nullable(),
      count: z.number().int(),
    });
    expect(text).toBe(
      [
        'sentiment: "positive" | "negative" | "neutral"  # the label',
        "confidence?: number (default: 1)",
        "note?: string",
        "count: integer",
      ].join("\n"),
    );
  });

  it("shows the TOON tabular header for arrays of flat objects, with the columns indented below", () => {
    const text = renderToonSchema({
      items: z.array(z.object({ name: z.string(), price: z.number(), qty: z.number().int().optional() })),
    });
    expect(text).toContain("items[N]{name,price,qty}:");
    expect(text).toContain("\n  name: string\n  price: number\n  qty?: integer");
  });

  it("indents nested object fields and uses list form for arrays of non-flat objects", () => {
    const text = renderToonSchema({
      address: z.object({ street: z.string(), geo: z.object({ lat: z.number() }) }),
      orders: z.array(z.object({ id: z.string(), parts: z.array(z.string()) })).optional(),
    });
    expect(text).toContain("address:\n  street: string\n  geo:\n    lat: number");
    expect(text).toContain('orders[N]: (optional)  # list, each item "- " then its fields\n  id: string\n  parts[N]: string');
  });

  it("describes dates with their wire format and arrays of scalars inline", () => {
    const text = renderToonSchema({ due: t.date(), at: t.dateTime(), tags: z.array(z.string()) });
    expect(text).toContain("due: date (YYYY-MM-DD)");
    expect(text).toContain("at: date-time (YYYY-MM-DDTHH:MM:SS+HH:MM)");
    expect(text).toContain("tags[N]: string");
  });

  it("terminates on recursive structs and says where the fields repeat", () => {
    const Node: z.ZodType = z.object({ name: z.string(), get children() { return z.array(Node); } });
    const text = renderToonSchema({ tree: Node });
    expect(text).toContain("tree:\n  name: string\n  children[N]:");
    expect(text).toContain('fields of "tree"');
  });

  it("groups a union before [] so the list applies to all of it", () => {
    const text = renderToonSchema({ lookup: z.record(z.string(), z.array(z.enum(["a", "b"]))) });
    expect(text).toBe('lookup: {<key>: ("a" | "b")[]}');
  });

  it("refers back to a struct that contains itself inside an inline type", () => {
    const Node: z.ZodType = z.object({ id: z.number(), get next() { return z.record(z.string(), Node); } });
    expect(renderToonSchema({ index: z.record(z.string(), Node) })).toBe(
      'index: {<key>: {id: number, next: {<key>: (same fields as "index")}}}',
    );
  });
});
