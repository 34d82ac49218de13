// The optimizers' `batch` option: full-validation passes through the provider's batch service
// (against the fake provider), minibatches live, the same trials as a live run.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { GEPA, LM, MIPROv2, Predict, SimpleOptimizer, ValidationError, configure } from "../../lib/index.js";
import { ScriptedLM, startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { KEYWORDS, Topic, candidateInstructions, makeExamples, proposals } from "./task.js";

/** Labels the text by its keyword, except that every "tool" text is called "fruit" (so scores are not all 1). */
function answer(request: FakeRequest): Record<string, unknown> {
  const text = String(request.messages[request.messages.length - 1]?.content ?? "");
  const label = Object.keys(KEYWORDS).find((l) => KEYWORDS[l]!.some((k) => text.includes(k))) ?? "animal";
  return { label: label === "tool" ? "fruit" : label };
}

let fake: FakeProvider;
beforeAll(async () => { fake = await startFakeProvider({ defaultReply: answer }); });
afterAll(() => fake.close());

const lm = () => new LM("openai/gpt-4o-mini", { apiKey: "sk-optimizer-batch-key", baseURL: fake.openaiBaseURL, temperature: 0 });
const train = makeExamples(30, 11, "t");
const val = makeExamples(40, 12, "v");

/** What a run did at the provider: live requests, batches and the lines they held. */
async function atProvider<T>(fn: () => Promise<T>): Promise<{ result: T; live: number; batches: number[] }> {
  const before = { live: fake.requests.length, batches: fake.batches.length };
  const result = await fn();
  return { result, live: fake.requests.length - before.live, batches: fake.batches.slice(before.batches).map((b) => b.customIds.length) };
}

describe("optimizers with batch", () => {
  it("MIPROv2: baseline and full evaluations go through batches, minibatches stay live; the trials equal a live run's", async () => {
    configure((c) => { c.lab = false; });
    const run = (batch: boolean) => atProvider(async () => {
      const mipro = new MIPROv2({
        seed: 3, kDemos: 2, promptModel: new ScriptedLM(proposals(candidateInstructions(1))), progress: false,
        ...(batch ? { batch: { pollInterval: 0.01 } } : {}),
      });
      await mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm(); }), trainingExamples: train, validationExamples: val });
      return mipro.lastRun!;
    });
    const live = await run(false);
    const batched = await run(true);
    const scores = (r: typeof live.result) => r.trials.map((t) => [t.kind, t.score]);
    expect(scores(batched.result)).toEqual(scores(live.result));
    expect(batched.result.bestTrial).toBe(live.result.bestTrial);
    const full = batched.result.trials.filter((t) => (t.kind === "baseline" || t.kind === "full") && (t.exampleScores?.length ?? 0) > (t.reused ?? 0));
    expect(full.length).toBeGreaterThan(1);
    // One batch per baseline/full evaluation that ran examples (a one-step program: one round each).
    expect(batched.batches).toHaveLength(full.length);
    expect(batched.batches.every((n) => n > 0 && n <= 40)).toBe(true);
    // Everything else (bootstrap, minibatches) stayed live: fewer live requests by exactly the batched lines.
    expect(live.live - batched.live).toBe(batched.batches.reduce((a, b) => a + b, 0));
  }, 60000);

  it("SimpleOptimizer: every trial's scoring goes through a batch, only the bootstrap's teacher runs are live; the same trials", async () => {
    configure((c) => { c.lab = false; });
    const run = (batch: boolean) => atProvider(async () => {
      const simple = new SimpleOptimizer({ seed: 5, numTrials: 4, kDemos: 2, instructions: ["Label the text.", "Say which it is."], progress: false, ...(batch ? { batch: { pollInterval: 0.01 } } : {}) });
      await simple.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm(); }), trainingExamples: train, validationExamples: val });
      return simple.lastRun!;
    });
    const live = await run(false);
    const batched = await run(true);
    expect(batched.result.trials.map((t) => t.score)).toEqual(live.result.trials.map((t) => t.score));
    const teacherRuns = batched.result.trials.find((t) => t.kind === "bootstrap")!.lmCalls;
    expect(teacherRuns).toBeGreaterThan(0);
    expect(batched.live).toBe(teacherRuns);
    expect(batched.batches.length).toBeGreaterThan(0);
    expect(batched.batches.reduce((a, b) => a + b, 0)).toBe(live.live - teacherRuns);
  }, 60000);

  it("GEPA: validation passes go through batches, minibatches and reflection stay live; the same trials as live", async () => {
    configure((c) => { c.lab = false; });
    const metric = (ex: { output: Record<string, unknown> }, p: Record<string, unknown>) => (ex.output.label === p.label ? 1 : 0);
    const run = (batch: boolean) => atProvider(async () => {
      const gepa = new GEPA({
        metric, maxMetricCalls: 120, seed: 2, useMerge: false, progress: false,
        reflectionLM: new ScriptedLM(() => ({ newInstruction: "Label the text as animal, fruit or tool." })),
        ...(batch ? { batch: { pollInterval: 0.01 } } : {}),
      });
      await gepa.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm(); }), trainingExamples: train, validationExamples: val.slice(0, 12) });
      return gepa.lastRun!;
    });
    const live = await run(false);
    const batched = await run(true);
    expect(batched.result.trials.map((t) => [t.kind, t.score])).toEqual(live.result.trials.map((t) => [t.kind, t.score]));
    expect(batched.batches.length).toBeGreaterThan(0);
    expect(batched.batches.every((n) => n <= 12)).toBe(true);
    expect(live.live - batched.live).toBe(batched.batches.reduce((a, b) => a + b, 0));
    expect(batched.live).toBeGreaterThan(0); // the minibatches
  }, 60000);

  it("estimate prices the batched passes at the batch price: all of SimpleOptimizer's, MIPROv2's and GEPA's validation passes only", async () => {
    const program = () => new Predict(Topic).configure((c) => { c.lm = lm(); });
    const args = () => ({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
    const simple = (batch: boolean, kDemos: number) => new SimpleOptimizer({ seed: 5, numTrials: 4, kDemos, ...(batch ? { batch: true } : {}) }).estimate(args());
    // Without demos every call is a trial's scoring: all at the batch price.
    const [sLive, sBatch] = [await simple(false, 0), await simple(true, 0)];
    expect(sBatch.lmCalls).toBe(sLive.lmCalls);
    expect(sLive.cost!).toBeGreaterThan(0);
    expect(sBatch.cost!).toBeCloseTo(sLive.cost! / 2, 12);
    // With demos the bootstrap's teacher runs stay live: cheaper, but not half.
    const [dLive, dBatch] = [await simple(false, 2), await simple(true, 2)];
    expect(dBatch.lmCalls).toBe(dLive.lmCalls);
    expect(dBatch.cost!).toBeLessThan(dLive.cost!);
    expect(dBatch.cost!).toBeGreaterThan(dLive.cost! / 2);
    const promptModel = lm(); // priced (estimate calls no model)
    const mipro = (batch: boolean) => new MIPROv2({ seed: 3, kDemos: 2, promptModel, ...(batch ? { batch: true } : {}) }).estimate(args());
    const [mLive, mBatch] = [await mipro(false), await mipro(true)];
    expect(mBatch.lmCalls).toBe(mLive.lmCalls);
    expect(mBatch.inputTokens).toBe(mLive.inputTokens);
    // Cheaper, but not half: the bootstrap and the minibatches stay live.
    expect(mBatch.cost!).toBeLessThan(mLive.cost!);
    expect(mBatch.cost!).toBeGreaterThan(mLive.cost! / 2);
    // GEPA: its validation passes at the batch price; minibatches and reflection live.
    const gepa = (batch: boolean) => new GEPA({ maxMetricCalls: 120, reflectionLM: lm(), ...(batch ? { batch: true } : {}) }).estimate({ ...args(), validationExamples: val.slice(0, 12) });
    const [gLive, gBatch] = [gepa(false), gepa(true)];
    expect(gBatch.lmCalls).toBe(gLive.lmCalls);
    expect(gBatch.cost!).toBeLessThan(gLive.cost!);
    expect(gBatch.cost!).toBeGreaterThan(gLive.cost! / 2);
  });

  it("a bad batch option is refused when the optimizer is built", () => {
    expect(() => new MIPROv2({ batch: { maxRequestsPerBatch: 1.5 } })).toThrow(ValidationError);
    expect(() => new SimpleOptimizer({ batch: "on" as never })).toThrow(/batch must be true, false or/);
  });
});
