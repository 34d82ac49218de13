import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { FewShotExample, Judge, MIPROv2, calibrate, compare, configure, resetConfiguration } from "../../lib/index.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";
import { lcg, proposals } from "../optimize/task.js";

beforeEach(() => configure((c) => { c.lab = false; }));
afterEach(() => resetConfiguration());

const RULE = "compare the city in the answer with the reference";

/**
 * Human-labelled judgements: the question asks for the capital of a country, the judged answer is the
 * right city or another one, and the human verdict is pass exactly when it is the right city. Two in
 * three answers are wrong, so a judge that passes everything agrees with people on about a third.
 */
function labelled(n: number, seed: number, prefix: string): FewShotExample[] {
  const next = lcg(seed);
  return Array.from({ length: n }, (_, i) => {
    const right = next() < 1 / 3;
    const gold = `City${Math.floor(next() * 1000)}`;
    const answer = right ? gold : `Town${Math.floor(next() * 1000)}`;
    return new FewShotExample({
      input: { inputs: { question: `capital of country ${i}?` }, prediction: { answer }, expected: { answer: gold } },
      output: { verdict: right ? "pass" : "fail" },
      id: `${prefix}-${i}`,
    });
  });
}

/**
 * The judge's model: with the rule in its instruction it compares the cities; otherwise it copies the
 * nearest demo's verdict, or (no demos) says "pass" to everything, the lenient judge people complain of.
 */
function judgeModel(promptBlind = false): SimulatedLM {
  return new SimulatedLM({
    promptBlind,
    rules: [{
      phrase: RULE,
      answer: (inputs) => {
        const answer = (inputs["answer"] as { answer: string }).answer;
        const gold = (inputs["reference"] as { answer: string }).answer;
        return { rationale: `${answer} vs ${gold}`, verdict: answer === gold ? "pass" : "fail" };
      },
    }],
  });
}

describe("aligning a judge with MIPROv2 against human labels", () => {
  it("raises a lenient judge's held-out agreement and κ, with a paired test on the held-out examples", async () => {
    const train = labelled(30, 11, "train");
    const val = labelled(30, 12, "val");
    const heldOut = labelled(60, 13, "test");
    const lm = judgeModel();
    const judge = new Judge({ name: "correct", criteria: "The answer is right.", reference: true, lm });

    const before = await calibrate(judge, heldOut, { record: false, progress: false });
    // Passes everything: agreement is the share of human passes, κ 0 (NaN-free: humans used both verdicts).
    expect(before.confusion.matrix.map((row) => row[1])).toEqual([0, 0]);
    expect(before.kappa).toBeCloseTo(0, 12);

    const candidates = [
      "Judge the answer fairly.", "Decide whether the answer is acceptable.", `Read the task, then ${RULE}: pass only when they match.`,
      "Be lenient with reasonable answers.", "Check the answer's style.",
    ];
    const mipro = new MIPROv2({ kDemos: 3, numCandidates: 6, mode: "light", seed: 7, promptModel: new ScriptedLM(proposals(candidates)), progress: false });
    // The default metric compares the expected output fields: the judge's verdict against the human one.
    const aligned = await mipro.compile({ moduleInstance: judge, trainingExamples: train, validationExamples: val });
    expect(aligned).toBeInstanceOf(Judge);
    expect(aligned.predictor.instruction).toContain(RULE);
    // The judge given is left as it was.
    expect(judge.predictor.instruction).not.toContain(RULE);

    const after = await calibrate(aligned, heldOut, { record: false, progress: false });
    expect(after.accuracy).toBeGreaterThan(before.accuracy + 0.3);
    expect(after.kappa).toBeGreaterThan(0.8);
    expect(after.kappaCi[0]).toBeGreaterThan(before.kappaCi[1]);
    // Paired on the same held-out examples: exact McNemar on per-example agreement.
    const paired = compare(before.report, after.report, { metric: "agreement" });
    expect(paired.test).toBe("mcnemar-exact");
    expect(paired.pValue).toBeLessThan(0.001);
    expect(paired.diff).toBeCloseTo(after.accuracy - before.accuracy, 12);
  });

  it("finds no gain for a judge model that ignores its instruction and demos (the control)", async () => {
    const heldOut = labelled(60, 13, "test");
    const judge = new Judge({ name: "correct", criteria: "The answer is right.", reference: true, lm: judgeModel(true) });
    const candidates = [`Read the task, then ${RULE}: pass only when they match.`, "Judge the answer fairly."];
    const mipro = new MIPROv2({ kDemos: 3, numCandidates: 6, mode: "light", seed: 7, promptModel: new ScriptedLM(proposals(candidates)), progress: false });
    const aligned = await mipro.compile({ moduleInstance: judge, trainingExamples: labelled(30, 11, "train"), validationExamples: labelled(30, 12, "val") });
    const before = await calibrate(judge, heldOut, { record: false, progress: false });
    const after = await calibrate(aligned, heldOut, { record: false, progress: false });
    expect(mipro.lastRun!.summary.gain).toBe(0);
    expect(after.accuracy).toBe(before.accuracy);
  });
});
