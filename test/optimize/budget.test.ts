import { describe, it, expect, afterEach } from "@jest/globals";
import { configure, resetConfiguration } from "../../lib/config.js";
import { MIPROv2, Module, Predict } from "../../lib/index.js";
import { withUsage } from "../../lib/lm/usage-scope.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { candidateInstructions, makeExamples, proposals, taskModel, Topic } from "./task.js";

// The README's "MIPROv2 modes" table, restated by hand: N candidates, minibatch size, validation size.
const TABLE = {
  light: { N: 6, minibatch: 25, validation: 100 },
  balanced: { N: 12, minibatch: 35, validation: 300 },
  heavy: { N: 18, minibatch: 50, validation: 1000 },
} as const;
const FULL_EVAL_EVERY = 5;

/**
 * The README's formula for the LM calls with every pair asked (memo off): B, the bootstrap's teacher
 * runs, is what the run recorded (it depends on how many runs pass); I = ⌊N/2⌋ instructions with demos.
 */
function expectedCalls(mode: keyof typeof TABLE, o: { P: number; C: number; train: number; val: number; B: number }): number {
  const { N, minibatch, validation } = TABLE[mode];
  const I = Math.floor(N / 2);
  const T = Math.floor(Math.max(2 * (2 * o.P) * Math.log2(N), 1.5 * N));
  const V = Math.min(o.val, validation);
  const M = Math.min(minibatch, V);
  const E = Math.ceil(T / FULL_EVAL_EVERY);
  const propose = Math.ceil(Math.min(o.train, 20) / 10) + 1 + 1 + o.P + o.P * (I - 1);
  return o.C * o.B + propose + o.C * V + o.C * T * M + o.C * E * V;
}

const triedOf = (mipro: MIPROv2) => mipro.lastRun!.trials.find((t) => t.kind === "bootstrap")!.data.tried as number;

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

  it.each(["light", "balanced", "heavy"] as const)("%s mode makes the calls the README's budget says", async (mode) => {
    configure((c) => { c.lab = false; });
    const lm = taskModel();
    const promptModel = new ScriptedLM(proposals(candidateInstructions(1)));
    const mipro = new MIPROv2({ mode, kDemos: 2, seed: 3, promptModel, memo: false });
    const { usage } = await withUsage(() => mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: val }));
    const expected = expectedCalls(mode, { P: 1, C: 1, train: 30, val: 40, B: triedOf(mipro) });
    expect(triedOf(mipro)).toBeGreaterThan(0);
    expect(usage.calls).toBe(expected);
    expect(lm.requests.length + promptModel.requests.length).toBe(expected);
    expect(mipro.lastRun!.trials.reduce((n, t) => n + t.lmCalls, 0)).toBe(expected);
    expect(mipro.lastRun!.trials.filter((t) => t.kind === "minibatch")).toHaveLength(Math.floor(Math.max(4 * Math.log2(TABLE[mode].N), 1.5 * TABLE[mode].N)));
  }, 60000);

  it("counts every predictor of a two-step program (P = 2 predictors, C = 2 calls per run)", async () => {
    configure((c) => { c.lab = false; });
    const lm = taskModel();
    const promptModel = new ScriptedLM(proposals(candidateInstructions(1)));
    const program = new TwoSteps().configure((c) => { c.lm = lm; });
    const mipro = new MIPROv2({ mode: "light", kDemos: 2, seed: 3, promptModel, memo: false });
    const { usage } = await withUsage(() => mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val }));
    expect(usage.calls).toBe(expectedCalls("light", { P: 2, C: 2, train: 30, val: 40, B: triedOf(mipro) }));
    expect(Object.keys(mipro.lastRun!.trials.find((t) => t.kind === "minibatch")!.choices)).toEqual(["first", "second"]);
  }, 60000);
});
