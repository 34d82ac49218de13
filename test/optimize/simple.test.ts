import { describe, it, expect } from "@jest/globals";
import { Instrumentation } from "../../lib/instrument/bus.js";
import { LabStore, Predict, SimpleOptimizer } from "../../lib/index.js";
import type { OptimizationRun } from "../../lib/index.js";
import { lastScore } from "../../lib/store/module-score.js";
import { candidateInstructions, heldOut, makeExamples, RULE_PHRASE, taskModel, Topic, useTempLab } from "./task.js";

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
    expect(run.trials.map((t) => t.kind)).toEqual(["baseline", "trial", "trial", "trial", "trial"]);
    expect(events).toEqual(["optimizer.start", ...run.trials.map(() => "optimizer.trial"), "optimizer.end"]);
    const stored = LabStore.open(labFile()).run(run.id) as OptimizationRun;
    expect(stored.status).toBe("completed");
    expect(stored.trials).toEqual(run.trials);
    for (const t of run.trials.slice(1)) {
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
