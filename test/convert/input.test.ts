import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { Signature } from "../../lib/signature/signature.js";
import { compiled } from "../../lib/signature/compile.js";
import { ValidationError } from "../../lib/errors.js";
import { validateInputs } from "../../lib/convert/input.js";
import { inputsToWire } from "../../lib/signature/wire.js";

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

function validationError(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("expected a ValidationError, nothing was thrown");
}

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
