/** A record key named "__proto__" is data: it is kept as an own key and never changes a prototype. */
import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { valueToWire } from "../../lib/signature/wire.js";
import { convertOutputs } from "../../lib/convert/output.js";
import { FewShotExample, Predict, Signature, Temporal, t } from "../../lib/index.js";
import { compiled } from "../../lib/signature/compile.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const Counts = Signature.define({
  name: "Counts",
  input: { text: z.string() },
  output: { counts: z.record(z.string(), z.number()) },
});

function ownEntries(value: object): [string, unknown][] {
  return Object.getOwnPropertyNames(value).map((key) => [key, (value as Record<string, unknown>)[key]]);
}

describe('record keys named "__proto__"', () => {
  it("keeps the key in a converted z.record output, with the ordinary prototype", () => {
    const reply = JSON.parse('{"counts": {"a": 1, "__proto__": 2, "b": 3}}') as unknown;
    const out = convertOutputs(compiled(Counts), reply, "raw");
    const counts = out.counts as Record<string, number>;
    expect(ownEntries(counts)).toEqual([["a", 1], ["__proto__", 2], ["b", 3]]);
    expect(Object.getPrototypeOf(counts)).toBe(Object.prototype);
    expect(JSON.stringify(counts)).toBe('{"a":1,"__proto__":2,"b":3}');
  });

  it("does not let an object value under the key become the record's prototype", () => {
    const Nested = Signature.define({ name: "Nested", output: { m: z.record(z.string(), z.object({ x: z.number() })) } });
    const reply = JSON.parse('{"m": {"__proto__": {"x": 1}}}') as unknown;
    const m = convertOutputs(compiled(Nested), reply, "raw").m as Record<string, { x: number }>;
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype);
    expect(ownEntries(m)).toEqual([["__proto__", { x: 1 }]]);
    expect((m as { x?: number }).x).toBeUndefined();
  });

  it("reaches the prediction through Predict", async () => {
    const lm = new ScriptedLM(['{"counts": {"__proto__": 7}}']);
    const prediction = await new Predict(Counts).call({ text: "x" }, { lm });
    expect(ownEntries(prediction.counts)).toEqual([["__proto__", 7]]);
  });

  it("keeps the key when a record with dates is written for the prompt (demos, inputs)", () => {
    const schema = z.record(z.string(), t.date());
    const value = Object.defineProperty({}, "__proto__", { value: Temporal.PlainDate.from("2024-05-06"), enumerable: true });
    const wire = valueToWire(schema, value) as object;
    expect(Object.getPrototypeOf(wire)).toBe(Object.prototype);
    expect(ownEntries(wire)).toEqual([["__proto__", "2024-05-06"]]);
    const demo = new FewShotExample({ input: { text: "x" }, output: { counts: JSON.parse('{"__proto__": 1}') as Record<string, number> } });
    const prompt = new Predict(Counts, { demos: [demo] }).prompt();
    expect(prompt.messages({ text: "y" })[0]!.content).toContain('{"counts":{"__proto__":1}}');
  });
});
