import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { Signature } from "../../lib/signature/signature.js";
import { Temporal, t } from "../../lib/signature/temporal.js";
import { compiled } from "../../lib/signature/compile.js";
import { ValidationError } from "../../lib/errors.js";
import { validateInputs } from "../../lib/convert/input.js";
import { inputsToWire } from "../../lib/signature/wire.js";
import { thrownBy } from "../helpers/thrown.js";

const Order = Signature.define({
  name: "Order",
  input: {
    customer: z.string(),
    priority: z.enum(["low", "high"]).default("low"),
    note: z.string().optional(),
    items: z.array(z.object({ sku: z.string(), qty: z.number().int().default(1) })),
  },
  output: { ok: z.boolean() },
});
const sig = compiled(Order);

/** `fn()`'s error, which must be a ValidationError of the code under test. */
const validationError = (fn: () => unknown): ValidationError => thrownBy(ValidationError, fn);

describe("validateInputs", () => {
  it("applies input defaults, also inside nested objects, and omits absent optional fields", () => {
    const v = validateInputs(sig, { customer: "ann", items: [{ sku: "a" }] });
    expect(v).toEqual({ customer: "ann", priority: "low", items: [{ sku: "a", qty: 1 }] });
    expect("note" in v).toBe(false);
  });

  it("raises ValidationError naming a missing required field and its type", () => {
    const e = validationError(() => validateInputs(sig, { items: [] }));
    expect(e.field).toBe("customer");
    expect(e.message).toBe('Input field "customer" of Order is required: expected string, received undefined');
  });

  it("raises ValidationError with the nested path, expected type and received value for a wrong type", () => {
    const e = validationError(() => validateInputs(sig, { customer: "ann", items: [{ sku: "a" }, { sku: "b", qty: "2" }] }));
    expect(e.field).toBe("items[1].qty");
    expect(e.message).toContain('Input field "items[1].qty" of Order: expected number, received "2"');
  });

  it("rejects a value outside an enum, naming the field", () => {
    const e = validationError(() => validateInputs(sig, { customer: "ann", items: [], priority: "urgent" }));
    expect(e.field).toBe("priority");
    expect(e.message).toContain('received "urgent"');
  });

  it("rejects input keys the signature does not declare", () => {
    const e = validationError(() => validateInputs(sig, { customer: "ann", items: [], colour: "red" }));
    expect(e.field).toBe("colour");
    expect(e.message).toContain("customer, priority, note, items");
  });

  it("rejects inputs that are not an object", () => {
    expect(() => validateInputs(sig, "ann")).toThrow(ValidationError);
  });

  it("accepts no inputs at all for a signature without input fields", () => {
    const OutputOnly = Signature.define({ name: "OutputOnly", output: { joke: z.string() } });
    expect(validateInputs(compiled(OutputOnly), undefined)).toEqual({});
  });
});

describe("inputsToWire", () => {
  it("returns JSON-ready values in declaration order without undefined entries", () => {
    const wire = inputsToWire(sig, validateInputs(sig, { items: [], customer: "ann" }));
    expect(Object.keys(wire)).toEqual(["customer", "priority", "items"]);
  });
});

describe("recursive inputs", () => {
  // The recursive field comes before the date (and the record): the walk must still find them
  // at every depth, not only at the top.
  type Tree = { kids: Tree[]; day: Temporal.PlainDate; tags: Record<string, number> };
  const Tree: z.ZodType<Tree> = z.lazy(() => z.object({ kids: z.array(Tree), day: t.date(), tags: z.record(z.string(), z.number()) }));
  type Node = { next?: Node; at: Date };
  const Node = z.object({
    get next() {
      return Node.optional();
    },
    at: z.date(),
  });
  const Rec = compiled(Signature.define({ name: "Rec", input: { tree: Tree, node: Node }, output: { ok: z.boolean() } }));

  it("turns ISO strings into dates and keeps __proto__ record keys at every depth", () => {
    const tags = JSON.parse('{"__proto__": 2, "a": 1}') as Record<string, number>;
    const out = validateInputs(Rec, {
      tree: { day: "2024-01-02", tags: {}, kids: [{ day: "2024-01-03", tags, kids: [{ day: "2024-01-04", tags: {}, kids: [] }] }] },
      node: { at: "2024-01-02T03:04:05Z", next: { at: "2024-01-03T00:00:00Z", next: { at: "2024-01-04T00:00:00Z" } } },
    });
    const tree = out.tree as Tree;
    expect(String(tree.kids[0]!.day)).toBe("2024-01-03");
    expect(tree.kids[0]!.kids[0]!.day).toBeInstanceOf(Temporal.PlainDate);
    expect(Object.getOwnPropertyNames(tree.kids[0]!.tags)).toEqual(["__proto__", "a"]);
    const node = out.node as Node;
    expect(node.next!.next!.at.toISOString()).toBe("2024-01-04T00:00:00.000Z");
    // And back to wire text for the prompt, key kept.
    const wire = JSON.stringify(inputsToWire(Rec, out));
    expect(wire).toContain('"kids":[{"kids":[],"day":"2024-01-04","tags":{}}]');
    expect(wire).toContain('"tags":{"__proto__":2,"a":1}');
    expect(wire).toContain('"at":"2024-01-04T00:00:00.000Z"');
  });
});
