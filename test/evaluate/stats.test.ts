import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, EvaluationReport, FewShotExample, Predict, Signature, ValidationError, compare, resetConfiguration } from "../../lib/index.js";
import type { ComparableReport } from "../../lib/index.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import { ScriptedLM } from "../../lib/testing/index.js";

afterEach(() => resetConfiguration());

/** One row scoring `score` on `metric`; `id` pairs it across reports. */
function row(index: number, id: string | null, score: number, metric = "accuracy"): EvaluationRow {
  return {
    index, exampleId: id, inputs: { text: `text ${index}` }, expected: { label: "x" }, prediction: { label: score === 1 ? "x" : "y" },
    scores: { [metric]: score }, error: null, durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
  };
}

/** A report of per-row scores, its metric the mean of them. */
function report(scores: readonly number[], metric = "accuracy", ids = scores.map((_, i) => `ex-${i}`)): ComparableReport {
  return { results: scores.map((s, i) => row(i, ids[i]!, s, metric)), metrics: { [metric]: scores.reduce((x, y) => x + y, 0) / scores.length } };
}

/**
 * Two 0/1 reports of n examples: `both` right in both, `onlyA` right only in A, `onlyB` right only in B,
 * the rest wrong in both.
 */
function pairedBinary(n: number, both: number, onlyA: number, onlyB: number): [ComparableReport, ComparableReport] {
  const a: number[] = [], b: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i < both) { a.push(1); b.push(1); }
    else if (i < both + onlyA) { a.push(1); b.push(0); }
    else if (i < both + onlyA + onlyB) { a.push(0); b.push(1); }
    else { a.push(0); b.push(0); }
  }
  return [report(a), report(b)];
}

/** The unpaired two-proportion z-test's two-sided p-value (what compare must NOT compute). */
function twoProportionP(x1: number, x2: number, n: number): number {
  const pooled = (x1 + x2) / (2 * n);
  const z = Math.abs(x2 / n - x1 / n) / Math.sqrt(pooled * (1 - pooled) * (2 / n));
  // Two-sided normal tail: 2·(1 − Φ(z)) = erfc(z/√2).
  return erfc(z / Math.SQRT2);
}

function erfc(x: number): number {
  // Numerical Recipes' erfcc (fractional error < 1.2e-7): enough to place a p-value against 0.05.
  const t = 1 / (1 + 0.5 * Math.abs(x));
  const y = t * Math.exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 +
    t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? y : 2 - y;
}

/** 2·Σ_{k≤m} C(n,k) / 2^n with BigInt, independent of the code under test. */
function binomialTwoSided(n01: number, n10: number): number {
  const n = BigInt(n01 + n10), m = BigInt(Math.min(n01, n10));
  let c = 1n, sum = 0n;
  for (let k = 0n; k <= m; k++) {
    sum += c;
    c = (c * (n - k)) / (k + 1n);
  }
  // sum / 2^n to double precision: scale into 2^-60 units first.
  const scaled = Number((sum * 2n ** 60n) / 2n ** n) / 2 ** 60;
  return Math.min(1, 2 * scaled);
}

describe("compare: exact McNemar test on 0/1 scores", () => {
  it("n01 = 2, n10 = 9: p = 2·(C(11,0) + C(11,1) + C(11,2)) / 2^11 = 2·67/2048 = 0.0654296875, not significant", () => {
    // 20 examples: 5 right in both, 9 right only in A, 2 right only in B, 4 wrong in both.
    const [a, b] = pairedBinary(20, 5, 9, 2);
    const c = compare(a, b, { metric: "accuracy" });
    expect(c.test).toBe("mcnemar-exact");
    expect(c.ciMethod).toBe("clopper-pearson");
    expect(c.pValue).toBeCloseTo(0.0654296875, 12);
    expect(binomialTwoSided(2, 9)).toBeCloseTo(0.0654296875, 12);
    expect(c.significant).toBe(false);
    expect(c).toMatchObject({ metric: "accuracy", n: 20, a: 14 / 20, b: 7 / 20 });
    expect(c.diff).toBeCloseTo(-7 / 20, 12);
    expect(c.worse).toHaveLength(9);
    expect(c.better).toHaveLength(2);
  });

  it("other counts against the binomial formula: (5, 1) → 0.21875; (3, 3) and no discordant pairs → 1", () => {
    expect(compare(...pairedBinary(10, 2, 1, 5)).pValue).toBeCloseTo(0.21875, 12); // 2·(1 + 6)/64
    expect(compare(...pairedBinary(10, 2, 3, 3)).pValue).toBe(1);
    const same = compare(...pairedBinary(10, 4, 0, 0));
    expect(same).toMatchObject({ pValue: 1, significant: false, better: [], worse: [], diff: 0, ci: [0, 0] });
  });

  it("a large n: 60 gained, 40 lost of 100 → 2·Σ_{k≤40} C(100,k)/2^100 = 0.05688793364098079 (log-space sum stays exact)", () => {
    const c = compare(...pairedBinary(100, 0, 40, 60));
    expect(c.pValue).toBeCloseTo(0.05688793364098079, 12);
    expect(binomialTwoSided(60, 40)).toBeCloseTo(0.05688793364098079, 12);
  });

  it("paired, not unpaired: B right wherever A is plus 10 more of 200 is significant (p = 2/2^10), though the proportions 0.50 vs 0.55 are not", () => {
    const [a, b] = pairedBinary(200, 100, 0, 10);
    // An unpaired two-proportion z-test on the same data: z ≈ 1.00, p ≈ 0.317.
    expect(twoProportionP(100, 110, 200)).toBeGreaterThan(0.3);
    const c = compare(a, b);
    expect(c.pValue).toBeCloseTo(0.001953125, 12);
    expect(c.significant).toBe(true);
    expect(c.ci[0]).toBeGreaterThan(0); // every resample holds only rises: the interval excludes 0
  });

  it("paired, not unpaired: 0.40 → 0.60 of 100 with 60 gained and 40 lost is not significant (p = 0.0569), though the z-test says p ≈ 0.005", () => {
    const [a, b] = pairedBinary(100, 0, 40, 60);
    expect(twoProportionP(40, 60, 100)).toBeLessThan(0.01);
    const c = compare(a, b);
    expect(c.diff).toBeCloseTo(0.2, 12);
    expect(c.pValue).toBeCloseTo(0.05688793364098079, 12);
    expect(c.significant).toBe(false);
    // At 90% confidence the same p-value is significant.
    expect(compare(a, b, { confidence: 0.9 }).significant).toBe(true);
  });
});

/** Every one of the 2^n sign patterns of the differences, counted directly (no code under test). */
function enumerateSignFlips(d: readonly number[]): number {
  const observed = Math.abs(d.reduce((x, y) => x + y, 0));
  let count = 0;
  for (let mask = 0; mask < 2 ** d.length; mask++) {
    let sum = 0;
    d.forEach((x, i) => { sum += mask & (1 << i) ? -x : x; });
    if (Math.abs(sum) >= observed - 1e-9) count++;
  }
  return count / 2 ** d.length;
}

describe("compare: paired sign-flip test on scores that are not all 0 or 1", () => {
  it("n = 10 (one pair unchanged): p equals the exact enumeration over all 2^10 sign flips", () => {
    const a = [0.2, 0.5, 0.1, 0.6, 0.3, 0.4, 0.9, 0.25, 0.5, 0.7];
    const b = [0.6, 0.75, 0.0, 0.9, 0.7, 0.4, 0.95, 0.6, 0.45, 1.0];
    const c = compare(report(a, "token_f1"), report(b, "token_f1"));
    const expected = enumerateSignFlips(b.map((x, i) => x - a[i]!));
    expect(c.test).toBe("sign-flip");
    expect(c.ciMethod).toBe("sign-flip-inversion");
    expect(expected).toBeGreaterThan(0.001);
    expect(expected).toBeLessThan(0.1);
    expect(c.pValue).toBeCloseTo(expected, 12);
    expect(c.better).toEqual(["ex-0", "ex-1", "ex-3", "ex-4", "ex-6", "ex-7", "ex-9"]);
    expect(c.worse).toEqual(["ex-2", "ex-8"]);
  });

  it("a difference with both signs close to balanced: p near 1, as the enumeration says", () => {
    const a = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5];
    const b = [0.7, 0.3, 0.65, 0.4, 0.55, 0.45];
    const c = compare(report(a, "m"), report(b, "m"));
    expect(c.pValue).toBeCloseTo(enumerateSignFlips(b.map((x, i) => x - a[i]!)), 12);
    expect(c.pValue).toBeGreaterThan(0.5);
  });

  it("14 non-zero differences (2^14 > 10,000): 10,000 seeded random flips, p = (count + 1)/10,001 close to the enumeration", () => {
    const a = Array.from({ length: 14 }, (_, i) => 0.3 + 0.02 * i);
    const b = a.map((x, i) => x + (i % 4 === 0 ? -0.05 : 0.04 + 0.01 * (i % 3)));
    const c = compare(report(a, "m"), report(b, "m"));
    expect(c.test).toBe("sign-flip");
    const exact = enumerateSignFlips(b.map((x, i) => x - a[i]!));
    expect(Math.abs(c.pValue - exact)).toBeLessThan(0.01);
    expect(Number.isInteger(Math.round(c.pValue * 10001 * 1e6) / 1e6)).toBe(true);
    expect(compare(report(a, "m"), report(b, "m")).pValue).toBe(c.pValue); // seeded
  });
});

describe("compare: pairing and bad input", () => {
  it("pairs rows by example id, whatever their order; better and worse list ids in the first report's row order", () => {
    const a = report([1, 0, 1, 0, 1], "accuracy", ["e1", "e2", "e3", "e4", "e5"]);
    const b = report([1, 1, 0, 1, 0], "accuracy", ["e5", "e4", "e3", "e2", "e1"]);
    // By id: e1 1→0, e2 0→1, e3 1→0, e4 0→1, e5 1→1.
    const c = compare(a, b);
    expect(c.better).toEqual(["e2", "e4"]);
    expect(c.worse).toEqual(["e1", "e3"]);
    expect(c.n).toBe(5);
  });

  it("a ValidationError naming the missing id when the reports hold different examples; also for an unknown metric or confidence", () => {
    const a = report([1, 0, 1], "accuracy", ["e1", "e2", "e3"]);
    expect(() => compare(a, report([1, 0, 1], "accuracy", ["e1", "e2", "e9"]))).toThrow(ValidationError);
    expect(() => compare(a, report([1, 0, 1], "accuracy", ["e1", "e2", "e9"]))).toThrow('example "e3" is in the first report but not in the second');
    expect(() => compare(a, report([1, 0, 1, 1], "accuracy", ["e1", "e2", "e3", "e4"]))).toThrow('example "e4" is in the second report but not in the first');
    expect(() => compare(a, report([1, 0], "accuracy", ["e1", "e2"]))).toThrow(ValidationError);
    expect(() => compare(a, report([1, 0, 1], "accuracy", ["e1", "e1", "e3"]))).toThrow('example "e1" appears twice');
    expect(() => compare(a, a, { metric: "f1_score" })).toThrow('metric "f1_score" is not in both reports; the first has "accuracy"');
    expect(() => compare(a, report([1, 0, 1], "token_f1", ["e1", "e2", "e3"]))).toThrow(ValidationError);
    expect(() => compare(a, a, { confidence: 95 })).toThrow(ValidationError);
    expect(() => compare(a, null as never)).toThrow(ValidationError);
  });
});

describe("report.ci: Wilson for shares, BCa bootstrap for the other metrics", () => {
  const fields = [{ name: "label", label: true, labels: undefined }];
  function built(scores: readonly number[]) {
    const results = scores.map((s, i) => row(i, `ex-${i}`, s));
    const accuracy = scores.reduce((x, y) => x + y, 0) / scores.length;
    return new EvaluationReport({ metrics: { accuracy }, results, failures: [], feedback: [], inputTokens: 0, outputTokens: 0, cost: 0, durationMs: 0, runId: null }, fields);
  }

  it("a 0/1 metric with n = 400 and p = 0.5: width within 10% of 2·1.96·sqrt(p(1−p)/n), around the value, the same interval every time", () => {
    // An irregular 0/1 pattern with 200 ones (the bootstrap does not care about order).
    const scores = Array.from({ length: 400 }, (_, i): number => ((i * 7919) % 400 < 200 ? 1 : 0));
    expect(scores.reduce((x, y) => x + y, 0)).toBe(200);
    const report = built(scores);
    const [low, high] = report.ci.accuracy!;
    const normal = 2 * 1.96 * Math.sqrt((0.5 * 0.5) / 400);
    expect(Math.abs((high - low) / normal - 1)).toBeLessThan(0.1);
    expect(low).toBeLessThan(0.5);
    expect(high).toBeGreaterThan(0.5);
    expect(Math.abs((0.5 - low) - (high - 0.5))).toBeLessThan(0.02);
    expect(built(scores).ci.accuracy).toEqual([low, high]);
    expect(report.ciMethod).toEqual({ accuracy: "wilson" });
  });

  it("narrower with more examples: n = 100 at p = 0.8 is within 10% of its normal width too", () => {
    const scores = Array.from({ length: 100 }, (_, i) => (i % 5 === 0 ? 0 : 1));
    const [low, high] = built(scores).ci.accuracy!;
    const normal = 2 * 1.96 * Math.sqrt((0.8 * 0.2) / 100);
    expect(Math.abs((high - low) / normal - 1)).toBeLessThan(0.1);
  });

  class Classify extends Signature {
    static override input = { text: z.string() };
    static override output = { label: z.enum(["a", "b"]) };
  }

  it("reports built by Evaluation have ci for every metric, f1_score recomputed as macro-F1 on each resample, and toJSON keeps it", async () => {
    // 90 'a' and 10 'b', every prediction 'a': accuracy 0.9, macro-F1 (0.947 + 0) / 2 = 0.474.
    const testExamples = Array.from({ length: 100 }, (_, i) => new FewShotExample({ id: `t${i}`, input: { text: `#${i}` }, output: { label: i < 90 ? "a" : "b" } }));
    const moduleInstance = new Predict(Classify).configure((c) => { c.lm = new ScriptedLM(() => ({ label: "a" })); });
    const report = await new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance, testExamples, metrics: ["accuracy", "f1_score"] });
    expect(report.f1_score).toBeCloseTo((2 * 0.9 / 1.9) / 2, 12);
    const [fLow, fHigh] = report.ci.f1_score!;
    // A bootstrap of the per-row f1_score scores (the mean, ≈ 0.9) would miss the macro-F1 entirely.
    expect(fLow).toBeLessThanOrEqual(report.f1_score);
    expect(fHigh).toBeGreaterThanOrEqual(report.f1_score);
    expect(fHigh).toBeLessThan(0.5);
    expect(fLow).toBeGreaterThan(0.44);
    const [aLow, aHigh] = report.ci.accuracy!;
    expect(aLow).toBeGreaterThan(0.8);
    expect(aHigh).toBeLessThan(0.97);
    expect(report.ciMethod).toEqual({ accuracy: "wilson", f1_score: "bootstrap-bca" });
    const json = JSON.parse(JSON.stringify(report)) as { ci: Record<string, number[]>; ciMethod: Record<string, string> };
    expect(json.ci).toEqual({ accuracy: [aLow, aHigh], f1_score: [fLow, fHigh] });
    expect(json.ciMethod).toEqual({ accuracy: "wilson", f1_score: "bootstrap-bca" });
  });

  it("compare recomputes f1_score under each swap of the permutation test, its interval inverting it: diff is the difference of the macro-F1s", async () => {
    const testExamples = Array.from({ length: 40 }, (_, i) => new FewShotExample({ id: `t${i}`, input: { text: `#${i}` }, output: { label: i < 30 ? "a" : "b" } }));
    const run = (answer: (i: number) => string) => new Evaluation({ record: false, progress: false }).evaluate({
      moduleInstance: new Predict(Classify).configure((c) => { c.lm = new ScriptedLM((req) => ({ label: answer(Number(String(req.inputs?.text).slice(1))) })); }),
      testExamples, metrics: ["f1_score", "accuracy"],
    });
    const before = await run(() => "a");
    const after = await run((i) => (i < 30 ? "a" : i < 36 ? "b" : "a"));
    const c = compare(before, after);
    expect(c.metric).toBe("f1_score");
    expect(c).toMatchObject({ test: "permutation-macro-f1", ciMethod: "permutation-macro-f1-inversion" });
    expect(c.diff).toBeCloseTo(after.f1_score - before.f1_score, 12);
    expect(c.better).toHaveLength(6);
    // Macro-F1 rises by ≈ 0.34 while accuracy rises by 0.15: an interval built from per-row means would sit near 0.15.
    expect(c.diff).toBeGreaterThan(0.3);
    expect(c.ci[0]).toBeGreaterThan(0.16);
    expect(c.ci[1]).toBeGreaterThan(c.diff);
  });
});
