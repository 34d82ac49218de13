import { describe, it, expect, afterEach } from "@jest/globals";
import { configure, resetConfiguration } from "../../lib/config.js";
import { MIPROv2, Module, Predict } from "../../lib/index.js";
import type { FewShotExample, Metric } from "../../lib/index.js";
import { withUsage } from "../../lib/lm/usage-scope.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { candidateInstructions, makeExamples, proposals, taskModel, Topic } from "./task.js";

// The "Modes and budget" table of docs/optimizers.md, restated by hand: demo sets N, minibatch M, validation V.
const TABLE = {
  light: { N: 6, minibatch: 25, validation: 100 },
  balanced: { N: 12, minibatch: 35, validation: 300 },
  heavy: { N: 18, minibatch: 50, validation: 1000 },
} as const;
const FULL_EVAL_EVERY = 5;

/**
 * docs/optimizers.md's formula for the LM calls with every pair asked (memo off), for P predictors,
 * C calls per program run, a demo pool of n, `val` validation examples, k = kDemos > 0 and B teacher runs:
 * C·B + (⌈min(n, 20)/10⌉ + 2 + P + P·(I − 1)) + C·V·(1 + E) + C·T·M, with I = ⌊N/2⌋,
 * T = ⌊max(2·2P·log₂N, 1.5·N)⌋, V = min(val, mode's V), M = min(mode's M, V), E = ⌈T/5⌉.
 */
function expectedCalls(mode: keyof typeof TABLE, o: { P: number; C: number; n: number; val: number; B: number }): number {
  const { N, minibatch, validation } = TABLE[mode];
  const I = Math.floor(N / 2);
  const T = Math.floor(Math.max(2 * (2 * o.P) * Math.log2(N), 1.5 * N));
  const V = Math.min(o.val, validation);
  const M = Math.min(minibatch, V);
  const E = Math.ceil(T / FULL_EVAL_EVERY);
  const propose = Math.ceil(Math.min(o.n, 20) / 10) + 1 + 1 + o.P + o.P * (I - 1);
  return o.C * o.B + propose + o.C * V * (1 + E) + o.C * T * M;
}

/** The demo pool when validation examples are given: the training examples, less any whose inputs a validation example has (docs/optimizers.md, step 0). */
function poolSize(train: readonly FewShotExample[], val: readonly FewShotExample[]): number {
  const scored = new Set(val.map((e) => JSON.stringify(e.input)));
  return train.filter((e) => !scored.has(JSON.stringify(e.input))).length;
}

/**
 * docs/optimizers.md's estimate of B with half of the teacher runs passing: min(n, 2k + (k+1)·(N−3)),
 * with k = 3 and N − 1 bootstrapped sets (so N−2 in place of N−3) in a zero-shot run.
 */
function estimatedB(mode: keyof typeof TABLE, kDemos: number, n: number): number {
  const N = TABLE[mode].N;
  return kDemos === 0 ? Math.min(n, 2 * 3 + 4 * (N - 2)) : Math.min(n, 2 * kDemos + (kDemos + 1) * (N - 3));
}

class TwoSteps extends Module {
  first = new Predict(Topic);
  second = new Predict(Topic, { instruction: "Check the label." });
  async forward({ text }: { text: string }) {
    const a = await this.first.call({ text });
    return this.second.call({ text: `${text} ${a.label}` });
  }
}

afterEach(() => resetConfiguration());

describe("MIPROv2 LM calls per mode", () => {
  const train = makeExamples(30, 11, "train");
  const val = makeExamples(40, 12, "val");
  const n = poolSize(train, val);

  // With a metric that scores every run 0, no teacher run passes (a run is kept when its score is above
  // 0): every set runs on to the end of the pool, and each pool example is run once, so B = n, known in advance.
  it.each(["light", "balanced", "heavy"] as const)("%s mode makes the calls docs/optimizers.md's formula gives (B = n: no teacher run passes)", async (mode) => {
    configure((c) => { c.lab = false; });
    const lm = taskModel();
    const promptModel = new ScriptedLM(proposals(candidateInstructions(1)));
    const mipro = new MIPROv2({ mode, kDemos: 2, seed: 3, promptModel, memo: false, metric: () => 0 });
    const { usage } = await withUsage(() => mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: val }));
    const expected = expectedCalls(mode, { P: 1, C: 1, n, val: 40, B: n });
    expect(n).toBeGreaterThan(20); // so the observation step makes 2 calls
    expect(usage.calls).toBe(expected);
    expect(lm.requests.length + promptModel.requests.length).toBe(expected);
    expect(mipro.lastRun!.trials.reduce((sum, t) => sum + t.lmCalls, 0)).toBe(expected);
    expect(mipro.lastRun!.trials.filter((t) => t.kind === "minibatch")).toHaveLength(Math.floor(Math.max(4 * Math.log2(TABLE[mode].N), 1.5 * TABLE[mode].N)));
  }, 60000);

  it("counts every predictor of a two-step program (P = 2 predictors, C = 2 calls per run)", async () => {
    configure((c) => { c.lab = false; });
    const lm = taskModel();
    const promptModel = new ScriptedLM(proposals(candidateInstructions(1)));
    const program = new TwoSteps().configure((c) => { c.lm = lm; });
    const mipro = new MIPROv2({ mode: "light", kDemos: 2, seed: 3, promptModel, memo: false, metric: () => 0 });
    const { usage } = await withUsage(() => mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val }));
    expect(usage.calls).toBe(expectedCalls("light", { P: 2, C: 2, n, val: 40, B: n }));
    expect(lm.requests.length + promptModel.requests.length).toBe(usage.calls);
    expect(Object.keys(mipro.lastRun!.trials.find((t) => t.kind === "minibatch")!.choices)).toEqual(["first", "second"]);
  }, 60000);

  it("with teacher runs passing (the default threshold), B is the metric calls made before the first proposal, between kDemos and n", async () => {
    configure((c) => { c.lab = false; });
    const lm = taskModel();
    // B observed from outside the run: the metric is called once per teacher run, and the bootstrap
    // ends before the proposer is first asked.
    let metricCalls = 0;
    let B: number | undefined;
    const metric: Metric = function label(ex, p) { metricCalls++; return p.label === ex.output.label; };
    const reply = proposals(candidateInstructions(1));
    const promptModel = new ScriptedLM((request) => { B ??= metricCalls; return reply(request); });
    const mipro = new MIPROv2({ mode: "light", kDemos: 2, seed: 3, metric, promptModel, memo: false });
    const { usage } = await withUsage(() => mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: val }));
    expect(B).toBeGreaterThanOrEqual(2);
    expect(B).toBeLessThan(n); // some runs passed, so the pool did not run out
    expect(usage.calls).toBe(expectedCalls("light", { P: 1, C: 1, n, val: 40, B: B! }));
    expect(lm.requests.length + promptModel.requests.length).toBe(usage.calls);
  }, 60000);
});

describe("MIPROv2 budget() and estimate() against docs/optimizers.md", () => {
  const train = makeExamples(30, 11, "train");
  const val = makeExamples(40, 12, "val");
  const n = poolSize(train, val);

  it.each(["light", "balanced", "heavy"] as const)("%s: the budget's numbers, and estimate()'s LM calls with B at half the runs passing", async (mode) => {
    const { N, minibatch, validation } = TABLE[mode];
    for (const kDemos of [2, 0]) {
      const mipro = new MIPROv2({ mode, kDemos, promptModel: new ScriptedLM(proposals(candidateInstructions(1))) });
      const T = Math.floor(Math.max(2 * (kDemos === 0 ? 1 : 2) * Math.log2(N), 1.5 * N));
      const V = Math.min(40, validation);
      expect(mipro.budget(1, n, 40)).toEqual({
        mode, candidates: kDemos === 0 ? N : Math.floor(N / 2), demoSets: kDemos === 0 ? 1 : N, trials: T,
        minibatchSize: Math.min(minibatch, V), validationSize: V, fullEvalEvery: FULL_EVAL_EVERY,
        bootstrapRuns: estimatedB(mode, kDemos, n), proposerSets: kDemos === 0 ? N : 0,
      });
    }
    const program = new Predict(Topic).configure((c) => { c.lm = taskModel(); });
    const estimate = await new MIPROv2({ mode, kDemos: 2, promptModel: new ScriptedLM(proposals(candidateInstructions(1))) })
      .estimate({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    expect(estimate.lmCalls).toBe(expectedCalls(mode, { P: 1, C: 1, n, val: 40, B: estimatedB(mode, 2, n) }));
  });
});
