/**
 * The statistics of reports and comparisons checked against exact computations done here, with
 * code of the test's own (BigInt binomials, a tiny macro-F1, exhaustive enumeration): the coverage
 * of report.ci, the agreement of compare's interval with its test, the macro-F1 permutation test,
 * Holm's adjustment and the minimum detectable effect.
 */
import { describe, expect, it } from "@jest/globals";
import { EvaluationReport, ValidationError, compare } from "../../lib/index.js";
import type { ComparableReport } from "../../lib/index.js";
import { adjustComparisons, describeComparison } from "../../lib/evaluate/compare.js";
import type { FieldInfo } from "../../lib/evaluate/fields.js";
import { bootstrapInterval } from "../../lib/evaluate/stats/bootstrap.js";
import { holm } from "../../lib/evaluate/stats/holm.js";
import { normalCdf, normalQuantile } from "../../lib/evaluate/stats/normal.js";
import { meanStatistic } from "../../lib/evaluate/stats/statistic.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import { LABEL, evaluationReport, ownMacroF1, row } from "../helpers/stats-reports.js";

// ---------------------------------------------------------------------------------------------
// Exact arithmetic of the test's own
// ---------------------------------------------------------------------------------------------

/** C(n, k) exactly. */
function choose(n: number, k: number): bigint {
  let c = 1n;
  for (let i = 0; i < k; i++) c = (c * BigInt(n - i)) / BigInt(i + 1);
  return c;
}

/** Pascal's triangle up to 60 rows, as doubles (exact to 2^53, within one rounding beyond). */
const PASCAL: number[][] = [[1]];
for (let n = 1; n <= 60; n++) PASCAL.push(Array.from({ length: n + 1 }, (_, k) => (k === 0 || k === n ? 1 : PASCAL[n - 1]![k - 1]! + PASCAL[n - 1]![k]!)));

/** P(X = k) for X ~ Binomial(n, p), as C(n, k)·pᵏ·(1−p)ⁿ⁻ᵏ (n ≤ 60 here: no under- or overflow). */
function pmf(n: number, k: number, p: number): number {
  return PASCAL[n]![k]! * p ** k * (1 - p) ** (n - k);
}

const P_CACHE = new Map<string, number>();

/** Two-sided exact McNemar p-value 2·Σ_{k ≤ min} C(m, k)/2^m, capped at 1, in exact integers until the last division. */
function mcnemarP(b: number, c: number): number {
  const key = `${b},${c}`;
  const known = P_CACHE.get(key);
  if (known !== undefined) return known;
  const m = b + c;
  let sum = 0n;
  for (let k = 0; k <= Math.min(b, c); k++) sum += choose(m, k);
  // 2·sum / 2^m, as a double: scale into 2^-60 units first.
  const p = m === 0 ? 1 : Math.min(1, Number((sum * 2n ** 61n) / 2n ** BigInt(m)) / 2 ** 60);
  P_CACHE.set(key, p);
  return p;
}

/** The exact power of the McNemar test at level α with m changed pairs each improved with probability p. */
function exactPower(m: number, p: number, alpha: number): number {
  let power = 0;
  for (let k = 0; k <= m; k++) if (mcnemarP(k, m - k) < alpha) power += pmf(m, k, p);
  return power;
}

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------


/** A report of n examples with k right on `metric` (0/1 scores), the right ones first. */
function shareReport(k: number, n: number, metric = "accuracy"): EvaluationReport {
  const results = Array.from({ length: n }, (_, i) => row(i, "x", i < k ? "x" : "y", { [metric]: i < k ? 1 : 0 }));
  return evaluationReport({ [metric]: k / n }, results);
}

/** Two 0/1 reports of n examples: `improved` go 0 → 1, `worsened` 1 → 0, `both` stay 1, the rest stay 0. */
function pairedBinary(n: number, improved: number, worsened: number, both = 0): [ComparableReport, ComparableReport] {
  const a: number[] = [], b: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i < improved) { a.push(0); b.push(1); }
    else if (i < improved + worsened) { a.push(1); b.push(0); }
    else if (i < improved + worsened + both) { a.push(1); b.push(1); }
    else { a.push(0); b.push(0); }
  }
  const report = (s: number[]): ComparableReport => ({
    results: s.map((x, i) => row(i, "x", x === 1 ? "x" : "y", { accuracy: x })),
    metrics: { accuracy: s.reduce((x, y) => x + y, 0) / n },
  });
  return [report(a), report(b)];
}

const GRID_P = Array.from({ length: 19 }, (_, i) => (i + 1) / 20);

/** Exact coverage of an interval procedure for a share at p: Σ_k P(X = k)·[p ∈ interval(k)]. */
function coverage(n: number, p: number, intervals: readonly (readonly [number, number])[]): number {
  let covered = 0;
  for (let k = 0; k <= n; k++) if (intervals[k]![0] <= p && p <= intervals[k]![1]) covered += pmf(n, k, p);
  return covered;
}

function meanCoverage(n: number, intervals: readonly (readonly [number, number])[]): number {
  return GRID_P.reduce((sum, p) => sum + coverage(n, p, intervals), 0) / GRID_P.length;
}

const Z975 = 1.959963984540054; // Φ⁻¹(0.975)
const Z80 = 0.8416212335729143; // Φ⁻¹(0.8)

// ---------------------------------------------------------------------------------------------

describe("the normal distribution", () => {
  it("Φ and Φ⁻¹ agree with tabulated values to 1e-13", () => {
    expect(normalQuantile(0.975)).toBeCloseTo(Z975, 13);
    expect(normalQuantile(0.8)).toBeCloseTo(Z80, 13);
    expect(normalQuantile(0.025)).toBeCloseTo(-Z975, 13);
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalCdf(1)).toBeCloseTo(0.8413447460685429, 14);
    expect(normalCdf(-1.96)).toBeCloseTo(0.024997895148220435, 14);
    // The far tail keeps its relative precision: Φ(−5) = 2.866515718791939e-7.
    expect(normalCdf(-5) / 2.866515718791939e-7).toBeCloseTo(1, 11);
    expect(normalQuantile(normalCdf(-3.3))).toBeCloseTo(-3.3, 12);
  });
});

describe("report.ci: exact coverage by enumeration of every outcome", () => {
  it("Wilson for accuracy: mean coverage over p = 0.05 … 0.95 is at least 0.94 for n = 10, 20 and 50", () => {
    for (const n of [10, 20, 50]) {
      const intervals = Array.from({ length: n + 1 }, (_, k) => {
        const report = shareReport(k, n);
        expect(report.ciMethod.accuracy).toBe("wilson");
        return report.ci.accuracy!;
      });
      const mean = meanCoverage(n, intervals);
      expect(mean).toBeGreaterThanOrEqual(0.94);
      expect(mean).toBeLessThan(0.99); // not bought with useless width
    }
  });

  it("the percentile bootstrap it replaces fails the same check: mean coverage 0.83 at n = 10 and 0.91 at n = 20", () => {
    // (At n = 50 it measured 0.945; left out here, the 5 million draws are slow under jest.)
    const measured = [10, 20].map((n) => {
      const intervals = Array.from({ length: n + 1 }, (_, k) => bootstrapInterval(n, meanStatistic(Array.from({ length: n }, (_, i) => (i < k ? 1 : 0)))));
      return meanCoverage(n, intervals);
    });
    expect(measured[0]).toBeLessThan(0.85);
    expect(measured[1]).toBeLessThan(0.92);
  });

  it("0 of n right has a positive upper end (Wilson's z²/(n + z²)), n of n a lower end below 1; exact_match is a share too", () => {
    const none = shareReport(0, 100);
    expect(none.ci.accuracy![0]).toBe(0);
    expect(none.ci.accuracy![1]).toBeCloseTo((Z975 * Z975) / (100 + Z975 * Z975), 12);
    const all = shareReport(20, 20);
    expect(all.ci.accuracy![1]).toBe(1);
    expect(all.ci.accuracy![0]).toBeCloseTo(20 / (20 + Z975 * Z975), 12);
    const em = shareReport(3, 10, "exact_match");
    expect(em.ciMethod.exact_match).toBe("wilson");
    // (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n) at 3 of 10.
    const z2 = Z975 * Z975, p = 0.3, n = 10;
    const center = (p + z2 / (2 * n)) / (1 + z2 / n), half = (Z975 / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
    expect(em.ci.exact_match![0]).toBeCloseTo(center - half, 12);
    expect(em.ci.exact_match![1]).toBeCloseTo(center + half, 12);
  });

  it("a graded user metric and token_f1 get BCa; a 0/1 user metric is a share; every row equal does not collapse the interval", () => {
    const results = Array.from({ length: 12 }, (_, i) => row(i, "x", "x", { token_f1: 0.75, mine: i < 6 ? 1 : 0, graded: (i % 4) / 4 }));
    const report = evaluationReport({ token_f1: 0.75, mine: 0.5, graded: 0.375 }, results);
    expect(report.ciMethod).toEqual({ token_f1: "wilson", mine: "wilson", graded: "bootstrap-bca" });
    const [l0, h0] = report.ci.token_f1!;
    expect(l0).toBeLessThan(0.75);
    expect(h0).toBeGreaterThan(0.75);
    const [low, high] = report.ci.mine!;
    expect(low).toBeLessThan(0.5);
    expect(high).toBeGreaterThan(0.5);
    expect(report.ci.graded![0]).toBeLessThan(0.375);
    expect(report.ci.graded![1]).toBeGreaterThan(0.375);
  });

  it("BCa on a mean: close to the normal interval at n = 400, leaning toward the long tail of skewed scores, the same every time", () => {
    // Scores 0.05·(i mod 20): mean 0.475, symmetric.
    const flat = Array.from({ length: 400 }, (_, i) => 0.05 * (i % 20));
    const mean = flat.reduce((x, y) => x + y, 0) / 400;
    const sd = Math.sqrt(flat.reduce((s, x) => s + (x - mean) ** 2, 0) / 399);
    const report = evaluationReport({ token_f1: mean }, flat.map((s, i) => row(i, "x", "x", { token_f1: s })));
    const [low, high] = report.ci.token_f1!;
    expect(Math.abs((high - low) / (2 * Z975 * sd / Math.sqrt(400)) - 1)).toBeLessThan(0.1);
    expect(evaluationReport({ token_f1: mean }, flat.map((s, i) => row(i, "x", "x", { token_f1: s }))).ci.token_f1).toEqual([low, high]);
    // Mostly small scores with a few large ones: right-skewed, so the interval reaches further up than down.
    const skewed = Array.from({ length: 60 }, (_, i) => (i % 10 === 0 ? 0.95 : 0.02 * (i % 5)));
    const m2 = skewed.reduce((x, y) => x + y, 0) / 60;
    const [l2, h2] = evaluationReport({ token_f1: m2 }, skewed.map((s, i) => row(i, "x", "x", { token_f1: s }))).ci.token_f1!;
    expect(h2 - m2).toBeGreaterThan(m2 - l2);
  });
});

describe("compare on 0/1 scores: the interval agrees with the exact McNemar test in every cell", () => {
  it("improved and worsened 0 … 30 each, n = 60, 100 and 250, confidence 0.95, 0.9 and 0.5: significant ⇔ the interval excludes 0, p exact, bounds Clopper–Pearson", () => {
    let cells = 0, significantCells = 0;
    for (const confidence of [0.95, 0.9, 0.5]) {
      const alpha = 1 - confidence;
      for (const n of [60, 100, 250]) {
        for (let b = 0; b <= 30; b++) {
          for (let c = 0; c <= 30; c++) {
            const [ra, rb] = pairedBinary(n, b, c, 5);
            const result = compare(ra, rb, { confidence });
            cells++;
            expect(result.test).toBe("mcnemar-exact");
            expect(result.ciMethod).toBe("clopper-pearson");
            const p = mcnemarP(b, c);
            expect(Math.abs(result.pValue - p)).toBeLessThan(1e-12);
            expect(result.significant).toBe(p < alpha);
            const excludesZero = result.ci[0] > 0 || result.ci[1] < 0;
            if (result.significant !== excludesZero) throw new Error(`disagree at n=${n}, b=${b}, c=${c}, confidence ${confidence}: p=${result.pValue}, ci=${result.ci}`);
            if (result.significant) significantCells++;
            expect(result.diff).toBeCloseTo((b - c) / n, 12);
            expect(result.ci[0]).toBeLessThanOrEqual(result.diff + 1e-12);
            expect(result.ci[1]).toBeGreaterThanOrEqual(result.diff - 1e-12);
            const m = b + c;
            if (m === 0) {
              expect(result).toMatchObject({ ci: [0, 0], pValue: 1, significant: false, mde: null });
              continue;
            }
            // Back to the share improved among the changed pairs: the equal-tailed exact bounds.
            const lo = (result.ci[0] * n / m + 1) / 2, hi = (result.ci[1] * n / m + 1) / 2;
            if (b === 0) expect(lo).toBeCloseTo(0, 12);
            else {
              let upperTail = 0;
              for (let k = b; k <= m; k++) upperTail += pmf(m, k, lo);
              expect(upperTail).toBeCloseTo(alpha / 2, 9);
            }
            if (b === m) expect(hi).toBeCloseTo(1, 12);
            else {
              let lowerTail = 0;
              for (let k = 0; k <= b; k++) lowerTail += pmf(m, k, hi);
              expect(lowerTail).toBeCloseTo(alpha / 2, 9);
            }
          }
        }
      }
    }
    expect(cells).toBe(3 * 3 * 31 * 31);
    // Both outcomes occur in the grid, so the agreement is not vacuous.
    expect(significantCells).toBeGreaterThan(1000);
    expect(cells - significantCells).toBeGreaterThan(1000);
  });

  it("4 better and 0 worse of 20: p = 0.125 and an interval that reaches below 0 (the percentile bootstrap said +0.05 to +0.40)", () => {
    const c = compare(...pairedBinary(20, 4, 0));
    expect(c.pValue).toBe(0.125);
    expect(c.significant).toBe(false);
    expect(c.ci[0]).toBeLessThan(0);
    // All 4 changes were improvements: the upper end is the share of changed examples itself.
    expect(c.ci[1]).toBeCloseTo(0.2, 12);
    const text = describeComparison(c);
    expect(text).toBe(`+0.200 (95% CI ${c.ci[0] < 0 ? "-" : "+"}${Math.abs(c.ci[0]).toFixed(3)} to +${c.ci[1].toFixed(3)}, clopper-pearson), p = 0.13, mcnemar-exact: not significant at the 5% level; ${c.mde === null ? "mde: none (too few changed examples for 80% power)" : `mde ${c.mde.toFixed(3)} (80% power)`}`);
    // 4 changed pairs can never reach p < 0.05 (4 of 4 gives 2/16): no detectable difference.
    expect(c.mde).toBeNull();
    expect(text).toContain("mde: none");
  });
});

describe("mde: the difference detected with 80% power", () => {
  it("describeComparison names the interval's method, p and the mde next to a result that is not significant", () => {
    const c = compare(...pairedBinary(20, 5, 2, 6));
    expect(c.significant).toBe(false);
    expect(c.mde).not.toBeNull();
    expect(describeComparison(c)).toBe(
      `+0.150 (95% CI ${c.ci[0] < 0 ? "-" : "+"}${Math.abs(c.ci[0]).toFixed(3)} to +${c.ci[1].toFixed(3)}, clopper-pearson), p = 0.45, mcnemar-exact: not significant at the 5% level; mde ${c.mde!.toFixed(3)} (80% power)`,
    );
    // A significant result does not carry it.
    expect(describeComparison(compare(...pairedBinary(40, 12, 1)))).not.toContain("mde");
  });

  it("McNemar: exact power at mde is at least 0.8 and just below it less than 0.8 (n, changed pairs, confidence)", () => {
    const cases: [number, number, number, number][] = [[20, 4, 6, 0.95], [50, 7, 8, 0.95], [100, 12, 18, 0.95], [100, 30, 10, 0.9], [200, 3, 3, 0.95], [40, 10, 10, 0.99]];
    for (const [n, b, c, confidence] of cases) {
      const result = compare(...pairedBinary(n, b, c), { confidence });
      const m = b + c, d = m / n, alpha = 1 - confidence;
      const mde = result.mde;
      expect(mde).not.toBeNull();
      expect(mde!).toBeGreaterThan(0);
      expect(mde!).toBeLessThanOrEqual(d);
      const powerAt = (delta: number) => exactPower(m, (1 + delta / d) / 2, alpha);
      expect(powerAt(mde!)).toBeGreaterThanOrEqual(0.8 - 1e-9);
      expect(powerAt(mde! - 1e-6)).toBeLessThan(0.8);
    }
  });

  it("McNemar: none without changed pairs or with too few to ever reject (5 at the 5% level), one from 6 on", () => {
    expect(compare(...pairedBinary(30, 0, 0, 10)).mde).toBeNull();
    expect(compare(...pairedBinary(30, 3, 2)).mde).toBeNull();
    // 6 of 6 improved: p = 2/64 < 0.05, reached with 80% power only when nearly every change is an improvement.
    const six = compare(...pairedBinary(30, 3, 3)).mde;
    expect(six).not.toBeNull();
    expect(exactPower(6, (1 + six! / 0.2) / 2, 0.05)).toBeGreaterThanOrEqual(0.8 - 1e-9);
  });

  it("other metrics: (z₀.₉₇₅ + z₀.₈)·sd/√n with the sample sd of the paired differences; none when nothing changed", () => {
    const a = [0.2, 0.5, 0.1, 0.6, 0.3, 0.4, 0.9, 0.25, 0.5, 0.7];
    const b = [0.6, 0.75, 0.0, 0.9, 0.7, 0.4, 0.95, 0.6, 0.45, 1.0];
    const report = (s: number[]): ComparableReport => ({ results: s.map((x, i) => row(i, "x", "x", { token_f1: x })), metrics: { token_f1: s.reduce((x, y) => x + y, 0) / s.length } });
    const c = compare(report(a), report(b));
    const d = b.map((x, i) => x - a[i]!);
    const mean = d.reduce((x, y) => x + y, 0) / d.length;
    const sd = Math.sqrt(d.reduce((s, x) => s + (x - mean) ** 2, 0) / (d.length - 1));
    expect(c.mde).toBeCloseTo(((Z975 + Z80) * sd) / Math.sqrt(10), 12);
    expect(compare(report(a), report(a)).mde).toBeNull();
  });
});

describe("compare on f1_score: the permutation test of the macro-F1 difference", () => {
  /** Gold labels and two prediction sets (null = failed row) as two reports, macro-F1 as each report's value. */
  function f1Reports(gold: string[], predA: (string | null)[], predB: (string | null)[]): [EvaluationReport, EvaluationReport] {
    const build = (pred: (string | null)[]) => evaluationReport(
      { f1_score: ownMacroF1(gold, pred), accuracy: pred.filter((p, i) => p === gold[i]).length / gold.length },
      gold.map((g, i) => row(i, g, pred[i]!, { f1_score: pred[i] === g ? 1 : 0, accuracy: pred[i] === g ? 1 : 0 })),
    );
    return [build(predA), build(predB)];
  }

  /**
   * Exhaustive: each of the 2^n patterns swaps the two predictions of the examples in it. `same`: gold
   * labels of further examples that both predict right (they take part in macro-F1 but never swap).
   */
  function enumerate(gold: string[], predA: (string | null)[], predB: (string | null)[], same: string[] = []): number {
    const n = gold.length;
    const allGold = [...gold, ...same];
    const f1 = (pred: (string | null)[]) => ownMacroF1(allGold, [...pred, ...same]);
    const observed = Math.abs(f1(predB) - f1(predA));
    let count = 0;
    for (let mask = 0; mask < 2 ** n; mask++) {
      const x = predA.map((p, i) => (mask & (1 << i) ? predB[i]! : p));
      const y = predB.map((p, i) => (mask & (1 << i) ? predA[i]! : p));
      if (Math.abs(f1(y) - f1(x)) >= observed - 1e-12) count++;
    }
    return count / 2 ** n;
  }

  it("n = 8, three labels, a failed row and two unchanged rows: p equals the enumeration of all 256 swap patterns", () => {
    const gold = ["a", "a", "a", "b", "b", "c", "c", "a"];
    const predA: (string | null)[] = ["a", "b", "a", "a", "b", "a", null, "a"];
    const predB: (string | null)[] = ["a", "a", "a", "b", "b", "c", "c", "b"];
    const [ra, rb] = f1Reports(gold, predA, predB);
    const c = compare(ra, rb, { metric: "f1_score" });
    expect(c.test).toBe("permutation-macro-f1");
    expect(c.ciMethod).toBe("permutation-macro-f1-inversion");
    const expected = enumerate(gold, predA, predB);
    expect(expected).toBeGreaterThan(0.01);
    expect(c.pValue).toBeCloseTo(expected, 12);
    expect(c.diff).toBeCloseTo(ownMacroF1(gold, predB) - ownMacroF1(gold, predA), 12);
    // Per-example accuracy would be a McNemar test on 4 better, 1 worse: another number.
    expect(Math.abs(c.pValue - mcnemarP(4, 1))).toBeGreaterThan(0.01);
    expect(c.mde).not.toBeNull();
  });

  it("a rare class fixed: macro-F1 moves much more than accuracy, and the test sees it where McNemar on accuracy does not", () => {
    // 9 'a' then 1 'b', predicted all 'a' by A; B also gets the 'b' right and misses one 'a'.
    const gold = ["a", "a", "a", "a", "a", "a", "a", "a", "a", "b"];
    const predA: (string | null)[] = gold.map(() => "a");
    const predB: (string | null)[] = ["b", "a", "a", "a", "a", "a", "a", "a", "a", "b"];
    const [ra, rb] = f1Reports(gold, predA, predB);
    const c = compare(ra, rb, { metric: "f1_score" });
    expect(c.pValue).toBeCloseTo(enumerate(gold, predA, predB), 12);
    expect(compare(ra, rb, { metric: "accuracy" }).pValue).toBe(1);
  });

  it("18 examples whose predictions differ (2^18 > 2^16): 10,000 seeded random patterns, p = (count + 1)/10,001 near the enumeration", () => {
    const labels = ["a", "b", "c"];
    const gold = Array.from({ length: 20 }, (_, i) => labels[i % 3]!);
    const shifted = (g: string, by: number) => labels[(labels.indexOf(g) + by) % 3]!;
    // For i < 18, by i mod 6 (A, B): (wrong, right), (right, wrong), (wrong, other wrong), (wrong, right), (other wrong, right),
    // (wrong, right). The last two examples: both right.
    const shiftA = [1, 0, 1, 1, 2, 1], shiftB = [0, 2, 2, 0, 0, 0];
    const predA: (string | null)[] = gold.map((g, i) => (i >= 18 ? g : shifted(g, shiftA[i % 6]!)));
    const predB: (string | null)[] = gold.map((g, i) => (i >= 18 ? g : shifted(g, shiftB[i % 6]!)));
    expect(predA.filter((p, i) => p !== predB[i]).length).toBe(18);
    const [ra, rb] = f1Reports(gold, predA, predB);
    const c = compare(ra, rb, { metric: "f1_score" });
    // Swapping where the predictions agree changes nothing: enumerating the 2^18 patterns of the others is exhaustive.
    const changed = gold.map((_, i) => i).filter((i) => predA[i] !== predB[i]);
    const pick = <T>(x: T[]) => changed.map((i) => x[i]!);
    const exact = enumerate(pick(gold), pick(predA), pick(predB), gold.filter((_, i) => !changed.includes(i)));
    expect(exact).toBeGreaterThan(0.005);
    expect(exact).toBeLessThan(0.5);
    expect(Math.abs(c.pValue - exact)).toBeLessThan(0.015);
    expect(Number.isInteger(Math.round(c.pValue * 10001 * 1e6) / 1e6)).toBe(true);
    expect(compare(ra, rb, { metric: "f1_score" }).pValue).toBe(c.pValue);
  });

  it("mde from the jackknife standard error of the macro-F1 difference: (z₀.₉₇₅ + z₀.₈)·se", () => {
    const gold = ["a", "a", "a", "b", "b", "c", "c", "a", "b", "c"];
    const predA: (string | null)[] = ["a", "b", "a", "a", "b", "a", null, "a", "c", "c"];
    const predB: (string | null)[] = ["a", "a", "a", "b", "b", "c", "c", "b", "b", "c"];
    const c = compare(...f1Reports(gold, predA, predB), { metric: "f1_score" });
    const n = gold.length;
    const loo = gold.map((_, i) => {
      const keep = (x: unknown[]) => x.filter((_, j) => j !== i);
      return ownMacroF1(keep(gold) as string[], keep(predB) as (string | null)[]) - ownMacroF1(keep(gold) as string[], keep(predA) as (string | null)[]);
    });
    const mean = loo.reduce((x, y) => x + y, 0) / n;
    const se = Math.sqrt(((n - 1) / n) * loo.reduce((s, x) => s + (x - mean) ** 2, 0));
    expect(c.mde).toBeCloseTo((Z975 + Z80) * se, 12);
  });
});

describe("Holm's adjustment", () => {
  it("matches a hand computation: sorted 0.005, 0.01, 0.03, 0.04 → ×4, ×3, ×2, ×1, made monotone", () => {
    // 0.005·4 = 0.02; 0.01·3 = 0.03; 0.03·2 = 0.06; 0.04·1 = 0.04 → max(0.06, 0.04) = 0.06.
    const adjusted = holm([0.01, 0.04, 0.03, 0.005]);
    expect(adjusted[0]).toBeCloseTo(0.03, 15);
    expect(adjusted[1]).toBeCloseTo(0.06, 15);
    expect(adjusted[2]).toBeCloseTo(0.06, 15);
    expect(adjusted[3]).toBeCloseTo(0.02, 15);
  });

  it("caps at 1, keeps ties, passes one p-value through, and rejects what is not a p-value", () => {
    expect(holm([0.5, 0.6])).toEqual([1, 1]);
    expect(holm([0.02, 0.02, 0.5])).toEqual([0.06, 0.06, 0.5]);
    expect(holm([0.2])).toEqual([0.2]);
    expect(holm([])).toEqual([]);
    expect(() => holm([0.1, 1.5])).toThrow(ValidationError);
    expect(() => holm([Number.NaN])).toThrow("holm: pValues[0] must be a number between 0 and 1");
  });

  it("a single compare() has pAdjusted = pValue; adjustComparisons sets Holm over a family, leaving significant as it was", () => {
    const one = compare(...pairedBinary(40, 9, 1));
    expect(one.pAdjusted).toBe(one.pValue);
    const two = compare(...pairedBinary(40, 6, 1));
    const [x, y] = adjustComparisons([one, two]);
    const expected = holm([one.pValue, two.pValue]);
    expect([x!.pAdjusted, y!.pAdjusted]).toEqual(expected);
    expect(x!.significant).toBe(one.significant);
    expect(describeComparison(x!)).toContain(`Holm-adjusted p = ${Number(expected[0]!.toPrecision(2))}`);
  });
});
