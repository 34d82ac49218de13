/**
 * API.md "Examples, optimization, evaluation, registry" — SimpleOptimizer, MIPROv2, GEPA on a
 * SimulatedLM task (it answers right only when the rule's phrase is in the instruction). Imports by
 * package name (dist/).
 */
import { describe, expect, test } from "@jest/globals";
import { z } from "zod";
import {
  Evaluation, FewShotExample, GEPA, Instrumentation, LabStore, MIPROv2, Predict, Signature, SimpleOptimizer, ValidationError,
} from "typelm";
import type { TypelmEvent } from "typelm";
import { ScriptedLM, SimulatedLM } from "typelm/testing";
import { useTempLab } from "./temp-lab.js";

const CATEGORY: Record<string, "fruit" | "animal" | "tool"> = {
  apple: "fruit", pear: "fruit", plum: "fruit", grape: "fruit", lemon: "fruit", mango: "fruit",
  horse: "animal", tiger: "animal", otter: "animal", eagle: "animal", moose: "animal", camel: "animal",
  hammer: "tool", saw: "tool", drill: "tool", wrench: "tool", chisel: "tool", pliers: "tool",
};
const RULE = "name the category of the keyword";
class Categorize extends Signature {
  static override description = "Categorize the text.";
  static override input = { text: z.string() };
  static override output = { label: z.enum(["fruit", "animal", "tool"]) };
}
type Program = ReturnType<typeof program>;
const words = Object.keys(CATEGORY);
const examples = words.map((w, i) => new FewShotExample({ input: { text: `the ${w} here` }, output: { label: CATEGORY[w]! }, id: `ex-${i}` }));
const train = examples.filter((_, i) => i % 2 === 0);
const val = examples.filter((_, i) => i % 2 === 1);
const taskLM = () => new SimulatedLM({ rules: [{ phrase: RULE, answer: ({ text }) => ({ label: CATEGORY[String(text).split(" ")[1]!] }) }] });
const program = () => { const p = new Predict(Categorize); p.configure((c) => { c.lm = taskLM(); }); return p; };
const score = async (m: Program) =>
  (await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: val })).accuracy!;

useTempLab("opt");

describe("SimpleOptimizer", () => {
  test("returns a better clone; the module given is never changed", async () => {
    const m = program();
    const before = await score(m);
    const better = await new SimpleOptimizer({ seed: 7, numTrials: 4, kDemos: 0, instructions: ["Say something.", `Please ${RULE}.`] })
      .compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    expect(better).not.toBe(m);
    expect(m.instruction).toBe("Categorize the text.");
    expect(better.instruction).toContain(RULE);
    expect(await score(better)).toBeGreaterThan(before);
  });

  test("estimate counts the calls without calling a model; bad options and a short demo pool are ValidationErrors", () => {
    const m = program();
    const e = new SimpleOptimizer({ numTrials: 3, kDemos: 2 }).estimate({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    // Baseline and 3 trials on the 9 validation examples, and min(9, 2k + (k+1)·(numTrials − 2)) = 7 teacher runs for k = 2.
    expect(e.lmCalls).toBe(4 * 9 + 7);
    expect(e.inputTokens).toBeGreaterThan(0);
    expect(e.cost).toBeNull();
    expect(() => new SimpleOptimizer({ instructions: ["Fine.", " "] })).toThrow("SimpleOptimizer option instructions must be an array of non-empty strings");
    expect(() => new SimpleOptimizer({ numTrials: 0 })).toThrow(ValidationError);
    expect(() => new SimpleOptimizer({ kDemos: 5 }).estimate({ moduleInstance: m, trainingExamples: train.slice(0, 6) }))
      .toThrow("SimpleOptimizer kDemos is 5 but the demo pool has 3 examples (half of the training examples, the other half is scored): lower kDemos or add training examples");
  });
});

describe("MIPROv2", () => {
  const proposer = () => new SimulatedLM({ rules: [{ phrase: "propose a new instruction", answer: () => ({ proposedInstruction: `Please ${RULE}.` }) }] });
  const small = { kDemos: 2, numCandidates: 3, numTrials: 4, minibatchSize: 3, validationSize: 9, seed: 7 };

  test("mode 'medium' is accepted as 'balanced'; an unknown mode is a ValidationError", () => {
    const medium = new MIPROv2({ mode: "medium" }).budget(1, 200, 1000);
    const balanced = new MIPROv2({ mode: "balanced" }).budget(1, 200, 1000);
    expect({ ...medium, mode: undefined }).toEqual({ ...balanced, mode: undefined });
    expect(() => new MIPROv2({ mode: "extreme" as any })).toThrow(ValidationError);
  });

  test("compile finds the rule; lastRun holds every trial with choices, scores, calls, tokens, cost; events fire", async () => {
    const m = program();
    const mipro = new MIPROv2({ ...small, mode: "light", promptModel: proposer() });
    const names: string[] = [];
    const off = Instrumentation.subscribe(/^optimizer\./, (e: TypelmEvent) => { names.push(e.name); });
    let tuned;
    try { tuned = await mipro.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val }); } finally { off(); }
    expect(m.instruction).toBe("Categorize the text.");
    expect(tuned.instruction).toContain(RULE);
    expect(await score(tuned)).toBe(1);
    const run = mipro.lastRun!;
    expect(run.kind).toBe("optimization");
    expect(run.status).toBe("completed");
    expect(run.trials.length).toBeGreaterThan(0);
    const scored = run.trials.filter((t) => t.score !== null);
    expect(scored.length).toBeGreaterThan(0);
    for (const t of run.trials) {
      for (const key of ["index", "kind", "choices", "instructions", "score", "lmCalls", "inputTokens", "outputTokens", "cost"]) expect(t).toHaveProperty(key);
    }
    expect(run.trials.some((t) => Object.keys(t.choices).length > 0)).toBe(true);
    expect(run.trials.reduce((s, t) => s + t.lmCalls, 0)).toBeGreaterThan(0);
    expect(names[0]).toBe("optimizer.start");
    expect(names[names.length - 1]).toBe("optimizer.end");
    expect(names.filter((n) => n === "optimizer.trial").length).toBe(run.trials.length);
    // The run is in the lab store, newest first.
    const lab = LabStore.open();
    expect(lab.runs({ kind: "optimization" })[0]!.id).toBe(run.id);
    expect((lab.run(run.id) as typeof run).trials.length).toBe(run.trials.length);
  });

  test("compile({ resume: runId }) of a finished run gives the same result without new trials", async () => {
    const mipro = new MIPROv2({ ...small, promptModel: proposer() });
    const args = { moduleInstance: program(), trainingExamples: train, validationExamples: val };
    const first = await mipro.compile(args);
    const run = mipro.lastRun!;
    const again = await mipro.compile({ ...args, resume: run.id });
    expect(again.instruction).toBe(first.instruction);
    expect(mipro.lastRun!.trials.map((t) => [t.kind, t.score])).toEqual(run.trials.map((t) => [t.kind, t.score]));
  });

  test("kDemos larger than the training set is a ValidationError before any model call", async () => {
    const lm = taskLM();
    const m = new Predict(Categorize);
    m.configure((c) => { c.lm = lm; });
    await expect(new MIPROv2({ kDemos: 50 }).compile({ moduleInstance: m, trainingExamples: train.slice(0, 3), validationExamples: val }))
      .rejects.toThrow(ValidationError);
    expect(lm.requests).toHaveLength(0);
  });
});

describe("GEPA", () => {
  // The reflection model reads the feedback in its prompt: when it holds the rule, it proposes it.
  const reflectionLM = () => new ScriptedLM((req) => {
    const text = req.messages.map((m) => m.content).join("\n");
    return { newInstruction: text.includes("HINT:") ? `Please ${RULE}.` : "Categorize the text carefully." };
  });
  const metric = (e: FewShotExample, p: any) => (p.label === e.output.label
    ? { score: 1, feedback: "Right." }
    : { score: 0, feedback: `Wrong: expected ${String(e.output.label)}. HINT: ${RULE}.` });

  test("metric feedback drives the evolution; the budget (maxMetricCalls) is never exceeded", async () => {
    const m = program();
    const gepa = new GEPA({ metric, maxMetricCalls: 60, reflectionLM: reflectionLM(), seed: 7 });
    const evolved = await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    expect(m.instruction).toBe("Categorize the text.");
    expect(evolved.instruction).toContain(RULE);
    const run = gepa.lastRun!;
    expect(run.status).toBe("completed");
    expect(Math.max(...run.trials.map((t) => t.budgetSpent))).toBeLessThanOrEqual(60);
    const kept = run.trials.filter((t) => t.kind === "candidate");
    expect(kept.length).toBeGreaterThan(0);
    expect(kept[0]!.parents.length).toBeGreaterThan(0);
    expect(kept[0]!.exampleScores?.length).toBe(val.length);
    // The store holds the same candidates, parents and per-example scores.
    const stored = LabStore.open().run(run.id) as typeof run;
    expect(stored.trials.map((t) => [t.kind, t.parents, t.exampleScores?.length ?? null, t.budgetSpent]))
      .toEqual(run.trials.map((t) => [t.kind, t.parents, t.exampleScores?.length ?? null, t.budgetSpent]));
  });

  test("mode 'medium' is accepted as 'balanced'; a budget smaller than one validation pass is a ValidationError", async () => {
    expect(new GEPA({ mode: "medium" }).budget(1, 100)).toBe(new GEPA({ mode: "balanced" }).budget(1, 100));
    expect(new GEPA({ mode: "light" }).budget(1, 100)).toBeLessThan(new GEPA({ mode: "heavy" }).budget(1, 100));
    await expect(new GEPA({ maxMetricCalls: 3, reflectionLM: reflectionLM() }).compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val }))
      .rejects.toThrow(ValidationError);
  });

  test("estimate counts program and reflection calls without calling a model; conflicting options are ValidationErrors", () => {
    const reflector = reflectionLM();
    const e = new GEPA({ metric, maxMetricCalls: 60, reflectionLM: reflector }).estimate({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
    // B = 60 program calls; R = ⌊(B − V)·P / (V + 2·b·P)⌋ = ⌊51 / 15⌋ = 3 reflections for V = 9, P = 1, b = 3.
    expect(e.lmCalls).toBe(60 + 3);
    expect(e.inputTokens).toBeGreaterThan(0);
    expect(reflector.requests).toHaveLength(0);
    expect(() => new GEPA({ mode: "light", maxMetricCalls: 10 }))
      .toThrow('GEPA takes a budget as mode or maxMetricCalls, not both: received mode "light" and maxMetricCalls 10; drop one');
    expect(() => new GEPA({ candidateSelection: "worst" as any })).toThrow('GEPA candidateSelection must be "pareto" or "best"; received "worst"');
    expect(() => new GEPA({ maxMetricCalls: 5 }).estimate({ moduleInstance: program(), trainingExamples: train, validationExamples: val }))
      .toThrow("GEPA maxMetricCalls is 5, but scoring the seed program once on the 9 validation examples takes 9 metric calls");
  });

  test("with a reflection LM that proposes nothing useful, GEPA returns the seed program and says so", async () => {
    const useless = new ScriptedLM(() => ({ newInstruction: "Categorize the text." }));
    const gepa = new GEPA({ metric, maxMetricCalls: 40, reflectionLM: useless, seed: 3 });
    const m = program();
    const out = await gepa.compile({ moduleInstance: m, trainingExamples: train, validationExamples: val });
    expect(out.instruction).toBe("Categorize the text.");
    expect(gepa.lastRun!.summary.seedReturned).toBe(true);
    expect(String(gepa.lastRun!.summary.note)).toMatch(/\w/);
  });

  test("a metric returning a bare number still works", async () => {
    const gepa = new GEPA({ metric: (e: FewShotExample, p: any) => (p.label === e.output.label ? 1 : 0), maxMetricCalls: 30, reflectionLM: reflectionLM(), seed: 1 });
    await gepa.compile({ moduleInstance: program(), trainingExamples: train, validationExamples: val });
    expect(gepa.lastRun!.status).toBe("completed");
  });
});
