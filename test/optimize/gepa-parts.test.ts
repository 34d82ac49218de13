// GEPA: the metric's fourth argument (feedback per predictor), the evidence drawn among a
// predictor's calls, the score memo, validation on the training examples, maxCost and estimate.
import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, GEPA, LabStore, Module, Predict, Signature } from "../../lib/index.js";
import type { Metric, OptimizationRun, Trial } from "../../lib/index.js";
import type { MetricPredictorArg } from "../../lib/evaluate/metric.js";
import type { ExampleOutcome } from "../../lib/evaluate/run-example.js";
import type { LMRequest, LMResponse } from "../../lib/lm/types.js";
import { evidenceFor } from "../../lib/optimize/gepa/reflect.js";
import { Random } from "../../lib/random.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";
import type { ScriptedRequest } from "../../lib/testing/index.js";
import { feedbackMetric, makeToneExamples, reflector, TONE_PHRASE, TopicAndTone, twoRuleModel } from "./gepa-task.js";
import { labelOf, makeExamples, RULE_PHRASE, Topic, useTempLab } from "./task.js";

useTempLab();

const train = makeToneExamples(30, 1, "train");
const val = makeToneExamples(12, 2, "val");

const program = (lm = twoRuleModel()) => new TopicAndTone().configure((c) => { c.lm = lm; });
const same = (t: Trial) => { const { durationMs: _d, ...rest } = t; return rest; };
const sent = (r: ScriptedRequest) => r.inputs as { step: string; currentInstruction: string; examplesWithFeedback: string };

/**
 * Says which step is wrong only through the fourth argument: scoring calls get "Something is wrong.",
 * a call for predictor X gets X's rule when X's field is wrong. Records every fourth argument.
 */
function stepMetric(seen: MetricPredictorArg[], options: { throwFor?: string } = {}): Metric {
  return function stepMetric(ex, p, _trace, predictor) {
    const labelWrong = p.label !== ex.output.label;
    const toneWrong = p.tone !== ex.output.tone;
    const score = (2 - Number(labelWrong) - Number(toneWrong)) / 2;
    if (predictor === undefined) return { score, feedback: score === 1 ? "Right." : "Something is wrong." };
    seen.push(predictor);
    if (predictor.predictor === options.throwFor) throw new RangeError(`no feedback for ${predictor.predictor}`);
    if (predictor.predictor === "topic") return { score, feedback: labelWrong ? `label: expected "${String(ex.output.label)}". Rule for label: ${RULE_PHRASE}.` : "This step is right." };
    return { score, feedback: toneWrong ? `tone: expected "${String(ex.output.tone)}". Rule for tone: ${TONE_PHRASE}.` : "This step is right." };
  };
}

describe("GEPA's metric gets a fourth argument during reflection", () => {
  it("the reflection prompt for a predictor holds that predictor's feedback, never the other's, and the run finds both rules", async () => {
    const seen: MetricPredictorArg[] = [];
    const reflection = new ScriptedLM(reflector());
    const gepa = new GEPA({ metric: stepMetric(seen), maxMetricCalls: 120, reflectionLM: reflection, seed: 1, useMerge: false });
    const tuned = await gepa.compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
    expect(tuned.topic.instruction).toContain(RULE_PHRASE);
    expect(tuned.tone.instruction).toContain(TONE_PHRASE);
    let topicRules = 0, toneRules = 0;
    for (const r of reflection.requests) {
      const { step, examplesWithFeedback: text } = sent(r);
      if (step.startsWith("topic")) {
        expect(text).not.toContain("Rule for tone");
        expect(text).not.toContain("Something is wrong.");
        if (text.includes(`Rule for label: ${RULE_PHRASE}`)) topicRules++;
      } else {
        expect(step.startsWith("tone")).toBe(true);
        expect(text).not.toContain("Rule for label");
        if (text.includes(`Rule for tone: ${TONE_PHRASE}`)) toneRules++;
      }
    }
    expect(topicRules).toBeGreaterThan(0);
    expect(toneRules).toBeGreaterThan(0);
    // The fourth argument: the predictor's path and its calls for that example (one each here).
    expect(new Set(seen.map((s) => s.predictor))).toEqual(new Set(["topic", "tone"]));
    for (const s of seen) {
      expect(s.predictorTrace).toHaveLength(1);
      expect(Object.keys(s.predictorTrace[0]!.inputs)).toEqual(["text"]);
      expect(Object.keys(s.predictorTrace[0]!.outputs)).toEqual([s.predictor === "topic" ? "label" : "tone"]);
    }
    // The feedback recorded is the per-predictor feedback.
    const step = gepa.lastRun!.trials.find((t) => t.data.predictor === "topic" && Array.isArray(t.data.feedback))!;
    expect((step.data.feedback as string[]).every((f) => f === "This step is right." || f.includes("Rule for label"))).toBe(true);
  });

  it("without it (a metric that ignores the fourth argument) the same run learns nothing", async () => {
    const withFourth = stepMetric([]);
    const plain: Metric = function stepMetric(ex, p, trace) { return withFourth(ex, p, trace); };
    const gepa = new GEPA({ metric: plain, maxMetricCalls: 120, reflectionLM: new ScriptedLM(reflector()), seed: 1, useMerge: false });
    const tuned = await gepa.compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
    expect(gepa.lastRun!.summary.seedReturned).toBe(true);
    expect(tuned.topic.instruction).not.toContain(RULE_PHRASE);
  });

  it("a throw during the feedback call is recorded on the trial and the scoring's feedback is shown instead", async () => {
    const seen: MetricPredictorArg[] = [];
    const reflection = new ScriptedLM(reflector());
    const gepa = new GEPA({ metric: stepMetric(seen, { throwFor: "tone" }), maxMetricCalls: 80, reflectionLM: reflection, seed: 1, useMerge: false });
    await gepa.compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
    const toneSteps = gepa.lastRun!.trials.filter((t) => t.data.predictor === "tone" && Array.isArray(t.data.feedback));
    expect(toneSteps.length).toBeGreaterThan(0);
    for (const t of toneSteps) {
      expect(t.error).toBeNull();
      expect(t.data.feedbackErrors).toEqual((t.data.minibatch as string[]).map((id) => `${id}: RangeError: no feedback for tone`));
      expect((t.data.feedback as string[]).every((f) => f === "Right." || f === "Something is wrong.")).toBe(true);
    }
    for (const r of reflection.requests.filter((x) => sent(x).step.startsWith("tone"))) expect(sent(r).examplesWithFeedback).not.toContain("Rule for");
  });
});

class Word extends Signature {
  static override description = "Label the text.";
  static override input = { text: z.string() };
  static override output = { label: z.enum(["animal", "fruit", "tool"]) };
}

/** Calls one predictor three times per example (each with a numbered copy of the text) and answers the last label. */
class Thrice extends Module {
  step = new Predict(Word);
  async forward({ text }: { text: string }) {
    let label = "";
    for (const n of [1, 2, 3]) label = (await this.step.call({ text: `${text} #${n}` })).label;
    return { label };
  }
}

describe("GEPA's evidence for a predictor called several times per example", () => {
  it("is a seeded random one of its calls, not always the first", () => {
    const predictor = {};
    const outcome = (k: number): ExampleOutcome => ({
      row: { index: k, exampleId: `e${k}`, inputs: {}, expected: {}, prediction: {}, scores: { m: 0 }, error: null, durationMs: 0, inputTokens: 0, outputTokens: 0, cost: 0 },
      prediction: { label: "x" }, feedback: { m: "fb" },
      trace: [1, 2, 3].map((n) => ({ predictor, inputs: { text: `e${k} #${n}` }, prediction: { label: `out ${n}` } as never })),
    });
    const outcomes = Array.from({ length: 30 }, (_, k) => outcome(k));
    const ids = outcomes.map((o) => o.row.exampleId!);
    const drawn = evidenceFor(predictor, outcomes, ids, "m", new Random(5));
    const calls = drawn.map((e) => e.call);
    expect(new Set(calls)).toEqual(new Set([0, 1, 2]));
    drawn.forEach((e, k) => {
      expect(e.calls).toBe(3);
      expect(e.inputs).toEqual({ text: `e${k} #${e.call + 1}` });
      expect(e.outputs).toEqual({ label: `out ${e.call + 1}` });
      expect(e.predictorTrace.map((t) => t.inputs.text)).toEqual([1, 2, 3].map((n) => `e${k} #${n}`));
    });
    // Seeded: the same draws again; without a random stream, the first call.
    expect(evidenceFor(predictor, outcomes, ids, "m", new Random(5)).map((e) => e.call)).toEqual(calls);
    expect(evidenceFor(predictor, outcomes, ids, "m").every((e) => e.call === 0)).toBe(true);
  });

  it("in a run, the reflection prompt shows the drawn call's inputs, and the draws vary", async () => {
    const lm = new SimulatedLM({ rules: [{ phrase: RULE_PHRASE, answer: (i) => ({ label: labelOf(String(i.text)) }) }] });
    const reflection = new ScriptedLM(reflector());
    const label = function label(ex: FewShotExample, p: Record<string, unknown>) {
      return p.label === ex.output.label ? { score: 1, feedback: "Right." } : { score: 0, feedback: `Expected ${String(ex.output.label)}. Rule for label: ${RULE_PHRASE}.` };
    };
    const examples = makeExamples(20, 8, "w");
    // A reflector that never adds the rule, so the run goes on proposing and every step draws evidence.
    const stubborn = new ScriptedLM((r: ScriptedRequest) => { reflection.requests.push(r); return { newInstruction: "Label it." }; });
    const gepa = new GEPA({ metric: label, maxMetricCalls: 60, reflectionLM: stubborn, seed: 3, useMerge: false, minibatchSize: 3 });
    await gepa.compile({ moduleInstance: new Thrice().configure((c) => { c.lm = lm; }), trainingExamples: examples, validationExamples: examples.slice(0, 6) });
    const steps = gepa.lastRun!.trials.filter((t) => Array.isArray(t.data.evidenceCalls));
    expect(steps.length).toBeGreaterThan(3);
    const draws = steps.flatMap((t) => (t.data.evidenceCalls as [number, number][]));
    expect(draws.every(([, n]) => n === 3)).toBe(true);
    expect(new Set(draws.map(([k]) => k)).size).toBe(3);
    // Each prompt shows, per example, the text of the call drawn.
    steps.forEach((t, i) => {
      const text = sent(reflection.requests[i]!).examplesWithFeedback;
      (t.data.minibatch as string[]).forEach((id, j) => {
        const ex = examples.find((e) => e.id === id)!;
        const k = (t.data.evidenceCalls as [number, number][])[j]![0];
        expect(text).toContain(`Inputs: ${JSON.stringify({ text: `${String(ex.input.text)} #${k + 1}` })}`);
      });
    });
  });
});

describe("GEPA without validationExamples", () => {
  it("scores on the training examples, says so in summary.validation, and reuses the child's minibatch scores in its validation pass", async () => {
    let calls = 0;
    const metric: Metric = function feedbackMetric2(ex, p, t, predictor) { if (predictor === undefined) calls++; return feedbackMetric(ex, p); };
    const gepa = new GEPA({ metric, mode: "light", reflectionLM: new ScriptedLM(reflector()), seed: 7, useMerge: false });
    const tuned = await gepa.compile({ moduleInstance: program(), trainingExamples: train });
    const run = gepa.lastRun!;
    expect(run.summary.validation).toBe("training");
    expect(run.trials[0]!.exampleScores!.map((e) => e.exampleId)).toEqual(train.map((e) => e.id));
    expect(tuned.tone.instruction).toContain(TONE_PHRASE);
    const candidates = run.trials.filter((t) => t.kind === "candidate");
    expect(candidates.length).toBeGreaterThanOrEqual(2);
    for (const c of candidates) {
      // The child's 3 minibatch examples are training examples, already scored: 3 + 3 + (30 − 3) metric calls.
      expect(c.reused).toBe(3);
      expect(c.budgetSpent - run.trials[c.index - 1]!.budgetSpent).toBe(33);
      // Two LM calls a program run, and the reflection call.
      expect(c.lmCalls).toBe(2 * 33 + 1);
      const minibatch = c.data.minibatch as string[];
      const after = c.data.minibatchAfter as number[];
      minibatch.forEach((id, i) => expect(c.exampleScores!.find((e) => e.exampleId === id)!.score).toBe(after[i]));
    }
    expect(run.summary.reused).toBe(run.trials.reduce((n, t) => n + t.reused, 0));
    expect(calls).toBe(run.summary.metricCalls);
    expect(calls).toBeLessThanOrEqual(run.config.maxMetricCalls as number);

    const given = new GEPA({ metric: feedbackMetric, maxMetricCalls: 40, reflectionLM: new ScriptedLM(reflector()), seed: 7 });
    await given.compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
    expect(given.lastRun!.summary.validation).toBe("given");
  });

  it("a resumed run reuses exactly what the uninterrupted one did", async () => {
    const options = { metric: feedbackMetric, mode: "light" as const, seed: 7, useMerge: false };
    const full = new GEPA({ ...options, reflectionLM: new ScriptedLM(reflector()) });
    await full.compile({ moduleInstance: program(), trainingExamples: train });
    const ref = full.lastRun!;
    const at = ref.trials.findIndex((t) => t.kind === "candidate") + 1;
    const lab = LabStore.open();
    const id = lab.startRun({ kind: "optimization", name: "GEPA", config: ref.config });
    for (const t of ref.trials.slice(0, at)) lab.recordTrial(id, t);
    const again = new GEPA({ ...options, reflectionLM: new ScriptedLM(reflector()) });
    await again.compile({ moduleInstance: program(), trainingExamples: train, resume: id });
    expect(again.lastRun!.trials.map(same)).toEqual(ref.trials.map(same));
    expect(again.lastRun!.trials.some((t, i) => i >= at && t.reused > 0)).toBe(true);
  });

  it("after a resume, a child met again reuses the scores its replayed trials recorded", async () => {
    // The reflection always proposes the same text, so the seed's two children come back again and
    // again (rejected each time), and in the second epoch of minibatches they meet examples they
    // were scored on in the first.
    const options = { metric: feedbackMetric, maxMetricCalls: 200, seed: 5, useMerge: false };
    const same1 = () => new ScriptedLM(() => ({ newInstruction: "Label it." }));
    const full = new GEPA({ ...options, reflectionLM: same1() });
    await full.compile({ moduleInstance: program(), trainingExamples: train });
    const ref = full.lastRun!;
    const at = 8;
    expect(ref.trials.slice(1).every((t) => t.kind === "rejected")).toBe(true);
    // Reuse after the resume point of scores first recorded before it.
    const keyOf = (t: Trial) => JSON.stringify(t.instructions);
    const scoredBefore = new Set(ref.trials.slice(1, at).flatMap((t) => (t.data.minibatch as string[]).map((id) => `${keyOf(t)} ${id}`)));
    const reusedLater = ref.trials.slice(at).filter((t) => t.reused > 0 && (t.data.minibatch as string[]).some((id) => scoredBefore.has(`${keyOf(t)} ${id}`)));
    expect(reusedLater.length).toBeGreaterThan(0);
    const lab = LabStore.open();
    const id = lab.startRun({ kind: "optimization", name: "GEPA", config: ref.config });
    for (const t of ref.trials.slice(0, at)) lab.recordTrial(id, t);
    const again = new GEPA({ ...options, reflectionLM: same1() });
    await again.compile({ moduleInstance: program(), trainingExamples: train, resume: id });
    expect(again.lastRun!.trials.map(same)).toEqual(ref.trials.map(same));
  });
});

/** A SimulatedLM billing `price` USD a call (the test doubles cost nothing). */
class BilledLM extends SimulatedLM {
  constructor(private readonly price: number, rules: ConstructorParameters<typeof SimulatedLM>[0]) {
    super(rules);
  }
  protected override async complete(request: LMRequest): Promise<LMResponse> {
    return { ...(await super.complete(request)), estimatedCost: this.price };
  }
}

describe("GEPA maxCost", () => {
  it("stops with status 'stopped' after the trial that reached the limit and returns the best candidate so far", async () => {
    const lm = new BilledLM(0.001, { rules: [
      { phrase: RULE_PHRASE, answer: (i) => ({ label: labelOf(String(i.text)) }) },
      { phrase: TONE_PHRASE, answer: (i) => ({ tone: /[A-Z]/.test(String(i.text)) ? "loud" : "calm" }) },
    ] });
    // The seed costs 12 × 2 calls = 0.024; each reflective step at least 3 × 2 calls more.
    const gepa = new GEPA({ metric: feedbackMetric, mode: "light", maxCost: 0.05, reflectionLM: new ScriptedLM(reflector()), seed: 7 });
    const tuned = await gepa.compile({ moduleInstance: program(lm), trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    expect(run.status).toBe("stopped");
    const costs = run.trials.map((t) => t.cost);
    const total = costs.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(0.05);
    expect(total - costs[costs.length - 1]!).toBeLessThan(0.05);
    expect(run.summary).toMatchObject({ stopped: "maxCost", maxCost: 0.05 });
    const kept = run.trials.filter((t) => t.kind === "seed" || (t.kind === "candidate" && t.error === null));
    const best = kept.reduce((b, t) => (t.score! > b.score! ? t : b));
    expect(run.bestTrial).toBe(best.index);
    expect(tuned.namedPredictors().map(([p, m]) => [p, m.instruction])).toEqual(Object.entries(best.instructions));
    expect(LabStore.open().run(run.id)?.status).toBe("stopped");
    // Unlimited, the same run goes on to the end of its budget.
    const free = new GEPA({ metric: feedbackMetric, mode: "light", reflectionLM: new ScriptedLM(reflector()), seed: 7 });
    await free.compile({ moduleInstance: program(lm), trainingExamples: train, validationExamples: val });
    expect(free.lastRun!.status).toBe("completed");
    expect(free.lastRun!.trials.length).toBeGreaterThan(run.trials.length);
    expect(free.lastRun!.trials.slice(0, run.trials.length).map(same)).toEqual(run.trials.map(same));
  });
});

class Level extends Signature {
  static override description = "Rate the text.";
  static override input = { text: z.string() };
  static override output = { level: z.number() };
}

/** Answers level k when "[level k]" is in the instruction (the highest wins), else 0. */
function levelModel(): SimulatedLM {
  return new SimulatedLM({ rules: Array.from({ length: 9 }, (_, i) => 9 - i).map((k) => ({ phrase: `[level ${k}]`, answer: () => ({ level: k }) })) });
}

/** Adds the next level tag to the instruction: every proposal is a strictly better child. */
function levelReflector(): (r: ScriptedRequest) => Record<string, unknown> {
  return (r) => {
    const current = sent(r).currentInstruction;
    const k = Math.max(0, ...[...current.matchAll(/\[level (\d)\]/g)].map((m) => Number(m[1])));
    return { newInstruction: `${current} [level ${k + 1}]` };
  };
}

describe("GEPA.estimate", () => {
  it("makes no model call; its LM calls are the run's when every proposal is accepted and the budget is spent to the last call; tokens within 10%", async () => {
    const examples = makeExamples(16, 4, "lv").map((e) => new FewShotExample({ input: e.input, output: { level: 9 }, id: e.id }));
    const trainL = examples.slice(0, 10);
    const valL = examples.slice(10);
    const metric = function level(ex: FewShotExample, p: Record<string, unknown>) {
      return { score: Number(p.level) / 10, feedback: `Level ${String(p.level)}; the text deserves level ${String(ex.output.level)}.` };
    };
    // V = 6, b = 2, P = 1, c = 4: 6 + 4·(6 + 2·2) = 46 metric calls, 4 reflective steps.
    const lm = levelModel();
    const reflection = new ScriptedLM(levelReflector());
    const gepa = new GEPA({ metric, maxMetricCalls: 46, minibatchSize: 2, reflectionLM: reflection, seed: 2, useMerge: false });
    const moduleInstance = new Predict(Level).configure((c) => { c.lm = lm; });
    const estimate = gepa.estimate({ moduleInstance, trainingExamples: trainL, validationExamples: valL });
    expect(lm.requests).toHaveLength(0);
    expect(reflection.requests).toHaveLength(0);
    await gepa.compile({ moduleInstance, trainingExamples: trainL, validationExamples: valL });
    const run = gepa.lastRun!;
    expect(run.trials.map((t) => t.kind)).toEqual(["seed", "candidate", "candidate", "candidate", "candidate"]);
    expect(run.summary.metricCalls).toBe(46);
    expect(lm.requests.length + reflection.requests.length).toBe(46 + 4);
    expect(estimate.lmCalls).toBe(46 + 4);
    expect(estimate.lmCalls).toBe(run.summary.lmCalls);
    const ratio = (e: number, a: unknown) => Math.abs(e / (a as number) - 1);
    console.log(`GEPA.estimate against the run: input tokens ${estimate.inputTokens} / ${String(run.summary.inputTokens)}, output ${estimate.outputTokens} / ${String(run.summary.outputTokens)}`);
    expect(ratio(estimate.inputTokens, run.summary.inputTokens)).toBeLessThan(0.1);
    expect(ratio(estimate.outputTokens, run.summary.outputTokens)).toBeLessThan(0.1);
    expect(estimate.cost).toBeNull();
  });

  it("for a mode is C·budget program calls plus c·P reflections, priced when the models have a price", () => {
    const lm = twoRuleModel();
    Object.defineProperty(lm, "provider", { value: "openai" });
    Object.defineProperty(lm, "model", { value: "gpt-4o-mini" });
    const reflection = new ScriptedLM(reflector());
    Object.defineProperty(reflection, "provider", { value: "openai" });
    Object.defineProperty(reflection, "model", { value: "gpt-4o" });
    const gepa = new GEPA({ metric: feedbackMetric, mode: "light", reflectionLM: reflection });
    const e = gepa.estimate({ moduleInstance: program(lm), trainingExamples: train, validationExamples: val });
    // budget 156 (light, V = 12, P = 2, b = 3), C = 2 calls a run; c·P = 6·2 = 12 reflections.
    expect(gepa.budget(2, 12)).toBe(156);
    expect(e.lmCalls).toBe(2 * 156 + 12);
    expect(e.cost).not.toBeNull();
    expect(e.cost!).toBeGreaterThan((e.inputTokens * 0.15 + e.outputTokens * 0.6) / 1e6);
    expect(e.cost!).toBeLessThan((e.inputTokens * 2.5 + e.outputTokens * 10) / 1e6);
    expect(lm.requests).toHaveLength(0);
  });
});
