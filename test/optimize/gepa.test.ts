import { describe, it, expect } from "@jest/globals";
import { Instrumentation } from "../../lib/instrument/bus.js";
import { FewShotExample, GEPA, LabStore, ValidationError } from "../../lib/index.js";
import type { Metric, OptimizationRun, Trial } from "../../lib/index.js";
import { display } from "../../lib/notebook/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import type { ScriptedRequest } from "../../lib/testing/index.js";
import { readPrompt } from "../../lib/testing/read-prompt.js";
import { feedbackMetric, makeToneExamples, reflector, TONE_PHRASE, TopicAndTone, twoRuleModel } from "./gepa-task.js";
import { RULE_PHRASE, useTempLab } from "./task.js";

const train = makeToneExamples(30, 1, "train");
const val = makeToneExamples(12, 2, "val");
const test = makeToneExamples(40, 3, "test");

const labPath = useTempLab();

/**
 * The metric, counting the calls made to it: scoring calls (three arguments: a program run scored,
 * what the budget counts) and GEPA's feedback calls (a fourth argument, not a scored run).
 */
function counted(metric: Metric): { metric: Metric; calls: () => number; feedbackCalls: () => number } {
  let calls = 0;
  let feedbackCalls = 0;
  const wrapped: Metric = (ex, p, t, predictor) => {
    if (predictor === undefined) calls++;
    else feedbackCalls++;
    return metric(ex, p, t, predictor);
  };
  Object.defineProperty(wrapped, "name", { value: metric.name });
  return { metric: wrapped, calls: () => calls, feedbackCalls: () => feedbackCalls };
}

function program() {
  const lm = twoRuleModel();
  return { lm, program: new TopicAndTone().configure((c) => { c.lm = lm; }) };
}

/** Share of held-out examples with both fields right, calling the module directly. */
async function heldOut(m: TopicAndTone): Promise<number> {
  let right = 0;
  for (const ex of test) {
    const p = await m.call(ex.input as { text: string });
    if (p.label === ex.output.label && p.tone === ex.output.tone) right++;
  }
  return right / test.length;
}

const lastSpent = (run: OptimizationRun) => run.trials[run.trials.length - 1]!.budgetSpent;

describe("GEPA on a two-predictor SimulatedLM task", () => {
  it.each([1, 7, 11])("finds both predictors' rules from feedback (seed %i), spending what it records and never more than the budget", async (seed) => {
    const { program: m } = program();
    const { metric, calls } = counted(feedbackMetric);
    const gepa = new GEPA({ metric, mode: "light", reflectionLM: new ScriptedLM(reflector()), seed });
    const tuned = await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    expect(tuned.topic.instruction).toContain(RULE_PHRASE);
    expect(tuned.tone.instruction).toContain(TONE_PHRASE);
    expect(await heldOut(m)).toBeLessThan(0.5);
    expect(await heldOut(tuned)).toBe(1);
    // The budget: light mode for 12 validation examples and 2 predictors is 12 + 6·(12 + 2·3·2) = 156.
    expect(run.config.maxMetricCalls).toBe(156);
    expect(calls()).toBeLessThanOrEqual(156);
    expect(calls()).toBe(run.summary.metricCalls);
    expect(calls()).toBe(lastSpent(run));
    // The module given is untouched.
    expect(m.topic.instruction).toBe("Label the text.");
    expect(m.tone.instruction).toBe("Say how the text sounds.");
    expect(run.status).toBe("completed");
    expect(run.summary.seedReturned).toBe(false);
  });

  it("records each candidate with its parents, the predictor changed, the instruction, minibatch scores before and after, per-example validation scores and budget", async () => {
    const { program: m } = program();
    const gepa = new GEPA({ metric: feedbackMetric, mode: "light", reflectionLM: new ScriptedLM(reflector()), seed: 7 });
    await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    const stored = LabStore.open().run(run.id) as OptimizationRun;
    expect(stored.trials.map((t) => [t.kind, t.parents, t.budgetSpent])).toEqual(run.trials.map((t) => [t.kind, t.parents, t.budgetSpent]));
    const [seedTrial, ...rest] = stored.trials;
    expect(seedTrial!.kind).toBe("seed");
    expect(seedTrial!.budgetSpent).toBe(12);
    expect(seedTrial!.exampleScores!.map((e) => e.exampleId)).toEqual(val.map((e) => e.id));
    const candidates = rest.filter((t) => t.kind === "candidate");
    expect(candidates.length).toBeGreaterThanOrEqual(2);
    for (const c of candidates) {
      const changed = c.data.predictor as string;
      const parent = stored.trials[c.parents[0]!]!;
      expect(c.instructions[changed]).not.toBe(parent.instructions[changed]);
      for (const p of Object.keys(c.instructions)) if (p !== changed) expect(c.instructions[p]).toBe(parent.instructions[p]);
      const before = c.data.minibatchBefore as number[];
      const after = c.data.minibatchAfter as number[];
      expect(before).toHaveLength(3);
      expect(after.reduce((a, b) => a + b, 0)).toBeGreaterThan(before.reduce((a, b) => a + b, 0));
      expect(c.exampleScores).toHaveLength(12);
      expect(c.score).toBeCloseTo(c.exampleScores!.reduce((a, e) => a + e.score, 0) / 12, 10);
      expect(c.lmCalls).toBeGreaterThan(0);
      expect(c.inputTokens).toBeGreaterThan(0);
    }
    // Spent budget grows by exactly 2·3 per proposal plus 12 per accepted candidate.
    for (let i = 1; i < stored.trials.length; i++) {
      const t = stored.trials[i]!;
      const step = stored.trials[i]!.budgetSpent - stored.trials[i - 1]!.budgetSpent;
      if (t.data.merge === undefined) expect(step).toBe(t.kind === "candidate" ? 18 : t.data.minibatchAfter === null ? 3 : 6);
    }
    expect(stored.bestTrial).toBe(run.bestTrial);
    expect(stored.score).toBe(1);
  });

  it("stops before a step that cannot fit: with 35 metric calls it never spends more, and what is left is less than one step", async () => {
    for (const seed of [1, 2, 3]) {
      const { program: m } = program();
      const { metric, calls } = counted(feedbackMetric);
      const gepa = new GEPA({ metric, maxMetricCalls: 35, reflectionLM: new ScriptedLM(reflector()), seed, useMerge: false });
      await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
      expect(calls()).toBeLessThanOrEqual(35);
      expect(35 - calls()).toBeLessThan(2 * 3 + 12);
      expect(calls()).toBe(lastSpent(gepa.lastRun!));
      expect(gepa.lastRun!.summary.stopped).toBe("budget");
    }
  });

  it.each([
    // 12 (seed) + 2 rejected proposals × 2·3 = 24; 17 left cannot hold a step's worst case (2·3 + 12 = 18).
    [41, 24],
    // One more call: the third proposal fits, is accepted and spends the budget exactly (24 + 18).
    [42, 42],
  ])("with maxMetricCalls %i spends exactly %i metric calls (a step starts only when its worst case fits)", async (budget, expected) => {
    const { program: m } = program();
    const { metric, calls } = counted(feedbackMetric);
    const good = reflector();
    let n = 0;
    // Two proposals that change nothing useful (scored and rejected), then the reflector that reads the feedback.
    const reflection = new ScriptedLM((r: ScriptedRequest) => (n++ < 2 ? { newInstruction: "Be accurate." } : good(r)));
    const gepa = new GEPA({ metric, maxMetricCalls: budget, reflectionLM: reflection, seed: 1, useMerge: false });
    await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    expect(run.trials.map((t) => t.kind)).toEqual(expected === 24 ? ["seed", "rejected", "rejected"] : ["seed", "rejected", "rejected", "candidate"]);
    expect(calls()).toBe(expected);
    expect(lastSpent(run)).toBe(expected);
  });

  it("emits optimizer.start, one optimizer.trial per recorded trial, and optimizer.end", async () => {
    const names: string[] = [];
    Instrumentation.subscribe(/^optimizer\./, (e) => { names.push(e.name); });
    const { program: m } = program();
    const gepa = new GEPA({ metric: feedbackMetric, reflectionLM: new ScriptedLM(reflector()), seed: 7 });
    await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    expect(names).toEqual(["optimizer.start", ...gepa.lastRun!.trials.map(() => "optimizer.trial"), "optimizer.end"]);
  });
});

describe("GEPA with a reflection LM that helps nothing", () => {
  it("returns the seed program and says so in lastRun", async () => {
    const { program: m } = program();
    // Proposes text without either rule.
    const useless = new ScriptedLM(() => ({ newInstruction: "Be accurate and think carefully." }));
    const gepa = new GEPA({ metric: feedbackMetric, maxMetricCalls: 120, reflectionLM: useless, seed: 3 });
    const tuned = await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    expect(tuned.topic.instruction).toBe("Label the text.");
    expect(tuned.tone.instruction).toBe("Say how the text sounds.");
    expect(run.summary.seedReturned).toBe(true);
    expect(run.summary.note).toMatch(/seed program is returned/);
    expect(run.bestTrial).toBe(0);
    expect(run.trials.slice(1).every((t) => t.kind === "rejected")).toBe(true);
    expect(run.trials.length).toBeGreaterThan(5);
    expect(lastSpent(run)).toBeLessThanOrEqual(120);
  });
});

describe("GEPA bad input", () => {
  it("refuses a budget smaller than one validation pass before calling any model", async () => {
    const { lm, program: m } = program();
    const reflection = new ScriptedLM(reflector());
    const gepa = new GEPA({ metric: feedbackMetric, maxMetricCalls: 11, reflectionLM: reflection });
    const attempt = gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val }))
      .rejects.toThrow(/maxMetricCalls is 11, but scoring the seed program once on the 12 validation examples takes 12 metric calls; give at least 30/);
    expect(lm.requests).toHaveLength(0);
    expect(reflection.requests).toHaveLength(0);
  });

  it("with room for the seed's validation pass but not one reflective step, returns the seed and says the budget was too small", async () => {
    const { lm, program: m } = program();
    const reflection = new ScriptedLM(reflector());
    // 12 validation calls for the seed; a step needs 2·3 + 12 = 18 more, and only 17 are left.
    const gepa = new GEPA({ metric: feedbackMetric, maxMetricCalls: 29, reflectionLM: reflection, seed: 1 });
    const result = await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    expect(run.trials.map((t) => t.kind)).toEqual(["seed"]);
    expect(reflection.requests).toHaveLength(0);
    expect(lm.requests.length).toBeGreaterThan(0);
    expect(result.namedPredictors().map(([, p]) => p.instruction)).toEqual(m.namedPredictors().map(([, p]) => p.instruction));
    expect(run.summary).toMatchObject({ seedReturned: true, stopped: "budget", proposals: 0, metricCalls: 12, maxMetricCalls: 29 });
    // Not "no candidate scored higher": none was tried, and the note says what budget would allow one.
    expect(run.summary.note).toMatch(/maxMetricCalls 29 left 17 metric calls after the seed's validation pass; one reflective step needs up to 18 \(2×3 \+ 12\), so no candidate was tried and the seed program is returned; give at least 30/);
  });

  it("refuses mode and maxMetricCalls together, an unknown mode and a bad candidateSelection", () => {
    expect(() => new GEPA({ mode: "light", maxMetricCalls: 100 })).toThrow(/mode or maxMetricCalls, not both/);
    expect(() => new GEPA({ mode: "huge" as "light" })).toThrow(/mode "huge" is not known/);
    expect(() => new GEPA({ candidateSelection: "random" as "best" })).toThrow(/candidateSelection must be "pareto" or "best"/);
    expect(() => new GEPA({ maxMetricCalls: 0 })).toThrow(/maxMetricCalls must be an integer ≥ 1/);
  });

  it("with a metric that returns a bare score, reflects on the expected and the actual outputs", async () => {
    const { program: m } = program();
    const reflection = new ScriptedLM(reflector());
    const bare: Metric = function bare(ex, p) {
      return (p.label === ex.output.label ? 0.5 : 0) + (p.tone === ex.output.tone ? 0.5 : 0);
    };
    const gepa = new GEPA({ metric: bare, maxMetricCalls: 60, reflectionLM: reflection, seed: 1 });
    await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    expect(reflection.requests.length).toBeGreaterThan(0);
    const sent = readPrompt(reflection.requests[0]!.messages).inputs.examplesWithFeedback as string;
    // The first minibatch of the run, as the trial recorded it.
    const first = gepa.lastRun!.trials[1]!;
    const ex = train.find((e) => e.id === (first.data.minibatch as string[])[0])!;
    expect(sent).toContain(`Expected outputs: ${JSON.stringify(ex.output)}`);
    expect(sent).toContain("the program's outputs: {\"label\":\"animal\",\"tone\":\"calm\"}");
    expect(gepa.lastRun!.status).toBe("completed");
  });

  it("scores an example whose metric throws 0 with its error; a step fails (recorded, its calls counted) only when more than half its minibatch does, and the run goes on", async () => {
    const { program: m } = program();
    const { metric, calls } = counted(function judge(ex, p) {
      if (String(ex.id).startsWith("train") && ex.output.tone === "loud") throw new RangeError("no tone judge for loud texts");
      return feedbackMetric(ex, p);
    });
    const gepa = new GEPA({ metric, maxMetricCalls: 80, reflectionLM: new ScriptedLM(reflector()), seed: 2, useMerge: false });
    await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    const failed = run.trials.filter((t) => t.error !== null);
    expect(failed.length).toBeGreaterThan(0);
    for (const t of failed) {
      expect(t.error).toMatch(/^TrialError: [23] of 3 examples failed \(more than half\), so the trial has no score; first: example train-\d+: RangeError: metric "judge" threw: no tone judge for loud texts$/);
      // The parent's minibatch was run (3 calls) before its failures ended the step; its scores are kept.
      expect(t.budgetSpent - run.trials[t.index - 1]!.budgetSpent).toBe(3);
      expect(t.exampleScores!.filter((e) => e.error !== null).length).toBeGreaterThanOrEqual(2);
    }
    // A step with one loud example of three went on: that example scored 0.
    const loud = new Set(train.filter((e) => e.output.tone === "loud").map((e) => e.id));
    const oneLoud = run.trials.filter((t) => t.error === null && t.kind !== "seed" && (t.data.minibatch as string[]).filter((id) => loud.has(id)).length === 1);
    expect(oneLoud.length).toBeGreaterThan(0);
    for (const t of oneLoud) {
      const at = (t.data.minibatch as string[]).findIndex((id) => loud.has(id));
      expect((t.data.minibatchBefore as number[])[at]).toBe(0);
    }
    expect(run.status).toBe("completed");
    expect(calls()).toBeLessThanOrEqual(80);
    expect(lastSpent(run)).toBeLessThanOrEqual(80);
    expect(80 - lastSpent(run)).toBeLessThan(2 * 3 + 12);
  });

  it("records a reflection reply that does not parse as a failed proposal and goes on to find both rules", async () => {
    const { program: m } = program();
    const good = reflector();
    let n = 0;
    const flaky = new ScriptedLM((request: ScriptedRequest) => (n++ === 0 ? "I would rather not say." : good(request)));
    const gepa = new GEPA({ metric: feedbackMetric, mode: "light", reflectionLM: flaky, seed: 7 });
    const tuned = await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    const failed = run.trials.filter((t) => t.error !== null);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.kind).toBe("rejected");
    expect(failed[0]!.error).toMatch(/newInstruction|parse|JSON|reply/i);
    expect(failed[0]!.budgetSpent - run.trials[failed[0]!.index - 1]!.budgetSpent).toBe(3);
    expect(run.summary.failedTrials).toBe(1);
    expect(tuned.topic.instruction).toContain(RULE_PHRASE);
    expect(tuned.tone.instruction).toContain(TONE_PHRASE);
  });
});
