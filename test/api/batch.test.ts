/** "Many calls at once": program.batch on a predictor and on a module, imported by package name (dist/). */
import { describe, expect, test } from "@jest/globals";
import { z } from "zod";
import { ChainOfThought, Module, OutputError, Prediction, Signature } from "typelm";
import type { BatchResult } from "typelm";
import { ScriptedLM } from "typelm/testing";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

const lm = () => new ScriptedLM((r) => {
  const sentence = String(r.inputs?.sentence);
  if (sentence === "???") return "not a reply";
  return { reasoning: "the words say so", sentiment: sentence.includes("bad") ? "negative" : "positive" };
});

describe("program.batch", () => {
  test("a predictor's batch: one typed result per input, in order; a failure is a result", async () => {
    const program = new ChainOfThought(Classify).configure((c) => { c.lm = lm(); });
    const results = await program.batch([{ sentence: "good day" }, { sentence: "???" }, { sentence: "bad day" }], { concurrency: 2, progress: false });
    const labels = results.map((r) => (r.ok ? r.value.sentiment : null));
    expect(labels).toEqual(["positive", null, "negative"]);
    expect(results[0]!.ok && results[0]!.value).toBeInstanceOf(Prediction);
    expect(results[1]!.ok === false && results[1]!.error).toBeInstanceOf(OutputError);
  });

  test("a module's batch, and an empty list", async () => {
    class Twice extends Module<{ sentence: string }, { first: string; second: string }> {
      classify = new ChainOfThought(Classify);
      async forward(inputs: { sentence: string }) {
        const a = await this.classify.call(inputs);
        const b = await this.classify.call({ sentence: `${inputs.sentence}!` });
        return { first: a.sentiment, second: b.sentiment };
      }
    }
    const program = new Twice().configure((c) => { c.lm = lm(); });
    const results: BatchResult<{ first: string; second: string }>[] = await program.batch([{ sentence: "bad" }, { sentence: "fine" }], { progress: false });
    expect(results).toEqual([{ ok: true, value: { first: "negative", second: "negative" } }, { ok: true, value: { first: "positive", second: "positive" } }]);
    expect(await program.batch([], { progress: false })).toEqual([]);
  });
});
