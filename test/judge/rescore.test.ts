import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, Judge, LabStore, Predict, Signature, rescore, resetConfiguration, ValidationError } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";

class Capital extends Signature {
  static override input = { country: z.string() };
  static override output = { answer: z.string() };
}

const dir = mkdtempSync(join(tmpdir(), "typelm-rescore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => resetConfiguration());

const examples = (count: number) => Array.from({ length: count }, (_, n) => new FewShotExample({
  input: { country: `country ${n}` }, output: { answer: `Capital ${n}` }, id: `c-${n}`,
}));

/** A program answering right for even n, wrong for odd n, unparseable for n = 3; it throws once `locked`. */
function program() {
  const state = { locked: false };
  const lm = new ScriptedLM((req) => {
    if (state.locked) throw new Error("the program was called during rescore");
    const n = Number(/(\d+)/.exec(String(req.inputs?.["country"]))![1]);
    if (n === 3) return "no JSON here";
    return { answer: n % 2 === 0 ? `Capital ${n}` : `Nowhere ${n}` };
  });
  return { module: new Predict(Capital).configure((c) => { c.lm = lm; }), lm, state };
}

describe("rescore", () => {
  it("scores a stored run's predictions with new metrics, calls no program, and links the new run to its source", async () => {
    const lab = LabStore.open(join(dir, "a.sqlite"));
    const { module, lm, state } = program();
    const first = await new Evaluation({ lab, progress: false, name: "capitals" }).evaluate({ moduleInstance: module, testExamples: examples(6), metrics: ["accuracy"] });
    expect(first.results[3]!.error).toMatch(/^OutputError/);
    const programCalls = lm.requests.length;
    state.locked = true;

    const judgeLM = new ScriptedLM((req) => {
      const answer = (req.inputs?.["answer"] as { answer: string }).answer;
      const gold = (req.inputs?.["reference"] as { answer: string }).answer;
      return { rationale: `${answer} vs ${gold}`, verdict: answer === gold ? "pass" : "fail" };
    });
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true, lm: judgeLM });
    const again = await rescore(first.runId!, { metrics: [judge, "exact_match"], lab, progress: false });

    expect(lm.requests).toHaveLength(programCalls);
    expect(again.runId).not.toBeNull();
    expect(again.runId).not.toBe(first.runId);
    const stored = lab.run(again.runId!)!;
    expect(stored.kind).toBe("evaluation");
    expect(stored.config).toMatchObject({ rescoredFrom: first.runId, module: "Predict", metrics: ["correct", "exact_match"], examples: 6 });
    expect(stored.name).toBe("capitals");
    expect(stored.status).toBe("completed");
    expect(stored.kind === "evaluation" ? stored.rows : []).toHaveLength(6);

    // The same predictions and example ids; the failed row keeps the program's error, word for word.
    expect(again.results.map((r) => r.prediction)).toEqual(first.results.map((r) => r.prediction));
    expect(again.results.map((r) => r.exampleId)).toEqual(first.results.map((r) => r.exampleId));
    expect(again.results[3]!.error).toBe(first.results[3]!.error);
    expect(again.results.map((r) => r.scores["correct"])).toEqual([1, 0, 1, 0, 1, 0]);
    expect(again.results.map((r) => r.scores["exact_match"])).toEqual([1, 0, 1, 0, 1, 0]);
    // No program call: no program tokens; the judge's five calls (not for the failed row) are apart.
    expect(again.inputTokens).toBe(0);
    expect(again.cost).toBe(0);
    expect(again.judge.calls).toBe(5);
    // Its model was checked before the run with one call on the first stored answer, then the five.
    expect(judgeLM.requests).toHaveLength(6);
    expect(judgeLM.requests[0]!.inputs).toEqual({ inputs: { country: "country 0" }, reference: { answer: "Capital 0" }, answer: { answer: "Capital 0" } });
  });

  it("refuses an unknown run and an optimization run, naming the id", async () => {
    const lab = LabStore.open(join(dir, "b.sqlite"));
    await expect(rescore("nope", { metrics: ["accuracy"], lab })).rejects.toThrow(/rescore: no run with id "nope"/);
    const id = lab.startRun({ kind: "optimization", name: "MIPROv2", config: {} });
    await expect(rescore(id, { metrics: ["accuracy"], lab })).rejects.toThrow(ValidationError);
    await expect(rescore(id, { metrics: ["accuracy"], lab })).rejects.toThrow(/is an optimization run/);
    await expect(rescore(id, { metrics: [], lab })).rejects.toThrow(/at least one metric/);
  });
});
