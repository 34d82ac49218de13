import { describe, it, expect } from "@jest/globals";
import { GEPA, LabStore, MIPROv2 } from "../../lib/index.js";
import type { Metric, OptimizationRun, Trial } from "../../lib/index.js";
import { Instrumentation } from "../../lib/instrument/bus.js";
import { display } from "../../lib/notebook/index.js";
import { planMerge } from "../../lib/optimize/gepa/merge.js";
import { fronts, nonDominated, selectBest, selectPareto } from "../../lib/optimize/gepa/pareto.js";
import { modeBudget } from "../../lib/optimize/gepa/budget.js";
import { Random } from "../../lib/random.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";
import type { ScriptedRequest } from "../../lib/testing/index.js";
import { feedbackMetric, makeToneExamples, reflector, TONE_PHRASE, TopicAndTone, twoRuleModel } from "./gepa-task.js";
import { labelOf, RULE_PHRASE, useTempLab } from "./task.js";

const train = makeToneExamples(30, 1, "train");
const val = makeToneExamples(12, 2, "val");

useTempLab();

const pool = (rows: number[][]) => rows.map((scores) => ({ scores, mean: scores.reduce((a, b) => a + b, 0) / scores.length }));

describe("Pareto selection", () => {
  it("removes candidates dominated on every front they are on (hand-worked example)", () => {
    // Fronts: ex0 {0,3}, ex1 {1,2,3}, ex2 {1,3}, ex3 (all 0) {0,1,2,3}; only 3 is alone on a front (none).
    // Removing the weakest first: 0, then 2, then 1 (each front of theirs still holds 3); 3 stays.
    const p = pool([[1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 0], [1, 1, 1, 0]]);
    expect(fronts(p).map((f) => [...f].sort())).toEqual([[0, 3], [1, 2, 3], [1, 3], [0, 1, 2, 3]]);
    expect([...nonDominated(p, fronts(p))]).toEqual([3]);
    const r = new Random(1);
    for (let i = 0; i < 20; i++) expect(selectPareto(p, r)).toBe(3);
  });

  it("draws each non-dominated candidate in proportion to the examples it leads on; 'best' takes the highest mean", () => {
    // 0 leads on 1 example, 1 on 2, 2 on none.
    const p = pool([[1, 0, 0], [0, 1, 1], [0, 0, 0]]);
    const r = new Random(5);
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[selectPareto(p, r)]!++;
    expect(counts[2]).toBe(0);
    expect(counts[1]! / 3000).toBeGreaterThan(0.62);
    expect(counts[1]! / 3000).toBeLessThan(0.71);
    expect(selectBest(p)).toBe(1);
    expect(selectBest(pool([[1, 0], [0, 1]]))).toBe(0);
  });
});

describe("merge planning", () => {
  const cand = (t: string, o: string, parents: number[], mean: number) => ({ instructions: { topic: t, tone: o }, parents, mean });

  it("takes from each descendant the predictor it changed", () => {
    const p = [cand("t0", "o0", [], 0.4), cand("T", "o0", [0], 0.7), cand("t0", "O", [0], 0.6)];
    const plan = planMerge(p, [1, 2], new Set(), new Random(3))!;
    expect(plan).toEqual({ a: 1, b: 2, ancestor: 0, from: { topic: 1, tone: 2 }, instructions: { topic: "T", tone: "O" } });
    expect(planMerge(p, [1, 2], new Set(["1,2,0"]), new Random(3))).toBeUndefined();
  });

  it("never merges a candidate with its own ancestor, nor through an ancestor better than a descendant", () => {
    const line = [cand("t0", "o0", [], 0.4), cand("T", "o0", [0], 0.7), cand("T", "O", [1], 0.9)];
    expect(planMerge(line, [1, 2], new Set(), new Random(3))).toBeUndefined();
    const better = [cand("t0", "o0", [], 0.65), cand("T", "o0", [0], 0.7), cand("t0", "O", [0], 0.6)];
    expect(planMerge(better, [1, 2], new Set(), new Random(3))).toBeUndefined();
  });

  it("in a run where the seed stays on the front, merges two siblings that fixed different predictors", async () => {
    // The topic rule is wrong for "otter" (the seed's first label, "animal", is right there), so the
    // topic child does not dominate the seed and the seed is picked again for its tone.
    const lm = new SimulatedLM({
      rules: [
        { phrase: RULE_PHRASE, answer: (i) => ({ label: String(i.text).includes("otter") ? "fruit" : labelOf(String(i.text)) }) },
        { phrase: TONE_PHRASE, answer: (i) => ({ tone: /[A-Z]/.test(String(i.text)) ? "loud" : "calm" }) },
      ],
    });
    const valWithOtter = [...val, ...makeToneExamples(40, 9, "extra").filter((e) => String(e.input.text).includes("otter")).slice(0, 2)];
    let merges: Trial[] = [];
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const program = new TopicAndTone().configure((c) => { c.lm = lm; });
      const gepa = new GEPA({ metric: feedbackMetric, mode: "light", reflectionLM: new ScriptedLM(reflector()), seed });
      await gepa.compile({ moduleInstance: program, trainingExamples: train, validationExamples: valWithOtter });
      merges = gepa.lastRun!.trials.filter((t) => t.parents.length === 2);
      if (merges.some((t) => t.kind === "candidate")) break;
    }
    const merged = merges.find((t) => t.kind === "candidate")!;
    expect(merged).toBeDefined();
    expect(merged.instructions.topic).toContain(RULE_PHRASE);
    expect(merged.instructions.tone).toContain(TONE_PHRASE);
    expect(Object.values(merged.choices).map((c) => c.from).sort()).toEqual([...merged.parents].sort());
    expect(merged.exampleScores).toHaveLength(valWithOtter.length);
  });
});

describe("GEPA budgets per mode", () => {
  it("are V + c·(V + 2·b·P) metric calls with c = 6, 12, 18", () => {
    // 100 validation examples, 2 predictors, minibatch 3: 100 + 6·112, 100 + 12·112, 100 + 18·112.
    expect(modeBudget("light", 100, 2, 3)).toBe(772);
    expect(modeBudget("balanced", 100, 2, 3)).toBe(1444);
    expect(modeBudget("heavy", 100, 2, 3)).toBe(2116);
    expect(new GEPA({ mode: "medium" }).budget(1, 50)).toBe(50 + 12 * (50 + 6));
    expect(new GEPA({ maxMetricCalls: 99 }).budget(3, 500)).toBe(99);
  });
});

/** A trial without what legitimately differs between two runs of the same trial (wall time). */
function same(t: Trial): Omit<Trial, "durationMs"> {
  const { durationMs: _d, ...rest } = t;
  return rest;
}

describe("GEPA resume", () => {
  it("continues an interrupted run from its recorded trials and ends exactly like the uninterrupted run", async () => {
    const options = { metric: feedbackMetric, mode: "light" as const, seed: 11 };
    const fullReflection = new ScriptedLM(reflector());
    const full = new GEPA({ ...options, reflectionLM: fullReflection });
    const reference = await full.compile({ moduleInstance: new TopicAndTone().configure((c) => { c.lm = twoRuleModel(); }), trainingExamples: train, validationExamples: val });
    const ref = full.lastRun!;
    expect(ref.trials.length).toBeGreaterThanOrEqual(3);

    // An interrupted run: the same configuration with only its first two trials recorded.
    const lab = LabStore.open();
    const id = lab.startRun({ kind: "optimization", name: "GEPA", config: ref.config });
    for (const t of ref.trials.slice(0, 2)) lab.recordTrial(id, t);

    const resumedReflection = new ScriptedLM(reflector());
    const again = new GEPA({ ...options, reflectionLM: resumedReflection });
    const resumed = await again.compile({ moduleInstance: new TopicAndTone().configure((c) => { c.lm = twoRuleModel(); }), trainingExamples: train, validationExamples: val, resume: id });
    const run = again.lastRun!;
    expect(run.id).toBe(id);
    expect(run.trials.map(same)).toEqual(ref.trials.map(same));
    expect(run.bestTrial).toBe(ref.bestTrial);
    expect(resumed.dumpState()).toEqual(reference.dumpState());
    // The replayed proposals did not ask the reflection LM again.
    const reflectedIn = (r: OptimizationRun, from: number) => r.trials.slice(from).filter((t) => t.kind !== "seed").length;
    expect(resumedReflection.requests.length).toBe(fullReflection.requests.length - (reflectedIn(ref, 0) - reflectedIn(ref, 2)));
    expect((lab.run(id) as OptimizationRun).status).toBe("completed");
  });

  it("refuses to resume with other options", async () => {
    const first = new GEPA({ metric: feedbackMetric, maxMetricCalls: 40, reflectionLM: new ScriptedLM(reflector()), seed: 1 });
    await first.compile({ moduleInstance: new TopicAndTone().configure((c) => { c.lm = twoRuleModel(); }), trainingExamples: train, validationExamples: val });
    const other = new GEPA({ metric: feedbackMetric, maxMetricCalls: 40, reflectionLM: new ScriptedLM(reflector()), seed: 2 });
    await expect(other.compile({ moduleInstance: new TopicAndTone(), trainingExamples: train, validationExamples: val, resume: first.lastRun!.id }))
      .rejects.toThrow(/resuming it needs the same optimizer and options/);
  });
});

describe("display.candidates on a GEPA run", () => {
  it("draws the kept candidates as a tree with their scores and lists rejected proposals in the table", async () => {
    const gepa = new GEPA({ metric: feedbackMetric, mode: "light", reflectionLM: new ScriptedLM(reflector()), seed: 7 });
    await gepa.compile({ moduleInstance: new TopicAndTone().configure((c) => { c.lm = twoRuleModel(); }), trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    const bundle = (await display.candidates(run))!;
    expect(bundle["image/png"]).toBeDefined();
    const spec = bundle["application/vnd.vegalite.v5+json"]!;
    const tree = (spec.vconcat as { layer: { data: { values: Record<string, unknown>[] } }[] }[])[1]!;
    const kept = run.trials.filter((t) => t.kind === "seed" || t.kind === "candidate");
    expect(tree.layer[1]!.data.values.map((n) => [n.trial, n.score])).toEqual(kept.map((t) => [t.index, t.score]));
    expect(tree.layer[2]!.data.values.map((n) => n.label)).toContain(`#${run.bestTrial} 1.00`);
    expect(tree.layer[0]!.data.values).toHaveLength(kept.reduce((a, t) => a + t.parents.length, 0));
    expect(bundle["text/plain"]).toContain(`GEPA: ${run.trials.length} trials, best score 1, validation (chosen on it)`);
  });
});

describe("GEPA against MIPROv2 on the same task and budget", () => {
  /** Metric calls counted, and the count when each trial was recorded. */
  function tally(metric: Metric) {
    let calls = 0;
    const atTrial: number[] = [];
    // Scoring calls only: GEPA's feedback calls (a fourth argument) score no program run.
    const counted: Metric = (ex, p, t, predictor) => { if (predictor === undefined) calls++; return metric(ex, p, t, predictor); };
    Object.defineProperty(counted, "name", { value: metric.name });
    const off = Instrumentation.subscribe("optimizer.trial", (e) => { atTrial[e.payload.index as number] = calls; });
    return { counted, calls: () => calls, atTrial, off };
  }

  it("reports each one's best validation score and the metric calls it spent to reach it", async () => {
    const budget = 156;
    const g = tally(feedbackMetric);
    const gepa = new GEPA({ metric: g.counted, maxMetricCalls: budget, reflectionLM: new ScriptedLM(reflector()), seed: 7 });
    await gepa.compile({ moduleInstance: new TopicAndTone().configure((c) => { c.lm = twoRuleModel(); }), trainingExamples: train, validationExamples: val });
    g.off();

    // MIPROv2's proposer sees only what its signatures send (data summary, demos, the current
    // instruction): no feedback, so it cannot learn the rules; its demos can still help.
    const proposer = new ScriptedLM((r: ScriptedRequest) =>
      r.signature?.name === "ProposeInstruction"
        ? { proposedInstruction: `${String(r.inputs?.basicInstruction)} Follow the examples closely.` }
        : { observations: "Short texts.", summary: "Texts with a label and a tone.", programDescription: "Labels a text and its tone." });
    const m = tally(feedbackMetric);
    const mipro = new MIPROv2({ metric: m.counted, kDemos: 3, numCandidates: 6, numTrials: 20, minibatchSize: 4, seed: 7, promptModel: proposer });
    await mipro.compile({ moduleInstance: new TopicAndTone().configure((c) => { c.lm = twoRuleModel(); }), trainingExamples: train, validationExamples: val });
    m.off();

    const rows = [
      { optimizer: "GEPA", run: gepa.lastRun!, t: g },
      { optimizer: "MIPROv2", run: mipro.lastRun!, t: m },
    ].map(({ optimizer, run, t }) => ({
      optimizer, bestValidationScore: Number(run.score!.toFixed(3)), metricCallsToBest: t.atTrial[run.bestTrial!]!, metricCallsTotal: t.calls(),
    }));
    const header = "| optimizer | best validation score | metric calls to reach it | metric calls in all |";
    console.log([header, "|---|---|---|---|", ...rows.map((r) => `| ${r.optimizer} | ${r.bestValidationScore} | ${r.metricCallsToBest} | ${r.metricCallsTotal} |`)].join("\n"));
    for (const r of rows) expect(r.metricCallsTotal).toBeLessThanOrEqual(budget);
    expect(rows[0]!.bestValidationScore).toBe(1);
    expect(rows[0]!.bestValidationScore).toBeGreaterThan(rows[1]!.bestValidationScore);
  });
});
