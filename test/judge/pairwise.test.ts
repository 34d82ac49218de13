import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, FewShotExample, PairwiseJudge, Predict, Signature, ValidationError, resetConfiguration, type EvaluationReport } from "../../lib/index.js";
import { ScriptedLM, type ScriptedRequest } from "../../lib/testing/index.js";

class Answer extends Signature {
  static override input = { question: z.string() };
  static override output = { answer: z.string() };
}

afterEach(() => resetConfiguration());

const examples = (count: number) => Array.from({ length: count }, (_, n) => new FewShotExample({
  input: { question: `question ${n}` }, output: { answer: `gold ${n}` }, id: `q-${n}`,
}));

/** An evaluation of a program whose answer to question n is `answer(n)` (a thrown Error for null). */
async function run(answer: (n: number) => string | null, count: number): Promise<EvaluationReport> {
  const lm = new ScriptedLM((req) => {
    const n = Number(/(\d+)/.exec(String(req.inputs?.["question"]))![1]);
    const a = answer(n);
    return a === null ? "not JSON at all" : { answer: a };
  });
  return new Evaluation({ record: false, progress: false })
    .evaluate({ moduleInstance: new Predict(Answer).configure((c) => { c.lm = lm; }), testExamples: examples(count), metrics: ["accuracy"] });
}

const answerOf = (req: ScriptedRequest, field: "first" | "second") => (req.inputs?.[field] as { answer: string }).answer;

describe("PairwiseJudge.compare", () => {
  it("turns a judge that always prefers the first answer into all ties, every one inconsistent", async () => {
    const a = await run((n) => `short ${n}`, 12);
    const b = await run((n) => `a much longer answer ${n}`, 12);
    const lm = new ScriptedLM(() => ({ rationale: "the first one reads better", winner: "first" }));
    const w = await new PairwiseJudge({ criteria: "Which answer is better?", lm }).compare(a, b);
    expect(w).toMatchObject({ n: 12, winsA: 0, winsB: 0, ties: 12, inconsistent: 12, winRate: 0.5, pValue: 1, failures: 0 });
    // Every outcome ½: no spread, yet not the point [0.5, 0.5] (the bound of ½ as a share of 12).
    expect(w.ciMethod).toBe("wilson");
    expect(w.ci[0]).toBeLessThan(0.3);
    expect(w.ci[1]).toBeGreaterThan(0.7);
    // Both orders were asked for every example.
    expect(lm.requests).toHaveLength(24);
    expect(w.judge.calls).toBe(24);
    expect(w.rows[0]).toMatchObject({ outcome: "tie", inconsistent: true, aFirst: { winner: "first" }, bFirst: { winner: "first" } });
  });

  it("counts wins the judge gives in both orders, win rate (winsB + ties/2)/n with its interval, and the sign test p-value", async () => {
    // B is longer (better, for this judge) on 8 of 10 examples, A on 2.
    const a = await run((n) => (n < 2 ? `a long long answer ${n}` : `a ${n}`), 10);
    const b = await run((n) => (n < 2 ? `b ${n}` : `b long long answer ${n}`), 10);
    const lm = new ScriptedLM((req) => {
      const first = answerOf(req, "first"), second = answerOf(req, "second");
      return { rationale: "longer is better", winner: first.length > second.length ? "first" : second.length > first.length ? "second" : "tie" };
    });
    const w = await new PairwiseJudge({ criteria: "The more complete answer.", lm }).compare(a, b);
    expect(w).toMatchObject({ n: 10, winsA: 2, winsB: 8, ties: 0, inconsistent: 0, winRate: 0.8 });
    // Sign test by hand: 2·P(X ≤ 2), X ~ Binomial(10, 1/2) = 2·(1 + 10 + 45)/1024.
    expect(w.pValue).toBeCloseTo((2 * (1 + 10 + 45)) / 1024, 12);
    // No tie: a share of wins, the modified Wilson interval of 8 of 10: the low end Wilson's,
    // (p̂ + z²/2n − z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n); the high end, 2 from the top, 1 − λ/10 with P(Poisson(λ) ≥ 2) = 0.05.
    expect(w.ciMethod).toBe("wilson");
    const z = 1.959963984540054, z2 = z * z;
    const center = (0.8 + z2 / 20) / (1 + z2 / 10), half = (z / (1 + z2 / 10)) * Math.sqrt(0.016 + z2 / 400);
    let lo = 0, hi = 5;
    for (let i = 0; i < 100; i++) {
      const mid = (lo + hi) / 2;
      if (1 - Math.exp(-mid) * (1 + mid) < 0.05) lo = mid;
      else hi = mid;
    }
    expect(w.ci[0]).toBeCloseTo(center - half, 12);
    expect(w.ci[1]).toBeCloseTo(1 - lo / 10, 10);
    expect(w.ci[0]).toBeLessThan(0.8);
    expect(w.ci[1]).toBeGreaterThan(0.8);
    expect(w.ci[1]).toBeLessThanOrEqual(1);
  });

  it("lets an answer beat a failed example without a judge call, and leaves a failing judge call out with its error", async () => {
    const a = await run((n) => (n === 0 ? null : `a ${n}`), 4);
    const b = await run((n) => `b ${n}`, 4);
    const lm = new ScriptedLM((req) => {
      if (answerOf(req, "first") === "a 3" || answerOf(req, "second") === "a 3") return "I cannot decide.";
      return { rationale: "same", winner: "tie" };
    });
    const w = await new PairwiseJudge({ criteria: "Better.", lm }).compare(a, b);
    expect(w.rows[0]).toMatchObject({ outcome: "B", note: "A failed", aFirst: null });
    expect(w.rows[3]!.outcome).toBeNull();
    expect(w.rows[3]!.error).toMatch(/^OutputError/);
    expect(w).toMatchObject({ n: 3, winsB: 1, ties: 2, failures: 1, winRate: (1 + 1) / 3 });
    // Examples 1 and 2 in both orders, example 3 in both orders (both failed to parse); none for example 0.
    expect(lm.requests).toHaveLength(6);
  });

  it("refuses reports of different examples", async () => {
    const a = await run((n) => `a ${n}`, 3);
    const b = await run((n) => `b ${n}`, 4);
    await expect(new PairwiseJudge({ criteria: "x", lm: new ScriptedLM([]) }).compare(a, b)).rejects.toThrow(/reportA has 3 rows and reportB 4/);
  });
});

describe("PairwiseJudge called directly", () => {
  it("answers in the order given, and refuses a malformed input or a missing reference with the field, before any model call", async () => {
    const lm = new ScriptedLM((req) => ({ rationale: `${answerOf(req, "first")} over ${answerOf(req, "second")}`, winner: "first" }));
    const judge = new PairwiseJudge({ criteria: "Better.", reference: true, lm });
    const bad = judge.call({ inputs: {}, first: { answer: "a" } } as never);
    await expect(bad).rejects.toBeInstanceOf(ValidationError);
    await expect(bad).rejects.toMatchObject({ field: "input", message: "PairwiseJudge: expected { inputs: {...}, first: {...}, second: {...} }" });
    const unreferenced = judge.call({ inputs: {}, first: { answer: "a" }, second: { answer: "b" } });
    await expect(unreferenced).rejects.toBeInstanceOf(ValidationError);
    await expect(unreferenced).rejects.toMatchObject({ field: "expected", message: "PairwiseJudge with reference: true was given no expected outputs" });
    expect(lm.requests).toHaveLength(0);
    expect(await judge.call({ inputs: {}, first: { answer: "a" }, second: { answer: "b" }, expected: { answer: "a" } })).toEqual({ rationale: "a over b", winner: "first" });
    expect(lm.requests).toHaveLength(1);
  });
});
