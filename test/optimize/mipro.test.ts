import { describe, it, expect } from "@jest/globals";
import { configure } from "../../lib/config.js";
import { Instrumentation } from "../../lib/instrument/bus.js";
import { FewShotExample, LabStore, MIPROv2, Predict, ValidationError } from "../../lib/index.js";
import { lastScore } from "../../lib/store/module-score.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";
import { TIPS } from "../../lib/optimize/proposal-signatures.js";
import { candidateInstructions, heldOut, makeExamples, proposals, RULE_PHRASE, taskModel, Topic, useTempLab } from "./task.js";

const train = makeExamples(30, 1, "train");
const val = makeExamples(40, 2, "val");
const test = makeExamples(60, 3, "test");

const labFile = useTempLab();

/** Held-out accuracy on the test examples. */
const heldOutTest = (lm: SimulatedLM, instruction: string, demos: readonly FewShotExample[]) => heldOut(lm, instruction, demos, test);

function setup(ruleAt: number, options: { promptBlind?: boolean; seed?: number } = {}) {
  const lm = taskModel({ promptBlind: options.promptBlind });
  const program = new Predict(Topic).configure((c) => { c.lm = lm; });
  const mipro = new MIPROv2({ kDemos: 3, numCandidates: 6, mode: "light", seed: options.seed ?? 7, promptModel: new ScriptedLM(proposals(candidateInstructions(ruleAt))) });
  return { lm, program, mipro };
}

describe("MIPROv2 on a SimulatedLM task", () => {
  it("beats the baseline on held-out examples and lands within 5 points of the exhaustively computed best configuration", async () => {
    const { lm, program, mipro } = setup(2);
    const tuned = await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const run = mipro.lastRun!;
    const instructions = run.trials.find((t) => t.kind === "propose")!.data.instructions as Record<string, string[]>;
    const sets = (run.trials.find((t) => t.kind === "bootstrap")!.data.sets as Record<string, unknown[][]>).self!.map((s) => s.map((d) => FewShotExample.fromJSON(d)));
    expect(instructions.self).toHaveLength(6);
    expect(sets).toHaveLength(6);
    let best = 0;
    for (const instruction of instructions.self!) for (const demos of sets) best = Math.max(best, await heldOutTest(lm, instruction, demos));
    const baseline = await heldOutTest(lm, program.instruction, program.demos);
    const score = await heldOutTest(lm, tuned.instruction, tuned.demos);
    expect(best).toBe(1);
    expect(score).toBeGreaterThan(baseline);
    expect(score).toBeGreaterThanOrEqual(best - 0.05);
    expect(lastScore(tuned)).toBe(run.score);
    expect(run.status).toBe("completed");
    expect(run.summary.gain).toBeGreaterThan(0);
    const sum = (k: "lmCalls" | "inputTokens" | "outputTokens" | "cost") => run.trials.reduce((a, t) => a + t[k], 0);
    expect(run.summary).toMatchObject({ lmCalls: sum("lmCalls"), inputTokens: sum("inputTokens"), outputTokens: sum("outputTokens"), cost: sum("cost") });
    expect(run.summary.lmCalls).toBeGreaterThan(run.trials.length);
  });

  it("chooses the instruction that holds the rule, wherever the proposer put it", async () => {
    const chosen: number[] = [];
    for (const at of [0, 2, 4]) {
      const { program, mipro } = setup(at);
      const tuned = await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
      expect(tuned.instruction).toBe(candidateInstructions(at)[at]);
      expect(tuned.instruction).toContain(RULE_PHRASE);
      const run = mipro.lastRun!;
      chosen.push((run.trials[run.bestTrial!]!.choices.self as { instruction: number }).instruction);
    }
    expect(chosen).toEqual([1, 3, 5]); // candidate 0 is the original instruction
  });

  it("reports no gain with a prompt-blind model and returns the baseline configuration", async () => {
    const { lm, program, mipro } = setup(2, { promptBlind: true });
    const tuned = await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const run = mipro.lastRun!;
    expect(run.summary.gain).toBe(0);
    expect(run.trials[run.bestTrial!]!.kind).toBe("baseline");
    expect(tuned.instruction).toBe(program.instruction);
    expect(tuned.demos).toEqual([]);
    expect(await heldOutTest(lm, tuned.instruction, tuned.demos)).toBe(await heldOutTest(lm, program.instruction, program.demos));
    // The search did try other configurations; they just never scored higher.
    expect(run.trials.filter((t) => t.kind === "minibatch" && JSON.stringify(t.choices) !== JSON.stringify({ self: { instruction: 0, demos: 0 } })).length).toBeGreaterThan(0);
  });

  it("bootstraps demos with a teacher carrying labelled demos (never the example itself) until each set's quota of passed runs, each set topped up to kDemos", async () => {
    const { lm, program, mipro } = setup(2);
    await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const boot = mipro.lastRun!.trials.find((t) => t.kind === "bootstrap")!;
    const sets = (boot.data.sets as Record<string, { id: string; input: { text: string }; output: { label: string } }[][]>).self!;
    const quotas = boot.data.quotas as number[];
    const byId = new Map(train.map((ex) => [ex.id, ex]));
    expect(sets).toHaveLength(6);
    expect(sets[0]).toEqual([]);
    // Set 1 is labelled only; set 2 bootstraps kDemos (3); sets 3..5 draw a quota from 1..kDemos.
    expect(quotas.slice(0, 3)).toEqual([0, 0, 3]);
    for (const q of quotas.slice(3)) expect(q).toBeGreaterThanOrEqual(1);
    for (const q of quotas.slice(3)) expect(q).toBeLessThanOrEqual(3);
    // Every set holds kDemos: a bootstrapped set is topped up with labelled demos (DSPy's max_labeled_demos).
    for (const set of sets.slice(1)) expect(set).toHaveLength(3);
    for (const d of sets.flat()) {
      expect(d.output).toEqual(byId.get(d.id)!.output);
      expect(d.input).toEqual(byId.get(d.id)!.input);
    }
    // The teacher ran each pool example at most once, and never with that example among its demos.
    const teacherIds = (boot.data.teacherDemoIds as Record<string, string[]>).self!;
    expect(teacherIds).toHaveLength(3);
    const bootstrapRequests = lm.requests.slice(0, boot.data.tried as number);
    expect(bootstrapRequests.length).toBe(boot.data.tried);
    const texts = bootstrapRequests.map((r) => String(r.read.inputs.text));
    expect(new Set(texts).size).toBe(texts.length);
    for (const r of bootstrapRequests) {
      expect(r.read.demos.length).toBeGreaterThanOrEqual(2);
      expect(r.read.demos.map((d) => d.input.text)).not.toContain(r.read.inputs.text);
    }
    expect(boot.data.kept).toBeGreaterThan(0);
    expect(boot.data.kept).toBeLessThanOrEqual(boot.data.tried as number);
    expect(boot.data.failures).toEqual([]);
  });

  it("runs its proposal steps on a SimulatedLM: a rule on the proposer's instruction writes the candidates from the prompt's tip and summary", async () => {
    const lm = taskModel();
    const promptModel = new SimulatedLM({
      rules: [
        { phrase: "summarize in two or three sentences", answer: () => ({ summary: "Short texts about animals, fruit and tools." }) },
        { phrase: "propose a new instruction", answer: (i) => ({ proposedInstruction: `Label it. Data: ${i.datasetSummary} Tip: ${i.tip}` }) },
      ],
    });
    const mipro = new MIPROv2({ kDemos: 2, mode: "light", numCandidates: 6, seed: 4, promptModel });
    await mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: val });
    const data = mipro.lastRun!.trials.find((t) => t.kind === "propose")!.data as { instructions: { self: string[] }; tips: { self: string[] }; failures: string[] };
    expect(data.instructions.self[0]).toBe("Label the text.");
    for (let i = 1; i < 6; i++) {
      expect(data.instructions.self[i]).toBe(`Label it. Data: Short texts about animals, fruit and tools. Tip: ${TIPS[data.tips.self[i]!]}`.trim());
    }
    expect(new Set(data.tips.self.slice(1)).size).toBeGreaterThan(1);
    expect(data.failures).toEqual([]);
  });

  it("keeps the current instruction for proposals that come back empty, and lists them", async () => {
    const lm = taskModel();
    const mipro = new MIPROv2({ kDemos: 2, mode: "light", numCandidates: 6, seed: 4, promptModel: new SimulatedLM() });
    await mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: val });
    const data = mipro.lastRun!.trials.find((t) => t.kind === "propose")!.data as { instructions: { self: string[] }; failures: string[] };
    expect(data.instructions.self).toEqual(Array(6).fill("Label the text."));
    expect(data.failures).toEqual([1, 2, 3, 4, 5].map((i) => `self #${i}: empty proposal`));
  });

  it("never changes the module it was given", async () => {
    const { program, mipro } = setup(2);
    program.demos = [train[0]!];
    const before = JSON.stringify(program.dumpState());
    const tuned = await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    expect(JSON.stringify(program.dumpState())).toBe(before);
    expect(tuned).not.toBe(program);
  });

  it("records every trial in the lab store as it finishes, with events, and the same trials in lastRun", async () => {
    const { program, mipro } = setup(2);
    const events: string[] = [];
    const storedDuring: number[] = [];
    Instrumentation.subscribe(/^optimizer\./, (e) => {
      events.push(e.name);
      if (e.name === "optimizer.trial") storedDuring.push(LabStore.open(labFile()).trials(e.payload.runId as string).length);
    });
    await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const run = mipro.lastRun!;
    const stored = LabStore.open(labFile()).run(run.id)!;
    expect(stored).toMatchObject({ kind: "optimization", status: "completed", bestTrial: run.bestTrial, score: run.score });
    expect(stored.kind === "optimization" && stored.trials).toEqual(run.trials);
    expect(storedDuring).toEqual(run.trials.map((t) => t.index + 1)); // each trial was in the file when its event fired
    expect(events[0]).toBe("optimizer.start");
    expect(events.at(-1)).toBe("optimizer.end");
    expect(events.filter((e) => e === "optimizer.trial")).toHaveLength(run.trials.length);
    const minibatch = run.trials.find((t) => t.kind === "minibatch")!;
    expect(minibatch).toMatchObject({ lmCalls: 25, error: null });
    expect(minibatch.inputTokens).toBeGreaterThan(0);
    expect(minibatch.exampleScores).toHaveLength(25);
    expect(Object.keys(minibatch.instructions)).toEqual(["self"]);
    const full = run.trials.filter((t) => t.kind === "full");
    expect(full.length).toBeGreaterThan(0);
    // A full evaluation scores the 40 validation examples; those its configuration met in earlier
    // minibatches are reused, and only the rest reach the model.
    for (const t of full) {
      expect(t.exampleScores).toHaveLength(40);
      expect(t.lmCalls + t.reused).toBe(40);
    }
    expect(full.some((t) => t.reused > 0)).toBe(true);
  });

  it("scores each (configuration, example) pair once per run: a pair met again is reused with no model call", async () => {
    const { lm, program, mipro } = setup(2);
    await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const run = mipro.lastRun!;
    const scored = run.trials.filter((t) => ["baseline", "minibatch", "full"].includes(t.kind));
    // The pairs scored, counted from the trials' own records: each distinct pair reached the model once.
    const pairs = new Map<string, number>();
    for (const t of scored) for (const e of t.exampleScores!) {
      const key = JSON.stringify([t.instructions, t.demoIds, e.exampleId]);
      pairs.set(key, (pairs.get(key) ?? 0) + 1);
    }
    const total = [...pairs.values()].reduce((a, b) => a + b, 0);
    const reused = scored.reduce((n, t) => n + t.reused, 0);
    expect(reused).toBe(total - pairs.size);
    expect(reused).toBeGreaterThan(0);
    expect(scored.reduce((n, t) => n + t.lmCalls, 0)).toBe(pairs.size);
    // The task model's requests after the bootstrap: one per distinct pair.
    const bootstrapCalls = run.trials.find((t) => t.kind === "bootstrap")!.lmCalls;
    expect(lm.requests.length - bootstrapCalls).toBe(pairs.size);
    // A reused score is the score the pair got the first time.
    const first = new Map<string, number>();
    for (const t of scored) for (const e of t.exampleScores!) {
      const key = JSON.stringify([t.instructions, t.demoIds, e.exampleId]);
      if (first.has(key)) expect(e.score).toBe(first.get(key));
      else first.set(key, e.score);
    }
  });

  it("records trials whose metric returns NaN or throws as failed and fails the run with that error", async () => {
    for (const [metric, message] of [
      [() => NaN, /returned NaN/],
      [() => { throw new RangeError("metric exploded"); }, /metric exploded/],
    ] as const) {
      const { program, mipro: _ } = setup(2);
      const mipro = new MIPROv2({ kDemos: 0, mode: "light", metric, seed: 1, promptModel: new ScriptedLM(proposals(candidateInstructions(1))) });
      await expect(mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val })).rejects.toThrow(message);
      const run = mipro.lastRun!;
      expect(run.status).toBe("failed");
      const failed = run.trials.filter((t) => t.error !== null);
      expect(failed.length).toBeGreaterThan(0);
      expect(failed[0]!.error).toMatch(message);
      expect(failed[0]!.score).toBeNull();
      const stored = LabStore.open(labFile()).run(run.id)!;
      expect(stored.status).toBe("failed");
      expect(stored.kind === "optimization" && stored.trials.map((t) => t.error)).toEqual(run.trials.map((t) => t.error));
    }
  });

  it("rejects bad input before any model call, saying what was wrong", async () => {
    const { program, lm } = setup(2);
    const mk = (o: ConstructorParameters<typeof MIPROv2>[0]) => new MIPROv2({ promptModel: new ScriptedLM(proposals(["x"])), ...o });
    await expect(mk({}).compile({ moduleInstance: program, trainingExamples: [], validationExamples: val })).rejects.toThrow(/trainingExamples must be a non-empty array/);
    await expect(mk({}).compile({ moduleInstance: program, trainingExamples: train, validationExamples: [] })).rejects.toThrow(/validationExamples must be a non-empty array/);
    const missing = [...train.slice(0, 5), new FewShotExample({ input: { text: "x" }, output: {}, id: "bad" })];
    await expect(mk({}).compile({ moduleInstance: program, trainingExamples: missing })).rejects.toThrow(/trainingExamples\[5\] \(id "bad"\) has no expected value for output field "label"/);
    await expect(mk({ kDemos: 8 }).compile({ moduleInstance: program, trainingExamples: train.slice(0, 5), validationExamples: val })).rejects.toThrow(
      /kDemos is 8 but there are only 5 training examples/,
    );
    await expect(mk({ kDemos: 4 }).compile({ moduleInstance: program, trainingExamples: train.slice(0, 10) })).rejects.toThrow(
      /kDemos is 4 but the demo pool holds 2 \(20% of the 10 training examples; the other 80% are the validation examples\)/,
    );
    await expect(mk({ kDemos: 1 }).compile({ moduleInstance: program, trainingExamples: train.slice(0, 1) })).rejects.toThrow(/needs at least 2; received 1/);
    expect(() => new MIPROv2({ mode: "turbo" as never })).toThrow(ValidationError);
    expect(() => new MIPROv2({ mode: "turbo" as never })).toThrow(/mode "turbo" is not known: expected "light", "balanced" or "heavy"/);
    expect(() => new MIPROv2({ numCandidates: 0 })).toThrow(/numCandidates must be an integer ≥ 1/);
    expect(lm.requests).toHaveLength(0);
  });

  it("refuses two examples of one list sharing an id (trials, demo sets and resume name examples by id)", async () => {
    const { program, lm } = setup(2);
    const copy = train[3]!;
    const twice = [...train.slice(0, 8), new FewShotExample({ input: { text: "a new text" }, output: copy.output, id: copy.id! })];
    const attempt = new MIPROv2({ kDemos: 3, promptModel: new ScriptedLM(proposals(["x"])) }).compile({ moduleInstance: program, trainingExamples: train, validationExamples: twice });
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(new MIPROv2({ kDemos: 3 }).compile({ moduleInstance: program, trainingExamples: twice })).rejects.toThrow(
      /trainingExamples\[8\] has id "train-3", as does trainingExamples\[3\]: give each example its own id \(or none, to be named by position\)/,
    );
    expect(lm.requests).toHaveLength(0);
  });

  it("accepts \"medium\" as \"balanced\"", () => {
    expect(new MIPROv2({ mode: "medium" }).budget(1, 1000, 1000)).toEqual(new MIPROv2({ mode: "balanced" }).budget(1, 1000, 1000));
  });

  it("records nothing in a file when the lab is switched off, and still returns the tuned module", async () => {
    configure((c) => { c.lab = false; });
    const { program, mipro } = setup(2);
    const tuned = await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    expect(tuned.instruction).toContain(RULE_PHRASE);
    expect(mipro.lastRun!.status).toBe("completed");
    await expect(mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val, resume: mipro.lastRun!.id })).rejects.toThrow(/lab store is switched off/);
  });
});
