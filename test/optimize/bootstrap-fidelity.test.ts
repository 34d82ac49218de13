// The bootstrap as DSPy's BootstrapFewShot and create_n_fewshot_demo_sets run it: which teacher runs
// are kept (above 0, or at least metricThreshold), and what every demo set holds (kDemos demos,
// bootstrapped ones topped up with labelled ones that never repeat them).
import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, MIPROv2, Predict, Signature, SimpleOptimizer, ValidationError } from "../../lib/index.js";
import { keepsRun } from "../../lib/optimize/bootstrap.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";
import { candidateInstructions, labelOf, makeExamples, proposals, useTempLab } from "./task.js";

const RULE = "name the category of the keyword";

/** A second output, `note`, that the examples do not carry: a demo with one came from a teacher run. */
class Noted extends Signature {
  static override description = `Label the text: ${RULE}.`;
  static override input = { text: z.string() };
  static override output = { label: z.enum(["animal", "fruit", "tool"]), note: z.string() };
}

/** Right on animals and fruit, wrong on tools (it calls them fruit); every reply carries a note. */
const teacherModel = () => new SimulatedLM({
  rules: [{ phrase: RULE, answer: ({ text }) => {
    const label = labelOf(String(text));
    return { label: label === "tool" ? "fruit" : label, note: "from a run" };
  } }],
});

/** 0.9 for a right label, 0 for a wrong one: DSPy keeps the first, the old rule (score ≥ 1) kept neither. */
const ninety = (example: FewShotExample, prediction: Record<string, unknown>) => (prediction.label === example.output.label ? 0.9 : 0);

const train = makeExamples(30, 11, "train");
const val = makeExamples(20, 12, "val");

type Demo = { id: string; input: { text: string }; output: { label: string; note?: string } };

async function bootstrapOf(options: { metricThreshold?: number; kDemos?: number } = {}) {
  const lm = teacherModel();
  const mipro = new MIPROv2({
    metric: ninety, kDemos: options.kDemos ?? 3, numCandidates: 6, numTrials: 3, minibatchSize: 5, seed: 5, progress: false,
    promptModel: new ScriptedLM(proposals(candidateInstructions(0, 3))),
    ...(options.metricThreshold === undefined ? {} : { metricThreshold: options.metricThreshold }),
  });
  await mipro.compile({ moduleInstance: new Predict(Noted).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: val });
  const run = mipro.lastRun!;
  const boot = run.trials.find((t) => t.kind === "bootstrap")!;
  const sets = (boot.data.sets as Record<string, Demo[][]>).self!;
  return { lm, run, boot, sets, quotas: boot.data.quotas as number[] };
}

const fromRun = (d: Demo) => d.output.note !== undefined;

useTempLab();

describe("which teacher runs the bootstrap keeps", () => {
  it("keeps a run the metric scores above 0 (0.9 for a right answer): bootstrapped demos reach the demo sets", async () => {
    const { boot, sets } = await bootstrapOf();
    expect(boot.data.kept).toBeGreaterThan(0);
    const bootstrapped = sets.flat().filter(fromRun);
    expect(bootstrapped.length).toBeGreaterThan(0);
    // Only passed runs: each bootstrapped demo holds the right label (the model is wrong on every tool).
    const byId = new Map(train.map((e) => [e.id, e]));
    for (const d of bootstrapped) expect(d.output.label).toBe(byId.get(d.id)!.output.label);
    expect(bootstrapped.some((d) => byId.get(d.id)!.output.label === "tool")).toBe(false);
    // Runs scoring 0 were tried but not kept.
    expect(boot.data.kept).toBeLessThan(boot.data.tried as number);
  });

  it("keeps none with metricThreshold 0.95: every set is then made of labelled examples only", async () => {
    const { run, boot, sets } = await bootstrapOf({ metricThreshold: 0.95 });
    expect(boot.data.tried).toBe(run.config.demoPool);
    expect(boot.data.kept).toBe(0);
    expect(sets.flat().filter(fromRun)).toEqual([]);
    for (const set of sets.slice(1)) expect(set).toHaveLength(3);
  });

  it("keepsRun: above 0 without a threshold, at least the threshold with one", () => {
    expect([0, 1e-9, 0.5, 1].map((s) => keepsRun(s, undefined))).toEqual([false, true, true, true]);
    expect([0, 0.9, 0.95, 1].map((s) => keepsRun(s, 0.95))).toEqual([false, false, true, true]);
  });
});

describe("what every demo set holds", () => {
  it("set 0 stays empty, every other set holds kDemos demos: bootstrapped ones to the set's quota, topped up with labelled ones", async () => {
    const { sets, quotas } = await bootstrapOf();
    expect(sets).toHaveLength(6);
    expect(sets[0]).toEqual([]);
    // Set 1 is labelled only, set 2 bootstraps kDemos in the pool's order, sets 3..5 a quota drawn from 1..kDemos.
    expect(quotas.slice(0, 3)).toEqual([0, 0, 3]);
    expect(sets[1]!.filter(fromRun)).toEqual([]);
    const trainIds = new Set(train.map((e) => e.id));
    for (const [i, set] of sets.entries()) {
      if (i === 0) continue;
      expect(set).toHaveLength(3);
      // Never the same example twice: a labelled demo never repeats a bootstrapped one.
      expect(new Set(set.map((d) => d.id)).size).toBe(3);
      for (const d of set) expect(trainIds.has(d.id)).toBe(true);
      // 20 of the 30 pool examples pass, so every quota is filled with bootstrapped demos.
      if (i >= 2) expect(set.filter(fromRun)).toHaveLength(quotas[i]!);
    }
    // A quota below kDemos was drawn, so some set really mixes the two kinds.
    expect(sets.slice(3).some((set) => set.some(fromRun) && set.some((d) => !fromRun(d)))).toBe(true);
  });

  it("no example is ever scored while it is a demo in the prompt (the teacher's runs included)", async () => {
    const { lm, run } = await bootstrapOf();
    const valTexts = new Set(val.map((e) => e.input.text));
    expect(lm.requests.length).toBeGreaterThan(run.trials.find((t) => t.kind === "bootstrap")!.lmCalls);
    for (const r of lm.requests) {
      const demoTexts = r.read.demos.map((d) => String(d.input.text));
      expect(demoTexts).not.toContain(String(r.read.inputs.text));
      for (const t of demoTexts) expect(valTexts.has(t)).toBe(false);
    }
  });

  it("zero-shot (kDemos 0), the sets shown to the proposer hold bootstrapped demos only, as DSPy's max_labeled_demos 0", async () => {
    const { sets, quotas, lm, boot } = await bootstrapOf({ kDemos: 0 });
    expect(sets[0]).toEqual([]);
    expect(quotas[1]).toBeGreaterThanOrEqual(1);
    for (const set of sets.slice(1)) {
      expect(set.length).toBeGreaterThanOrEqual(1);
      expect(set.length).toBeLessThanOrEqual(3);
      expect(set.every(fromRun)).toBe(true);
    }
    // The teacher carries no labelled demos either.
    const teacherRuns = lm.requests.slice(0, boot.data.tried as number);
    for (const r of teacherRuns) expect(r.read.demos).toEqual([]);
  });
});

describe("SimpleOptimizer's demo sets are bootstrapped the same way", () => {
  async function simpleRun(metricThreshold?: number) {
    const opt = new SimpleOptimizer({
      metric: ninety, kDemos: 3, numTrials: 5, seed: 5, progress: false, instructions: ["Label it."],
      ...(metricThreshold === undefined ? {} : { metricThreshold }),
    });
    await opt.compile({ moduleInstance: new Predict(Noted).configure((c) => { c.lm = teacherModel(); }), trainingExamples: train, validationExamples: val });
    const run = opt.lastRun!;
    const boot = run.trials[0]!;
    return { run, boot, sets: (boot.data.sets as Record<string, Demo[][]>).self!, quotas: boot.data.quotas as number[] };
  }

  it("with a 0.9 metric it keeps teacher runs; trial t shows demo set t, kDemos demos, bootstrapped topped up with labelled", async () => {
    const { run, boot, sets, quotas } = await simpleRun();
    expect(run.config.metricThreshold).toBeNull();
    expect(boot.kind).toBe("bootstrap");
    expect(boot.data.kept).toBeGreaterThan(0);
    expect(sets).toHaveLength(6);
    expect(sets[0]).toEqual([]);
    expect(sets[1]!.filter(fromRun)).toEqual([]);
    for (const [i, set] of sets.entries()) {
      if (i === 0) continue;
      expect(set).toHaveLength(3);
      expect(new Set(set.map((d) => d.id)).size).toBe(3);
      if (i >= 2) expect(set.filter(fromRun)).toHaveLength(quotas[i]!);
    }
    const trials = run.trials.filter((t) => t.kind === "trial");
    expect(trials).toHaveLength(5);
    trials.forEach((t, i) => expect(t.demoIds.self).toEqual(sets[i + 1]!.map((d) => d.id)));
    // Validation examples are scored, training examples are the demos.
    const valIds = new Set(val.map((e) => e.id));
    for (const t of trials) for (const id of t.demoIds.self!) expect(valIds.has(id)).toBe(false);
  });

  it("with metricThreshold 0.95 it keeps none, and every trial still shows kDemos labelled demos", async () => {
    const { run, boot, sets } = await simpleRun(0.95);
    expect(run.config.metricThreshold).toBe(0.95);
    expect(boot.data.kept).toBe(0);
    expect(sets.flat().filter(fromRun)).toEqual([]);
    for (const t of run.trials.filter((x) => x.kind === "trial")) expect(t.demoIds.self).toHaveLength(3);
  });
});

describe("metricThreshold as an option", () => {
  it("is recorded in the run's configuration (null when not given)", async () => {
    expect((await bootstrapOf()).run.config.metricThreshold).toBeNull();
    expect((await bootstrapOf({ metricThreshold: 0.95 })).run.config.metricThreshold).toBe(0.95);
  });

  it("must be a number above 0 and at most 1; bootstrapThreshold is refused with its new name", () => {
    for (const bad of [0, -0.5, 1.5, Number.NaN, "0.9"]) {
      expect(() => new MIPROv2({ metricThreshold: bad as number })).toThrow(ValidationError);
      expect(() => new SimpleOptimizer({ metricThreshold: bad as number })).toThrow(/metricThreshold must be a number above 0 and at most 1/);
    }
    expect(() => new MIPROv2({ metricThreshold: 1 })).not.toThrow();
    expect(() => new MIPROv2({ bootstrapThreshold: 1 } as Record<string, unknown>)).toThrow(/bootstrapThreshold is now metricThreshold/);
  });
});
