// MIPROv2's defaults as DSPy's: a train/validation split, sampled proposals, a grounded proposer
// that sees the whole signature, and a zero-shot run that still shows the proposer demos.
import { describe, it, expect } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, MIPROv2, Module, Predict, Signature } from "../../lib/index.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";
import type { ScriptedRequest } from "../../lib/testing/index.js";
import { candidateInstructions, heldOut, KEYWORDS, lcg, makeExamples, proposals, taskModel, Topic, useTempLab } from "./task.js";

useTempLab();

const LABELS = Object.keys(KEYWORDS);

/** The task's texts with labels drawn at random (an LCG of its own): nothing about them can be learned. */
function randomLabels(n: number, seed: number, prefix: string): FewShotExample[] {
  const next = lcg(seed * 7919 + 17);
  return makeExamples(n, seed, prefix).map((ex) =>
    new FewShotExample({ input: ex.input, output: { label: LABELS[Math.floor(next() * LABELS.length)]! }, id: ex.id! }));
}

/** Exact two-sided McNemar p-value for `b` and `c` discordant pairs (binomial, p = 1/2), computed here from its definition. */
function mcnemar(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  let tail = 0;
  for (let k = 0; k <= Math.min(b, c); k++) {
    let choose = 1;
    for (let i = 0; i < k; i++) choose = (choose * (n - i)) / (i + 1);
    tail += choose / 2 ** n;
  }
  return Math.min(1, 2 * tail);
}

describe("MIPROv2 without validation examples: a random-label control", () => {
  it("reports no validation gain beyond noise, its held-out accuracy stays at chance, and no example is scored with itself as a demo", async () => {
    const gains: number[] = [];
    const pValues: number[] = [];
    const heldOutScores: number[] = [];
    const test = randomLabels(300, 99, "test");
    for (let seed = 0; seed < 10; seed++) {
      const lm = taskModel();
      const train = randomLabels(60, seed + 1, `s${seed}`);
      const mipro = new MIPROv2({ seed, promptModel: new ScriptedLM(proposals(candidateInstructions(1))) });
      const tuned = await mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train });
      const run = mipro.lastRun!;
      expect(run.summary).toMatchObject({ validation: "split", validationExamples: 48, demoPool: 12 });
      gains.push(run.summary.gain as number);
      // The gain on the validation set, tested as a user would: exact McNemar, baseline vs returned, paired by example.
      const baselineRows = run.trials.find((t) => t.kind === "baseline")!.exampleScores!;
      const bestRows = run.trials.find((t) => t.index === run.bestTrial)!.exampleScores!;
      const before = new Map(baselineRows.map((e) => [e.exampleId, e.score]));
      const up = bestRows.filter((e) => e.score === 1 && before.get(e.exampleId) === 0).length;
      const down = bestRows.filter((e) => e.score === 0 && before.get(e.exampleId) === 1).length;
      pValues.push(mcnemar(up, down));

      // Every prompt the task model received: the example being answered is never one of its demos.
      for (const r of lm.requests) {
        expect(r.read.demos.map((d) => JSON.stringify(d.input))).not.toContain(JSON.stringify(r.read.inputs));
      }
      // Demos come only from the 20% pool; the 80% that is scored never appears as a demo.
      const scoredIds = new Set(run.trials.filter((t) => t.kind === "full" || t.kind === "baseline").flatMap((t) => t.exampleScores!.map((e) => e.exampleId)));
      const demoIds = new Set(run.trials.flatMap((t) => Object.values(t.demoIds).flat()));
      expect(scoredIds.size).toBe(48);
      for (const id of demoIds) expect(scoredIds.has(id)).toBe(false);
      heldOutScores.push(await heldOut(lm, tuned.instruction, tuned.demos, test));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    if (process.env.SHOW_CONTROL) console.log(JSON.stringify({ gains, pValues, heldOutScores, meanGain: mean(gains), meanHeldOut: mean(heldOutScores) }));
    // One standard error of a difference of two accuracies near 1/3 on 48 examples is ≈ 0.096; the
    // winner of a few full evaluations gains a little by selection alone (0.069 here), but no seed's
    // gain is significant at 5% by a paired test.
    expect(mean(gains)).toBeLessThan(0.096);
    expect(pValues.filter((p) => p < 0.05)).toEqual([]);
    expect(Math.abs(mean(heldOutScores) - 1 / 3)).toBeLessThan(0.05);
  }, 60000);

  it("splits 20% / 80% with a seed, records it, and uses given validation examples as given", async () => {
    const train = makeExamples(50, 5, "t");
    const runWith = async (seed: number, validationExamples?: FewShotExample[]) => {
      const mipro = new MIPROv2({ seed, kDemos: 2, promptModel: new ScriptedLM(proposals(candidateInstructions(1))) });
      await mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = taskModel(); }), trainingExamples: train, ...(validationExamples ? { validationExamples } : {}) });
      const run = mipro.lastRun!;
      const scored = run.trials.find((t) => t.kind === "baseline")!.exampleScores!.map((e) => e.exampleId).sort();
      return { run, scored };
    };
    const a = await runWith(1);
    const again = await runWith(1);
    const b = await runWith(2);
    expect(a.scored).toHaveLength(40);
    expect(a.scored).toEqual(again.scored);
    expect(a.scored).not.toEqual(b.scored);
    expect(a.run.summary.validation).toBe("split");
    // The same list as training and validation: each example stays a possible demo, but is never one in its own prompt.
    const lm = taskModel();
    const twice = new MIPROv2({ seed: 1, kDemos: 2, promptModel: new ScriptedLM(proposals(candidateInstructions(1))) });
    await twice.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: train, validationExamples: train });
    expect(twice.lastRun!.summary).toMatchObject({ validation: "given", sharedWithValidation: 50 });
    const scoredWithDemos = lm.requests.filter((r) => r.read.demos.length > 0);
    expect(scoredWithDemos.length).toBeGreaterThan(0);
    for (const r of lm.requests) expect(r.read.demos.map((d) => JSON.stringify(d.input))).not.toContain(JSON.stringify(r.read.inputs));
    const val = makeExamples(30, 6, "v");
    const given = await runWith(1, val);
    expect(given.run.summary.validation).toBe("given");
    expect(given.scored).toEqual(val.map((e) => e.id).sort());
  }, 30000);
});

class Triage extends Signature {
  static override description = "Route a support message.";
  static override input = { message: z.string().describe("the customer's message, verbatim") };
  static override output = {
    queue: z.enum(["billing", "outage", "other"]).describe("the team that should answer"),
    urgent: z.boolean().describe("true when the customer cannot work"),
  };
}

class Draft extends Signature {
  static override description = "Write a reply.";
  static override input = { message: z.string(), queue: z.string().describe("the team answering") };
  static override output = { reply: z.string().describe("two sentences at most") };
}

class Support extends Module {
  triage = new Predict(Triage);
  draft = new Predict(Draft);
  async forward({ message }: { message: string }) {
    const t = await this.triage.call({ message });
    const d = await this.draft.call({ message, queue: t.queue });
    return { queue: t.queue, urgent: t.urgent, reply: d.reply };
  }
}

const supportExamples = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => new FewShotExample({
  input: { message: `message ${prefix} ${i}: ${["my card was charged twice", "the site is down", "how do I export"][i % 3]}` },
  output: { queue: ["billing", "outage", "other"][i % 3]!, urgent: i % 3 === 1, reply: "" },
  id: `${prefix}-${i}`,
}));

describe("MIPROv2's grounded proposer", () => {
  it("shows each predictor's full signature and its described role, and samples each proposal at temperature 1 with a rollout id of its own", async () => {
    const proposer = new ScriptedLM((r: ScriptedRequest) => {
      switch (r.signature?.name) {
        case "DescribeModule": return { moduleDescription: `role of ${String(r.inputs!.module).split(":")[0]}` };
        case "ProposeInstruction": return { proposedInstruction: `proposal ${String(r.rolloutId)}` };
        default: return { observations: "o", summary: "s", programDescription: "routes and answers support messages" };
      }
    }, { temperature: 0 });
    const lm = new SimulatedLM();
    const program = new Support().configure((c) => { c.lm = lm; });
    const metric = (ex: FewShotExample, p: Record<string, unknown>) => p.queue === ex.output.queue;
    const mipro = new MIPROv2({ mode: "balanced", kDemos: 2, seed: 3, metric, promptModel: proposer });
    await mipro.compile({ moduleInstance: program, trainingExamples: supportExamples(12, "t"), validationExamples: supportExamples(9, "v") });

    const describe = proposer.requests.filter((r) => r.signature?.name === "DescribeModule");
    expect(describe.map((r) => String(r.inputs!.module).split(":")[0])).toEqual(["triage", "draft"]);
    const proposals = proposer.requests.filter((r) => r.signature?.name === "ProposeInstruction");
    // balanced: 12 demo sets, 6 instruction candidates (the current one and 5 proposals) per predictor.
    expect(proposals).toHaveLength(10);
    expect(proposals.every((r) => r.temperature === 1)).toBe(true);
    expect(new Set(proposals.map((r) => r.rolloutId)).size).toBe(10);
    const triage = proposals.find((r) => String(r.inputs!.predictor).startsWith("triage"))!;
    const shown = String(triage.inputs!.predictor);
    expect(shown).toContain("instruction: Route a support message.");
    expect(shown).toContain('queue: one of "billing", "outage", "other" — the team that should answer');
    expect(shown).toContain("urgent: boolean — true when the customer cannot work");
    expect(shown).toContain("message: string — the customer's message, verbatim");
    expect(triage.inputs!.moduleDescription).toBe("role of triage");
    expect(String(triage.inputs!.programStructure)).toContain("draft: Predict(Draft)");
    const data = mipro.lastRun!.trials.find((t) => t.kind === "propose")!.data as { instructions: Record<string, string[]>; rolloutIds: Record<string, (number | null)[]> };
    expect(data.instructions.triage!.slice(1)).toEqual(data.rolloutIds.triage!.slice(1).map((id) => `proposal ${id}`));
  }, 30000);

  it("asks N distinct proposals (one rollout id each, at temperature 1) of an LM set to temperature 0", async () => {
    // A model whose every answer depends only on the request it gets: identical requests collide.
    const asked: string[] = [];
    const proposer = new ScriptedLM((r) => {
      if (r.signature?.name === "ProposeInstruction") {
        asked.push(`${r.temperature}/${String(r.rolloutId)}`);
        return { proposedInstruction: `proposal for rollout ${String(r.rolloutId)}` };
      }
      return { observations: "o", summary: "s", programDescription: "d", moduleDescription: "m" };
    }, { temperature: 0 });
    const mipro = new MIPROv2({ mode: "balanced", kDemos: 0, seed: 8, promptModel: proposer });
    await mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = taskModel(); }), trainingExamples: makeExamples(30, 1, "t"), validationExamples: makeExamples(20, 2, "v") });
    const list = (mipro.lastRun!.trials.find((t) => t.kind === "propose")!.data.instructions as Record<string, string[]>).self!;
    expect(list).toHaveLength(12);
    expect(new Set(list.slice(1)).size).toBe(11);
    expect(asked.every((a) => a.startsWith("1/"))).toBe(true);
  }, 30000);

  it("in a zero-shot run still bootstraps demos to show the proposer, and searches instructions only", async () => {
    const proposer = new ScriptedLM(proposals(candidateInstructions(1)));
    const lm = taskModel();
    const mipro = new MIPROv2({ kDemos: 0, seed: 2, promptModel: proposer });
    await mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = lm; }), trainingExamples: makeExamples(40, 3, "t"), validationExamples: makeExamples(30, 4, "v") });
    const run = mipro.lastRun!;
    const boot = run.trials.find((t) => t.kind === "bootstrap")!;
    expect(boot.data.forProposerOnly).toBe(true);
    expect(boot.data.tried).toBeGreaterThan(0);
    const shownDemos = proposer.requests.filter((r) => r.signature?.name === "ProposeInstruction").map((r) => String(r.inputs!.taskDemos));
    expect(shownDemos.some((d) => d.includes("Input: "))).toBe(true);
    // Every scored prompt is zero-shot: the search has one demo set, the demos as given (none).
    const searched = run.trials.filter((t) => t.kind === "minibatch" || t.kind === "full");
    expect(searched.length).toBeGreaterThan(0);
    expect(searched.every((t) => (t.choices.self as { demos: number }).demos === 0 && t.demoIds.self!.length === 0)).toBe(true);
    // Zero-shot: T = max(2·P·log2 N, 1.5·N) with P = 1 variable per predictor; light N = 6 instructions.
    expect(run.trials.filter((t) => t.kind === "minibatch")).toHaveLength(Math.floor(Math.max(2 * Math.log2(6), 9)));
    expect((run.trials.find((t) => t.kind === "propose")!.data.instructions as Record<string, string[]>).self).toHaveLength(6);
  }, 30000);
});

/** The task model at a price: every call costs $0.001 (the test doubles' own calls cost nothing). */
class PricedLM extends SimulatedLM {
  protected override async complete(request: Parameters<SimulatedLM["chat"]>[0]) {
    return { ...(await super.complete(request)), estimatedCost: 0.001 };
  }
}

describe("MIPROv2 cost before and during a run", () => {
  it("estimate() calls no model and predicts the calls and tokens of a run (memo off, so every pair is asked)", async () => {
    const lm = taskModel();
    const promptModel = new ScriptedLM(proposals(candidateInstructions(1)));
    const train = makeExamples(40, 21, "t");
    const val = makeExamples(60, 22, "v");
    const options = { mode: "light" as const, kDemos: 2, seed: 5, promptModel, memo: false };
    const program = new Predict(Topic).configure((c) => { c.lm = lm; });
    const est = await new MIPROv2(options).estimate({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    expect(lm.requests).toHaveLength(0);
    expect(promptModel.requests).toHaveLength(0);
    expect(est.cost).toBeNull(); // the simulated model has no price
    const mipro = new MIPROv2(options);
    const budget = mipro.budget(1, 40, 60);
    await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const run = mipro.lastRun!;
    const bootstrapCalls = run.trials.find((t) => t.kind === "bootstrap")!.lmCalls;
    const fulls = run.trials.filter((t) => t.kind === "full").length;
    expect(fulls).toBe(Math.ceil(budget.trials / budget.fullEvalEvery));
    // The README's formula, with the bootstrap's estimated runs in place of the ones the run made.
    expect(est.lmCalls - budget.bootstrapRuns).toBe(run.summary.lmCalls as number - bootstrapCalls);
    const tokens = (run.summary.inputTokens as number) + (run.summary.outputTokens as number);
    expect(Math.abs(est.inputTokens + est.outputTokens - tokens) / tokens).toBeLessThan(0.25);
  }, 30000);

  it("maxCost stops the run cleanly: status stopped, the crossing trial recorded, the best program so far returned", async () => {
    const lm = new PricedLM({ rules: [{ phrase: "name the category of the keyword", answer: () => ({ label: "fruit" }) }] });
    const mipro = new MIPROv2({ kDemos: 2, seed: 3, maxCost: 0.2, promptModel: new ScriptedLM(proposals(candidateInstructions(1))) });
    const program = new Predict(Topic).configure((c) => { c.lm = lm; });
    const tuned = await mipro.compile({ moduleInstance: program, trainingExamples: makeExamples(30, 1, "t"), validationExamples: makeExamples(40, 2, "v") });
    const run = mipro.lastRun!;
    expect(run.status).toBe("stopped");
    const costs = run.trials.map((t) => t.cost);
    const total = costs.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(0.2);
    expect(total - costs.at(-1)!).toBeLessThan(0.2);
    expect(lm.requests.length).toBeCloseTo(total / 0.001, 5);
    // Fewer trials than a full run makes; the result is the best fully evaluated configuration so far.
    expect(run.trials.filter((t) => t.kind === "minibatch").length).toBeLessThan(mipro.budget(1, 30, 40).trials);
    const best = run.trials[run.bestTrial!]!;
    expect(["baseline", "full"]).toContain(best.kind);
    expect(tuned.instruction).toBe(best.instructions.self);
    expect(run.summary).toMatchObject({ stopped: "maxCost", maxCost: 0.2 });
  }, 30000);
});
