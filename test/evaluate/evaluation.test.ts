import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import {
  Evaluation, FewShotExample, Instrumentation, LMError, Module, Predict, Signature, ValidationError, resetConfiguration,
  type TypelmEvent,
} from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative", "neutral"]) };
}

const LABELS = ["positive", "negative", "neutral"] as const;

afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
});

/** Example n: gold label LABELS[n % 3]; the sentence carries n so the scripted model can read it. */
function examples(count: number): FewShotExample[] {
  return Array.from({ length: count }, (_, n) => new FewShotExample({
    input: { sentence: `sentence number ${n}` }, output: { sentiment: LABELS[n % 3]! }, id: `test-${n}`,
  }));
}

function numberIn(inputs: Record<string, unknown> | undefined): number {
  return Number(/(\d+)/.exec(String(inputs?.["sentence"]))![1]);
}

describe("Evaluation", () => {
  it("returns one row per example out of 1,000 with 10% injected failures, each marked with its error and counted wrong", async () => {
    // n % 20 === 3: unparseable reply; n % 20 === 13: provider error (10% failed); n % 10 === 5: a wrong label.
    const lm = new ScriptedLM((req) => {
      const n = numberIn(req.inputs);
      if (n % 20 === 3) return "I would rather not answer in JSON.";
      if (n % 20 === 13) throw new LMError(`openai request failed: HTTP 500 for example ${n}`, { status: 500, retryable: true, provider: "openai", attempts: 4 });
      if (n % 10 === 5) return { sentiment: LABELS[(n + 1) % 3]! };
      return { sentiment: LABELS[n % 3]! };
    });
    const m = new Predict(Classify).configure((c) => { c.lm = lm; });
    const report = await new Evaluation({ concurrency: 16, record: false, progress: false })
      .evaluate({ moduleInstance: m, testExamples: examples(1000), metrics: ["accuracy"] });

    expect(report.results).toHaveLength(1000);
    expect(report.results.map((r) => r.index)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(report.failures).toHaveLength(100);
    const unparseable = report.results[3]!;
    expect(unparseable.error).toMatch(/^OutputError: /);
    expect(unparseable.prediction).toBeNull();
    expect(unparseable.scores).toEqual({ accuracy: 0 });
    expect(unparseable.exampleId).toBe("test-3");
    // The tokens a failed call spent still count.
    expect(unparseable.inputTokens).toBeGreaterThan(0);
    expect(unparseable.outputTokens).toBe(Math.ceil("I would rather not answer in JSON.".length / 4));
    expect(report.results[13]!.error).toBe("LMError: openai request failed: HTTP 500 for example 13");
    expect(report.results[4]!).toMatchObject({ error: null, prediction: { sentiment: "negative" }, scores: { accuracy: 1 }, expected: { sentiment: "negative" } });
    // 100 failed + 100 wrong labels out of 1,000.
    expect(report.accuracy).toBeCloseTo(0.8, 12);
    expect(report.metrics).toEqual({ accuracy: report.accuracy });
    expect(report.results[4]!.inputTokens).toBeGreaterThan(0);
    expect(report.inputTokens).toBe(report.results.reduce((s, r) => s + r.inputTokens, 0));
  });

  it("rows have exactly the documented fields", async () => {
    const m = new Predict(Classify).configure((c) => { c.lm = new ScriptedLM([{ sentiment: "positive" }]); });
    const report = await new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance: m, testExamples: examples(1) });
    expect(Object.keys(report.results[0]!).sort()).toEqual(
      ["cost", "durationMs", "error", "exampleId", "expected", "index", "inputTokens", "inputs", "outputTokens", "prediction", "scores"],
    );
    expect(report.results[0]!.inputs).toEqual({ sentence: "sentence number 0" });
    expect(report.runId).toBeNull();
  });

  it("records a metric that returns NaN or throws as the example's failure, scored 0, and the run goes on", async () => {
    const lm = new ScriptedLM((req) => ({ sentiment: LABELS[numberIn(req.inputs) % 3]! }));
    const m = new Predict(Classify).configure((c) => { c.lm = lm; });
    function picky(example: FewShotExample): number {
      const n = numberIn(example.input);
      if (n === 1) return Number.NaN;
      if (n === 2) throw new RangeError("cannot score this one");
      return 1;
    }
    const report = await new Evaluation({ record: false, progress: false })
      .evaluate({ moduleInstance: m, testExamples: examples(4), metrics: ["accuracy", picky] });
    expect(report.results.map((r) => r.error === null)).toEqual([true, false, false, true]);
    expect(report.results[1]!.error).toMatch(/^TypeError: Metric "picky" returned NaN/);
    expect(report.results[2]!.error).toBe('RangeError: metric "picky" threw: cannot score this one');
    // A failed example scores 0 on every metric, the built-in one included.
    expect(report.results[2]!.scores).toEqual({ accuracy: 0, picky: 0 });
    expect(report.metrics).toEqual({ accuracy: 0.5, picky: 0.5 });
    expect((report as unknown as Record<string, number>)["picky"]).toBe(0.5);
  });

  it("keeps a metric's feedback and passes it the example's trace", async () => {
    const lm = new ScriptedLM((req) => ({ sentiment: LABELS[numberIn(req.inputs) % 3]! }));
    const m = new Predict(Classify).configure((c) => { c.lm = lm; });
    const traces: number[] = [];
    const judged = (ex: FewShotExample, p: Record<string, unknown>, trace?: readonly unknown[]) => {
      traces.push(trace?.length ?? -1);
      return { score: 0.25, feedback: `expected ${String(ex.output["sentiment"])}, got ${String(p["sentiment"])}` };
    };
    const outcomes: unknown[] = [];
    const report = await new Evaluation({ record: false, progress: false })
      .evaluate({ moduleInstance: m, testExamples: examples(2), metrics: [judged], onExample: (o) => outcomes.push(o.feedback) });
    expect(traces).toEqual([1, 1]);
    expect(report.feedback).toEqual([{ judged: "expected positive, got positive" }, { judged: "expected negative, got negative" }]);
    expect(outcomes).toHaveLength(2);
    expect(report.metrics["judged"]).toBe(0.25);
  });

  it("refuses an unknown metric name before calling the model, listing the known names", async () => {
    const lm = new ScriptedLM([]);
    const m = new Predict(Classify).configure((c) => { c.lm = lm; });
    const run = new Evaluation({ record: false, progress: false })
      .evaluate({ moduleInstance: m, testExamples: examples(2), metrics: ["accuracy", "precision" as "accuracy"] });
    await expect(run).rejects.toThrow(ValidationError);
    await expect(run).rejects.toThrow(/Unknown metric "precision" at metrics\[1\]: expected one of "accuracy", "f1_score", "exact_match", "token_f1"/);
    expect(lm.requests).toHaveLength(0);
  });

  it("refuses an empty example list and an example missing an expected output field", async () => {
    const m = new Predict(Classify).configure((c) => { c.lm = new ScriptedLM([]); });
    const evaluation = new Evaluation({ record: false, progress: false });
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: [] })).rejects.toThrow(/testExamples is empty/);
    const one = [new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive" } })];
    await expect(evaluation.evaluate({ moduleInstance: { call: () => ({}) } as unknown as Predict, testExamples: one }))
      .rejects.toThrow("Evaluation.evaluate: moduleInstance must be a Module (Predict, ChainOfThought, your own Module subclass ...)");
    const missing = [
      new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive" } }),
      new FewShotExample({ input: { sentence: "b" }, output: {}, id: "b-1" }),
    ];
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: missing }))
      .rejects.toThrow('testExamples[1] (id "b-1") has no expected output fields');
    const partial = [
      new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive", topic: "x" } }),
      new FewShotExample({ input: { sentence: "b" }, output: { sentiment: "negative" } }),
    ];
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: partial }))
      .rejects.toThrow('testExamples[1] is missing expected output field "topic" (testExamples[0] has it)');
    // A plain object in the wrong shape, or null, is named by its position and shown.
    const misshapen = [one[0]!, { inputs: { sentence: "b" }, outputs: { sentiment: "negative" } }] as unknown as FewShotExample[];
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: misshapen })).rejects.toThrow(ValidationError);
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: misshapen })).rejects.toThrow(
      'testExamples[1] must be a FewShotExample or { input, output, id }; received {"inputs":{"sentence":"b"},"outputs":{"sentiment":"negative"}} (FewShotExample input must be an object keyed by input field names)',
    );
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: [null] as unknown as FewShotExample[] }))
      .rejects.toThrow("testExamples[0] must be a FewShotExample or { input, output, id }; received null");
  });

  it("refuses an expected output field that a single predictor never produces (a typo would score every example 0)", async () => {
    const lm = new ScriptedLM([]);
    const m = new Predict(Classify).configure((c) => { c.lm = lm; });
    const typo = [new FewShotExample({ input: { sentence: "a" }, output: { sentment: "positive" }, id: "t-1" })];
    const evaluation = new Evaluation({ record: false, progress: false });
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: typo })).rejects.toThrow(ValidationError);
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: typo })).rejects.toThrow(
      'testExamples[0] (id "t-1") expects output field "sentment", which Predict (signature Classify) never produces; its output fields: sentiment',
    );
    await expect(evaluation.evaluate({ moduleInstance: m, testExamples: typo, metrics: ["accuracy", "f1_score"] })).rejects.toThrow(/never produces/);
    expect(lm.requests).toHaveLength(0);
    // A metric function reads the expected outputs its own way: not checked.
    const graded = new Predict(Classify).configure((c) => { c.lm = new ScriptedLM([{ sentiment: "positive" }]); });
    const own = await evaluation.evaluate({ moduleInstance: graded, testExamples: typo, metrics: [(e, p) => e.output.sentment === p.sentiment] });
    expect(own.metrics).toEqual({ metric0: 1 });
    // A composed module may return fields of its own making: those are not checked.
    class Renames extends Module {
      inner = new Predict(Classify);
      async forward(inputs: { sentence: string }) {
        const p = await this.inner.call(inputs);
        return { mood: p.sentiment };
      }
    }
    const composed = new Renames().configure((c) => { c.lm = new ScriptedLM([{ sentiment: "positive" }]); });
    const report = await evaluation.evaluate({ moduleInstance: composed, testExamples: [new FewShotExample({ input: { sentence: "a" }, output: { mood: "positive" } })] });
    expect(report.accuracy).toBe(1);
  });

  it("never changes the module it evaluates", async () => {
    const m = new Predict(Classify, { instruction: "Be careful." }).configure((c) => { c.lm = new ScriptedLM(() => ({ sentiment: "neutral" })); });
    const before = JSON.stringify(m.dumpState());
    await new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance: m, testExamples: examples(5) });
    expect(JSON.stringify(m.dumpState())).toBe(before);
  });

  it("runs at most `concurrency` examples at once", async () => {
    let running = 0, most = 0;
    class Slow extends Module {
      async forward(inputs: { sentence: string }): Promise<{ sentiment: string }> {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return { sentiment: LABELS[numberIn(inputs) % 3]! };
      }
    }
    const report = await new Evaluation({ concurrency: 3, record: false, progress: false }).evaluate({ moduleInstance: new Slow(), testExamples: examples(20) });
    expect(most).toBe(3);
    expect(report.accuracy).toBe(1);
  });

  it("emits start, one example event per example with running totals, and end", async () => {
    const events: TypelmEvent[] = [];
    Instrumentation.subscribe(/^evaluation\./, (e) => events.push(e));
    const lm = new ScriptedLM((req) => {
      const n = numberIn(req.inputs);
      return n === 1 ? "no json" : { sentiment: LABELS[n % 3]! };
    });
    const m = new Predict(Classify).configure((c) => { c.lm = lm; });
    await new Evaluation({ concurrency: 1, record: false, progress: false, name: "smoke" }).evaluate({ moduleInstance: m, testExamples: examples(4) });
    expect(events.map((e) => e.name)).toEqual(["evaluation.start", ...Array(4).fill("evaluation.example"), "evaluation.end"]);
    expect(events[0]!.payload).toMatchObject({ name: "smoke", total: 4, metrics: ["accuracy"] });
    const last = events[4]!.payload as Record<string, unknown>;
    expect(last).toMatchObject({ done: 4, total: 4, failures: 1, score: 0.75 });
    expect(events[2]!.payload).toMatchObject({ done: 2, failures: 1, score: 0.5, index: 1 });
    expect(typeof last["cost"]).toBe("number");
    expect(events[5]!.payload).toMatchObject({ ok: true, failures: 1, metrics: { accuracy: 0.75 } });
  });

  it("records a prediction that has no JSON form (a BigInt) as a failed row", async () => {
    class Big extends Module {
      async forward(): Promise<Record<string, unknown>> {
        return { sentiment: 10n };
      }
    }
    const report = await new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance: new Big(), testExamples: examples(2) });
    expect(report.failures).toHaveLength(2);
    expect(report.results[0]!.error).toMatch(/^TypeError: Big\.call returned a prediction with no JSON form: /);
    expect(report.accuracy).toBe(0);
  });

  it("refuses a concurrency that is not a positive integer", () => {
    expect(() => new Evaluation({ concurrency: 0 })).toThrow(/concurrency must be a positive integer; received 0/);
  });
});
