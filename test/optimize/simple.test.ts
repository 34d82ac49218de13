import { describe, it, expect } from "@jest/globals";
import { Instrumentation } from "../../lib/instrument/bus.js";
import { LabStore, Predict, SimpleOptimizer, ValidationError } from "../../lib/index.js";
import type { Metric, OptimizationRun, Trial } from "../../lib/index.js";
import type { LMRequest, LMResponse } from "../../lib/lm/types.js";
import { SimulatedLM } from "../../lib/testing/index.js";
import { lastScore } from "../../lib/store/module-score.js";
import { candidateInstructions, heldOut, labelOf, makeExamples, RULE_PHRASE, taskModel, Topic, useTempLab } from "./task.js";

const train = makeExamples(30, 31, "train");
const test = makeExamples(60, 33, "test");
const labFile = useTempLab();

describe("SimpleOptimizer", () => {
  it("finds the instruction variant holding the rule and beats the baseline on held-out examples", async () => {
    for (const at of [1, 4]) {
      const lm = taskModel();
      const program = new Predict(Topic).configure((c) => { c.lm = lm; });
      const opt = new SimpleOptimizer({ seed: 5, numTrials: 6, kDemos: 2, instructions: candidateInstructions(at) });
      const tuned = await opt.compile({ moduleInstance: program, trainingExamples: train });
      expect(tuned.instruction).toBe(candidateInstructions(at)[at]);
      expect(tuned.instruction).toContain(RULE_PHRASE);
      expect(await heldOut(lm, tuned.instruction, tuned.demos, test)).toBeGreaterThan(await heldOut(lm, program.instruction, program.demos, test));
      expect(program.instruction).toBe("Label the text.");
      expect(program.demos).toEqual([]);
      expect(lastScore(tuned)).toBe(opt.lastRun!.score);
    }
  });

  it("records the baseline and every trial in the lab store and lastRun, scoring examples apart from the demo pool", async () => {
    const lm = taskModel();
    const opt = new SimpleOptimizer({ seed: 2, numTrials: 4, kDemos: 3 });
    const events: string[] = [];
    Instrumentation.subscribe(/^optimizer\./, (e) => events.push(e.name));
    await opt.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train });
    const run = opt.lastRun!;
    // The bootstrap builds the trials' demo sets (DSPy's BootstrapFewShotWithRandomSearch candidates), then the baseline and 4 trials.
    expect(run.trials.map((t) => t.kind)).toEqual(["bootstrap", "baseline", "trial", "trial", "trial", "trial"]);
    expect(events).toEqual(["optimizer.start", ...run.trials.map(() => "optimizer.trial"), "optimizer.end"]);
    const stored = LabStore.open(labFile()).run(run.id) as OptimizationRun;
    expect(stored.status).toBe("completed");
    expect(stored.trials).toEqual(run.trials);
    for (const t of run.trials.filter((x) => x.kind === "trial")) {
      const scored = new Set(t.exampleScores!.map((e) => e.exampleId));
      expect(t.exampleScores).toHaveLength(15);
      expect(t.demoIds.self).toHaveLength(3);
      expect(t.demoIds.self!.filter((id) => scored.has(id))).toEqual([]);
      expect(t.lmCalls).toBe(15);
    }
    // The summary totals the trials' usage, as MIPROv2's and GEPA's do.
    const sum = (k: "lmCalls" | "inputTokens" | "outputTokens" | "cost") => run.trials.reduce((a, t) => a + t[k], 0);
    expect(sum("inputTokens")).toBeGreaterThan(0);
    expect(run.summary).toMatchObject({ lmCalls: sum("lmCalls"), inputTokens: sum("inputTokens"), outputTokens: sum("outputTokens"), cost: sum("cost") });
    expect(stored.summary).toEqual(run.summary);
  });

  it("resumes an interrupted run from its recorded trials and ends like an uninterrupted one", async () => {
    const lm = taskModel();
    const make = () => new SimpleOptimizer({ seed: 4, numTrials: 5, kDemos: 2, instructions: candidateInstructions(2) });
    const program = new Predict(Topic).configure((c) => { c.lm = lm; });
    const full = make();
    const reference = await full.compile({ moduleInstance: program, trainingExamples: train });
    const ref = full.lastRun!;
    // An interrupted run: the same start, only its first three trials written.
    const lab = LabStore.open(labFile());
    const id = lab.startRun({ kind: "optimization", name: "SimpleOptimizer", config: ref.config });
    for (const t of ref.trials.slice(0, 3)) lab.recordTrial(id, t);
    const callsBefore = lm.requests.length;
    const resumed = make();
    const tuned = await resumed.compile({ moduleInstance: program, trainingExamples: train, resume: id });
    expect(tuned.instruction).toBe(reference.instruction);
    expect(tuned.demos.map((d) => d.id)).toEqual(reference.demos.map((d) => d.id));
    expect(resumed.lastRun!.trials.map(({ durationMs: _d, ...t }) => t)).toEqual(ref.trials.map(({ durationMs: _d, ...t }) => t));
    expect(resumed.lastRun!.bestTrial).toBe(ref.bestTrial);
    expect(lm.requests.length - callsBefore).toBe(ref.trials.slice(3).reduce((n, t) => n + t.lmCalls, 0));
  });

  it("rejects kDemos larger than its demo pool and empty example lists", async () => {
    const program = new Predict(Topic);
    await expect(new SimpleOptimizer({ kDemos: 4 }).compile({ moduleInstance: program, trainingExamples: train.slice(0, 6) }))
      .rejects.toThrow(/kDemos is 4 but the demo pool has 3 examples/);
    await expect(new SimpleOptimizer().compile({ moduleInstance: program, trainingExamples: [] })).rejects.toThrow(/trainingExamples must be a non-empty array/);
    expect(() => new SimpleOptimizer({ numTrials: 0 })).toThrow(/numTrials must be an integer ≥ 1/);
  });
});

/** A SimulatedLM whose every call is billed `price` USD (the test doubles cost nothing). */
class BilledLM extends SimulatedLM {
  constructor(private readonly price: number) {
    super({ rules: [{ phrase: RULE_PHRASE, answer: (inputs) => ({ label: labelOf(String(inputs.text)) }) }] });
  }
  protected override async complete(request: LMRequest): Promise<LMResponse> {
    return { ...(await super.complete(request)), estimatedCost: this.price };
  }
}

const same = (t: Trial) => { const { durationMs: _d, ...rest } = t; return rest; };

describe("SimpleOptimizer scores a configuration once per example", () => {
  // kDemos 0 and two variants: 3 distinct programs (the current instruction and two variants), 7 trials.
  const make = () => new SimpleOptimizer({ seed: 3, numTrials: 6, kDemos: 0, instructions: ["Label it.", candidateInstructions(0)[0]!] });

  it("a trial meeting a configuration scored before reuses its scores without a model call (trial.reused)", async () => {
    const lm = taskModel();
    const opt = make();
    const tuned = await opt.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train });
    const run = opt.lastRun!;
    expect(run.trials).toHaveLength(7);
    const distinct = new Set(run.trials.map((t) => t.instructions.self));
    expect(distinct.size).toBe(3);
    // Every program is run on the 15 scored examples once.
    expect(lm.requests).toHaveLength(3 * 15);
    const firstOf = new Map<string, number>();
    for (const t of run.trials) {
      const seen = firstOf.has(t.instructions.self!);
      if (!seen) firstOf.set(t.instructions.self!, t.index);
      expect([t.reused, t.lmCalls]).toEqual(seen ? [15, 0] : [0, 15]);
      // A reused trial has the same per-example scores as the first trial of its configuration.
      expect(t.exampleScores).toEqual(run.trials[firstOf.get(t.instructions.self!)!]!.exampleScores);
    }
    expect(run.summary.reused).toBe(4 * 15);
    expect(tuned.instruction).toContain(RULE_PHRASE);
    expect((LabStore.open(labFile()).run(run.id) as OptimizationRun).trials.map((t) => t.reused)).toEqual(run.trials.map((t) => t.reused));
  });

  it("a resumed run reuses the replayed trials' scores as the uninterrupted run did", async () => {
    const lm = taskModel();
    const program = new Predict(Topic).configure((c) => { c.lm = lm; });
    const full = make();
    await full.compile({ moduleInstance: program, trainingExamples: train });
    const ref = full.lastRun!;
    const lab = LabStore.open(labFile());
    const id = lab.startRun({ kind: "optimization", name: "SimpleOptimizer", config: ref.config });
    for (const t of ref.trials.slice(0, 4)) lab.recordTrial(id, t);
    const before = lm.requests.length;
    const resumed = make();
    await resumed.compile({ moduleInstance: program, trainingExamples: train, resume: id });
    expect(resumed.lastRun!.trials.map(same)).toEqual(ref.trials.map(same));
    // The first four trials already held all three programs: nothing is asked again.
    expect(new Set(ref.trials.slice(0, 4).map((t) => t.instructions.self)).size).toBe(3);
    expect(lm.requests.length - before).toBe(0);
  });
});

describe("SimpleOptimizer per-example errors", () => {
  it("an example whose metric throws scores 0 with its error; the trial keeps a score", async () => {
    const lm = taskModel();
    const judge: Metric = function judge(ex, p) {
      if (ex.output.label === "tool" && ex.id!.endsWith("3")) throw new RangeError("no judge for this one");
      return p.label === ex.output.label;
    };
    const opt = new SimpleOptimizer({ seed: 2, numTrials: 2, kDemos: 2, metric: judge });
    await opt.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train });
    const run = opt.lastRun!;
    const scoring = run.trials.filter((t) => t.kind !== "bootstrap");
    const erring = scoring[0]!.exampleScores!.filter((e) => e.error !== null);
    expect(erring.length).toBeGreaterThan(0);
    for (const t of scoring) {
      expect(t.error).toBeNull();
      expect(t.score).not.toBeNull();
      for (const e of t.exampleScores!.filter((x) => x.error !== null)) {
        expect(e).toMatchObject({ score: 0, error: 'RangeError: metric "judge" threw: no judge for this one' });
      }
    }
    expect(run.status).toBe("completed");
  });
});

describe("SimpleOptimizer maxCost", () => {
  it("stops with status 'stopped' after the trial that reached the limit and returns the best so far; resumed with more, it ends like a run never stopped", async () => {
    const options = { seed: 4, numTrials: 5, kDemos: 2, instructions: candidateInstructions(2) };
    const lm = new BilledLM(0.001);
    const program = new Predict(Topic).configure((c) => { c.lm = lm; });
    // 0.001 USD a call: the bootstrap's teacher runs, then 15 scored examples a trial (none repeats).
    const opt = new SimpleOptimizer({ ...options, maxCost: 0.04 });
    const tuned = await opt.compile({ moduleInstance: program, trainingExamples: train });
    const run = opt.lastRun!;
    expect(run.status).toBe("stopped");
    const spent = (trials: Trial[]) => trials.map((t) => t.cost).reduce((a, b) => a + b, 0);
    for (const t of run.trials) expect(t.cost).toBeCloseTo(t.lmCalls * 0.001, 10);
    // The last trial recorded is the one that reached the limit.
    expect(spent(run.trials)).toBeGreaterThanOrEqual(0.04);
    expect(spent(run.trials.slice(0, -1))).toBeLessThan(0.04);
    expect(run.trials[0]!.kind).toBe("bootstrap");
    expect(run.trials.at(-1)!.kind).toBe("trial");
    const best = run.trials.filter((t) => t.kind !== "bootstrap").reduce((b, t) => (t.score! > b.score! ? t : b));
    expect(run.bestTrial).toBe(best.index);
    expect(tuned.instruction).toBe(best.instructions.self);
    expect(run.summary).toMatchObject({ stopped: "maxCost", maxCost: 0.04 });
    expect(LabStore.open(labFile()).run(run.id)?.status).toBe("stopped");

    const reference = new SimpleOptimizer(options);
    await reference.compile({ moduleInstance: program, trainingExamples: train });
    const more = new SimpleOptimizer({ ...options, maxCost: 1 });
    const calls = lm.requests.length;
    await more.compile({ moduleInstance: program, trainingExamples: train, resume: run.id });
    expect(more.lastRun!.status).toBe("completed");
    expect(more.lastRun!.trials.map(same)).toEqual(reference.lastRun!.trials.map(same));
    // Only the trials the stopped run had not recorded reach the model.
    const rest = reference.lastRun!.trials.slice(run.trials.length);
    expect(rest.length).toBeGreaterThan(0);
    expect(lm.requests.length - calls).toBe(rest.length * 15);
  });

  it("refuses a maxCost that is not a positive number", () => {
    expect(() => new SimpleOptimizer({ maxCost: 0 })).toThrow(/maxCost must be a positive number of USD; received 0/);
    expect(() => new SimpleOptimizer({ maxCost: "1" as unknown as number })).toThrow(ValidationError);
  });
});

describe("SimpleOptimizer.estimate", () => {
  it("makes no model call; its trials' LM calls are the run's, its teacher runs the formula's, its tokens within 5% of the run's (SimulatedLM)", async () => {
    // Teacher runs: min(pool 15, 2k + (k+1)·(numTrials − 2)): 4 + 3·3 = 13 and 8 + 5·1 = 13.
    for (const [numTrials, kDemos, teacherRuns] of [[5, 2, 13], [3, 4, 13]] as const) {
      const lm = taskModel();
      const program = new Predict(Topic).configure((c) => { c.lm = lm; });
      const opt = new SimpleOptimizer({ seed: 6, numTrials, kDemos, instructions: candidateInstructions(1) });
      const estimate = opt.estimate({ moduleInstance: program, trainingExamples: train });
      expect(lm.requests).toHaveLength(0);
      await opt.compile({ moduleInstance: program, trainingExamples: train });
      const run = opt.lastRun!;
      expect(run.trials.every((t) => t.reused === 0)).toBe(true);
      const boot = run.trials.find((t) => t.kind === "bootstrap")!;
      expect((run.summary.lmCalls as number) - boot.lmCalls).toBe((numTrials + 1) * 15);
      expect(estimate.lmCalls).toBe((numTrials + 1) * 15 + teacherRuns);
      // A pool example runs at most once.
      expect(boot.lmCalls).toBeLessThanOrEqual(15);
      expect(Math.abs(estimate.inputTokens / (run.summary.inputTokens as number) - 1)).toBeLessThan(0.05);
      expect(Math.abs(estimate.outputTokens / (run.summary.outputTokens as number) - 1)).toBeLessThan(0.05);
      // A SimulatedLM has no price.
      expect(estimate.cost).toBeNull();
    }
  });

  it("prices the tokens with the model's list price, and counts one call per predictor per example", () => {
    const lm = taskModel();
    Object.defineProperty(lm, "provider", { value: "openai" });
    Object.defineProperty(lm, "model", { value: "gpt-4o-mini" });
    const opt = new SimpleOptimizer({ seed: 6, numTrials: 2, kDemos: 2 });
    const e = opt.estimate({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: test.slice(0, 10) });
    // 3 scorings of the 10 examples, and 2k + (k+1)·(numTrials − 2) = 4 teacher runs for k = 2.
    expect(e.lmCalls).toBe(3 * 10 + 4);
    // The token totals are rounded to whole tokens, the cost is not: at most half a token of each apart.
    expect(e.cost).toBeCloseTo((e.inputTokens * 0.15 + e.outputTokens * 0.6) / 1e6, 6);
    expect(lm.requests).toHaveLength(0);
  });
});
