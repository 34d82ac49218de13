// The optimizers' shared scoring: per-example errors, the more-than-half rule, the score memo, and
// the recorder's maxCost mechanism.
import { describe, it, expect } from "@jest/globals";
import { Predict } from "../../lib/index.js";
import type { Metric } from "../../lib/index.js";
import { ScoreMemo, instructionsKey } from "../../lib/optimize/memo.js";
import { RunRecorder, TrialError } from "../../lib/optimize/recorder.js";
import { scoreOn } from "../../lib/optimize/score.js";
import { configKey, type Candidates } from "../../lib/optimize/candidates.js";
import { LabStore } from "../../lib/store/lab-store.js";
import type { OptimizationRun } from "../../lib/store/records.js";
import { SimulatedLM } from "../../lib/testing/index.js";
import { makeExamples, RULE_PHRASE, taskModel, Topic, useTempLab } from "./task.js";

useTempLab();

const examples = makeExamples(6, 5, "ex").map((example) => ({ example, id: example.id! }));
const program = (lm: SimulatedLM) => new Predict(Topic, { instruction: `Please ${RULE_PHRASE}.` }).configure((c) => { c.lm = lm; });
const right: Metric = function right(ex, p) { return p.label === ex.output.label; };

/** A metric that misbehaves on the examples whose id is in `bad`: throwing, or returning `value`. */
function misbehaving(bad: readonly string[], value?: unknown): Metric {
  return function judge(ex, p) {
    if (bad.includes(ex.id!)) {
      if (value === undefined) throw new RangeError(`cannot judge ${ex.id}`);
      return value as number;
    }
    return p.label === ex.output.label;
  };
}

describe("scoreOn: per-example errors", () => {
  it("scores an example whose metric throws 0 with its error and keeps the others' scores (the trial is not failed)", async () => {
    const lm = taskModel();
    const r = await scoreOn(program(lm), examples, misbehaving(["ex-1", "ex-4"]), 4);
    expect(r.exampleScores.map((e) => e.score)).toEqual([1, 0, 1, 1, 0, 1]);
    expect(r.exampleScores[1]).toEqual({ exampleId: "ex-1", score: 0, error: 'RangeError: metric "judge" threw: cannot judge ex-1' });
    expect(r.exampleScores.filter((e) => e.error !== null).map((e) => e.exampleId)).toEqual(["ex-1", "ex-4"]);
    expect(r.score).toBeCloseTo(4 / 6, 10);
    expect(r.failures).toEqual(['ex-1: RangeError: metric "judge" threw: cannot judge ex-1', 'ex-4: RangeError: metric "judge" threw: cannot judge ex-4']);
    expect(r).toMatchObject({ reused: 0, ran: 6 });
  });

  it.each([[Number.NaN, "NaN"], [7, "7"], ["x", 'string "x"']])("a metric returning %p is that example's error, under the same rule", async (value, shown) => {
    const r = await scoreOn(program(taskModel()), examples, misbehaving(["ex-2"], value), 4);
    expect(r.exampleScores[2]!.score).toBe(0);
    expect(r.exampleScores[2]!.error).toBe(`TypeError: Metric "judge" returned ${shown}; expected a number in [0, 1], a boolean, or { score, feedback }`);
    expect(r.exampleScores.filter((e) => e.error === null)).toHaveLength(5);
  });

  it("exactly half failing still scores; more than half throws a TrialError carrying every example's score and error", async () => {
    const half = await scoreOn(program(taskModel()), examples, misbehaving(["ex-0", "ex-1", "ex-2"]), 4);
    expect(half.score).toBeCloseTo(3 / 6, 10);
    const attempt = scoreOn(program(taskModel()), examples, misbehaving(["ex-0", "ex-1", "ex-2", "ex-5"]), 4);
    await expect(attempt).rejects.toThrow(TrialError);
    const error = (await attempt.catch((e: unknown) => e)) as TrialError;
    expect(error.message).toBe('4 of 6 examples failed (more than half), so the trial has no score; first: example ex-0: RangeError: metric "judge" threw: cannot judge ex-0');
    expect(error.partial.exampleScores!.map((e) => [e.exampleId, e.score, e.error !== null])).toEqual([
      ["ex-0", 0, true], ["ex-1", 0, true], ["ex-2", 0, true], ["ex-3", 1, false], ["ex-4", 1, false], ["ex-5", 0, true],
    ]);
  });

  it("a program call that fails is that example's error too", async () => {
    // A model that answers something unparseable for texts holding "otter".
    const lm = new SimulatedLM({ rules: [{ phrase: RULE_PHRASE, answer: (i) => (String(i.text).includes(examples[3]!.example.input.text as string) ? "no json here" : { label: "animal" }) }] });
    const r = await scoreOn(program(lm), examples, right, 4);
    expect(r.exampleScores[3]!.score).toBe(0);
    expect(r.exampleScores[3]!.error).toMatch(/^OutputError: /);
    expect(r.exampleScores.filter((e) => e.error !== null)).toHaveLength(1);
  });
});

describe("scoreOn with a ScoreMemo", () => {
  it("scores a (configuration, example) pair once: a second scoring reuses it without a model or metric call", async () => {
    const lm = taskModel();
    let metricCalls = 0;
    const counted: Metric = function right(ex, p) { metricCalls++; return p.label === ex.output.label; };
    const memo = new ScoreMemo();
    const first = await scoreOn(program(lm), examples.slice(0, 4), counted, 4, { memo: { memo, config: "A" } });
    expect(first).toMatchObject({ reused: 0, ran: 4 });
    expect(lm.requests).toHaveLength(4);
    // Two known, two new: only the new ones are run; the order of the entries is the order given.
    const ran: number[] = [];
    const second = await scoreOn(program(lm), examples.slice(2, 6), counted, 4, { memo: { memo, config: "A" }, beforeRun: (n) => ran.push(n) });
    expect(second).toMatchObject({ reused: 2, ran: 2 });
    expect(ran).toEqual([2]);
    expect(second.exampleScores.map((e) => e.exampleId)).toEqual(["ex-2", "ex-3", "ex-4", "ex-5"]);
    expect(lm.requests).toHaveLength(6);
    expect(metricCalls).toBe(6);
    // Another configuration is scored anew.
    const other = await scoreOn(program(lm), examples.slice(0, 2), counted, 4, { memo: { memo, config: "B" } });
    expect(other.reused).toBe(0);
    expect(lm.requests).toHaveLength(8);
    expect(memo.size).toBe(8);
  });

  it("keeps failed examples with their error, so a repeated trial fails the same way without a call", async () => {
    const lm = taskModel();
    const memo = new ScoreMemo();
    const metric = misbehaving(["ex-0", "ex-1", "ex-2", "ex-3"]);
    await expect(scoreOn(program(lm), examples, metric, 4, { memo: { memo, config: "A" } })).rejects.toThrow(TrialError);
    const calls = lm.requests.length;
    const again = await scoreOn(program(lm), examples, metric, 4, { memo: { memo, config: "A" } }).catch((e: unknown) => e as TrialError);
    expect(again).toBeInstanceOf(TrialError);
    expect((again as TrialError).partial.reused).toBe(6);
    expect(lm.requests.length).toBe(calls);
  });

  it("rememberTrial loads a recorded trial's scores (resume); a pair keeps its first score", () => {
    const memo = new ScoreMemo();
    memo.rememberTrial("A", { exampleScores: [{ exampleId: "x", score: 1, error: null }, { exampleId: "y", score: 0, error: "E: no" }] });
    memo.set("A", "x", { score: 0, error: null });
    expect(memo.get("A", "x")).toEqual({ score: 1, error: null });
    expect(memo.get("A", "y")).toEqual({ score: 0, error: "E: no" });
    expect(memo.get("B", "x")).toBeUndefined();
  });

  it("configKey is the same for choices that build the same program; instructionsKey ignores the order of paths", () => {
    const candidates: Candidates = { instructions: { self: ["a", "b", "a"] }, demoSets: { self: [[], [], [examples[0]!.example]] } };
    expect(configKey(candidates, { self: { instruction: 0, demos: 0 } })).toBe(configKey(candidates, { self: { instruction: 2, demos: 1 } }));
    expect(configKey(candidates, { self: { instruction: 0, demos: 0 } })).not.toBe(configKey(candidates, { self: { instruction: 1, demos: 0 } }));
    expect(configKey(candidates, { self: { instruction: 0, demos: 0 } })).not.toBe(configKey(candidates, { self: { instruction: 0, demos: 2 } }));
    expect(instructionsKey({ a: "1", b: "2" })).toBe(instructionsKey({ b: "2", a: "1" }));
  });
});

describe("RunRecorder: failed trials, reused counts and maxCost", () => {
  it("records a TrialError's per-example scores and reused count on the failed trial", async () => {
    const rec = RunRecorder.start("Test", {}, undefined);
    const t = await rec.trial({ kind: "trial", choices: {} }, async () => {
      throw new TrialError("2 of 3 examples failed", { exampleScores: [{ exampleId: "a", score: 0, error: "E: x" }], reused: 1 });
    });
    expect(t).toMatchObject({ score: null, error: "TrialError: 2 of 3 examples failed", exampleScores: [{ exampleId: "a", score: 0, error: "E: x" }], reused: 1 });
    const ok = await rec.trial({ kind: "trial", choices: {} }, async () => ({ kind: "trial", choices: {}, instructions: {}, demoIds: {}, score: 1 }));
    expect(ok.reused).toBe(0);
    expect((LabStore.open().run(rec.id) as OptimizationRun).trials.map((x) => x.reused)).toEqual([1, 0]);
  });

  it("overCost is true once the trials' cost reaches maxCost (never without one, never while replaying), and the run ends 'stopped'", async () => {
    const rec = RunRecorder.start("Test", { a: 1 }, undefined);
    const costly = (cost: number) => rec.trial({ kind: "trial", choices: {} }, async () => {
      // The recorder measures usage: fake one priced call.
      const { recordUsage } = await import("../../lib/lm/usage-scope.js");
      recordUsage({ content: "", usage: { inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, provider: "p", model: "m", estimatedCost: cost, cached: false });
      return { kind: "trial", choices: {}, instructions: {}, demoIds: {}, score: 0.5 };
    });
    await costly(0.004);
    expect(rec.overCost(0.01)).toBe(false);
    expect(rec.overCost(undefined)).toBe(false);
    await costly(0.006);
    expect(rec.costSpent).toBeCloseTo(0.01, 12);
    expect(rec.overCost(0.01)).toBe(true);
    expect(rec.costSummary(0.01, true)).toMatchObject({ stopped: "maxCost", maxCost: 0.01, stoppedNote: expect.stringMatching(/stopped after trial 1: the trials cost \$0\.0100, reaching maxCost \$0\.01/) });
    rec.finish({ status: "stopped", score: 0.5, bestTrial: 0, summary: rec.costSummary(0.01, true) });
    expect(rec.run.status).toBe("stopped");
    expect(LabStore.open().run(rec.id)?.status).toBe("stopped");
    // Resumed with the trials still to replay, the limit is not checked until they are replayed.
    const resumed = RunRecorder.start("Test", { a: 1 }, rec.id);
    expect(resumed.overCost(0.001)).toBe(false);
    await resumed.trial({ kind: "trial", choices: {} }, async () => { throw new Error("not run"); });
    expect(resumed.overCost(0.001)).toBe(false);
    await resumed.trial({ kind: "trial", choices: {} }, async () => { throw new Error("not run"); });
    expect(resumed.overCost(0.001)).toBe(true);
    expect(resumed.overCost(0.02)).toBe(false);
  });
});
