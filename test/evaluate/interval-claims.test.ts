/**
 * What the intervals claim, checked by exact enumeration and by code of the test's own: the share
 * interval's coverage on a fine grid (its minimum, not only its mean), a 0/1 metric of the user's own
 * and a sample without spread, the comparison's interval agreeing with its test in every case, and
 * BCa against a plain implementation written here.
 */
import { describe, expect, it, jest } from "@jest/globals";
import { EvaluationReport, compare } from "../../lib/index.js";
import type { ComparableReport } from "../../lib/index.js";
import type { FieldInfo } from "../../lib/evaluate/fields.js";
import { bca } from "../../lib/evaluate/stats/bootstrap.js";
import { normalCdf, normalQuantile } from "../../lib/evaluate/stats/normal.js";
import { meanStatistic } from "../../lib/evaluate/stats/statistic.js";
import { Random } from "../../lib/random.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import { evaluationReport, ownMacroF1, row } from "../helpers/stats-reports.js";

// Enumerations and thousands of permutation tests: generous on a loaded machine.
jest.setTimeout(300_000);

// ---------------------------------------------------------------------------------------------
// Helpers of the test's own
// ---------------------------------------------------------------------------------------------

/** Binomial(n, p) probabilities of 0 … n, by the ratio of neighbours from the mode in log space (no under- or overflow). */
function binomialPmf(n: number, p: number): Float64Array {
  const logs = new Float64Array(n + 1);
  let logChoose = 0;
  for (let k = 0; k <= n; k++) {
    if (k > 0) logChoose += Math.log(n - k + 1) - Math.log(k);
    logs[k] = logChoose + k * Math.log(p) + (n - k) * Math.log1p(-p);
  }
  return logs.map(Math.exp);
}

/** Exact coverage at p: Σ_k P(X = k)·[p ∈ interval(k)]. */
function coverageAt(n: number, p: number, intervals: readonly (readonly [number, number])[]): number {
  const pmf = binomialPmf(n, p);
  let covered = 0;
  for (let k = 0; k <= n; k++) if (intervals[k]![0] <= p && p <= intervals[k]![1]) covered += pmf[k]!;
  return covered;
}

/**
 * A fine grid of true shares: steps of 0.0005 over (0, 1), and near each end steps of 0.01/n up to
 * 10/n (where the dips of Wilson's interval are, at p ≈ 0.17/n, finer than any fixed grid at large n).
 */
function fineGrid(n: number): number[] {
  const grid: number[] = [];
  for (let i = 1; i < 2000; i++) grid.push(i / 2000);
  for (let t = 0.01; t <= 10; t += 0.01) {
    if (t / n < 0.5) grid.push(t / n, 1 - t / n);
  }
  return grid;
}

function coverageSummary(n: number, intervals: readonly (readonly [number, number])[]): { min: number; mean: number } {
  let min = 1, sum = 0, count = 0;
  for (const p of fineGrid(n)) {
    const c = coverageAt(n, p, intervals);
    min = Math.min(min, c);
    if (p * 2000 === Math.round(p * 2000)) {
      sum += c;
      count++;
    }
  }
  return { min, mean: sum / count };
}


/** A report whose rows score `scores` on `metric` (the value their mean). */
function scoresReport(metric: string, scores: readonly number[]): EvaluationReport {
  return evaluationReport({ [metric]: scores.reduce((x, y) => x + y, 0) / scores.length }, scores.map((s, i) => row(i, "x", "x", { [metric]: s })));
}

/** The interval of k right of n as a report shows it for `metric` (0/1 scores, the right ones first). */
function shareInterval(k: number, n: number, metric: string): [number, number] {
  const report = scoresReport(metric, Array.from({ length: n }, (_, i) => (i < k ? 1 : 0)));
  expect(report.ciMethod[metric]).toBe("wilson");
  return report.ci[metric]!;
}

// ---------------------------------------------------------------------------------------------
// Shares
// ---------------------------------------------------------------------------------------------

describe("a share's interval: exact coverage on a fine grid, its minimum as well as its mean", () => {
  it("n = 10, 20, 30, 50, 100, 200: lowest coverage ≥ 0.91 (Wilson's own dips to 0.84 near 0 and 1), mean 0.945 … 0.97", () => {
    for (const n of [10, 20, 30, 50, 100, 200]) {
      const intervals = Array.from({ length: n + 1 }, (_, k) => shareInterval(k, n, "accuracy"));
      const { min, mean } = coverageSummary(n, intervals);
      expect({ n, low: min >= 0.91 }).toEqual({ n, low: true });
      expect(mean).toBeGreaterThanOrEqual(0.945);
      expect(mean).toBeLessThan(0.97);
      // Symmetric: k of n and n − k of n mirror each other.
      for (let k = 0; k <= n; k++) {
        expect(intervals[k]![0]).toBeCloseTo(1 - intervals[n - k]![1], 12);
      }
    }
  });

  it("a 0/1 metric function of the user's own is a share: the same interval as accuracy, and 0 of 20 is not [0, 0]", () => {
    const n = 20;
    const intervals = Array.from({ length: n + 1 }, (_, k) => shareInterval(k, n, "mine"));
    for (let k = 0; k <= n; k++) expect(intervals[k]).toEqual(shareInterval(k, n, "accuracy"));
    expect(intervals[0]![1]).toBeGreaterThan(0.1);
    // Its coverage where the bootstrap had 0.18 (p = 0.01), and its minimum.
    expect(coverageAt(n, 0.01, intervals)).toBeGreaterThan(0.95);
    expect(coverageSummary(n, intervals).min).toBeGreaterThanOrEqual(0.91);
  });
});

describe("a graded metric whose rows show no spread", () => {
  it("every row 0.75: an interval around 0.75 that is not [0.75, 0.75], named as the share interval it is", () => {
    const report = scoresReport("token_f1", Array.from({ length: 20 }, () => 0.75));
    expect(report.ciMethod.token_f1).toBe("wilson");
    const [low, high] = report.ci.token_f1!;
    expect(low).toBeLessThan(0.7);
    expect(high).toBeGreaterThan(0.8);
    expect(high).toBeLessThanOrEqual(1);
  });

  it("scores 1 or v (v = 0.5, 0.8), a share q of 1s, n = 20: exact coverage ≥ 0.92 for q = 0.5 … 0.999 (the bootstrap alone: 0.18 at q = 0.99)", () => {
    const n = 20;
    for (const v of [0.5, 0.8]) {
      // The interval depends only on how many rows score 1.
      const intervals = Array.from({ length: n + 1 }, (_, k) => scoresReport("quality", Array.from({ length: n }, (_, i) => (i < k ? 1 : v))).ci.quality!);
      let min = 1;
      for (let q = 0.5; q < 0.9995; q += 0.001) {
        const mean = v + (1 - v) * q;
        const pmf = binomialPmf(n, q);
        let covered = 0;
        for (let k = 0; k <= n; k++) if (intervals[k]![0] <= mean && mean <= intervals[k]![1]) covered += pmf[k]!;
        min = Math.min(min, covered);
      }
      expect({ v, min: Number(min.toFixed(3)), enough: min >= 0.92 }).toMatchObject({ v, enough: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The comparison's interval agrees with its test
// ---------------------------------------------------------------------------------------------

function meanReports(metric: string, a: readonly number[], b: readonly number[]): [ComparableReport, ComparableReport] {
  return [scoresReport(metric, a), scoresReport(metric, b)];
}

/** The sign-flip test of "the mean difference is δ" over the m changed pairs, every pattern enumerated (m ≤ 13): the test's own. */
function shiftedSignFlipP(differences: readonly number[], delta: number): number {
  const n = differences.length;
  const changed = differences.filter((d) => d !== 0);
  const m = changed.length;
  const x = changed.map((d) => d - (delta * n) / m);
  const observed = Math.abs(x.reduce((s, v) => s + v, 0));
  const scale = x.reduce((s, v) => s + Math.abs(v), 0);
  let count = 0;
  for (let mask = 0; mask < 2 ** m; mask++) {
    let sum = 0;
    for (let i = 0; i < m; i++) sum += mask & (1 << i) ? -x[i]! : x[i]!;
    if (Math.abs(sum) >= observed - 1e-9 * Math.max(1, scale)) count++;
  }
  return count / 2 ** m;
}

describe("compare on graded scores and f1_score: the interval excludes 0 exactly when the test is significant", () => {
  it("150 seeded datasets (n 5 … 40, scores on [0, 1] and on 0 … 10, confidence 0.95 and 0.9): agreement in every one", () => {
    const random = new Random(32, "agreement");
    let significant = 0, disagreements: string[] = [];
    for (let t = 0; t < 150; t++) {
      const n = 5 + random.int(36);
      const scale = t % 3 === 0 ? 10 : 1;
      const shift = (random.next() - 0.5) * 0.5;
      const a = Array.from({ length: n }, () => Math.round(random.next() * 10) / 10);
      const b = a.map((x) => (random.next() < 0.4 ? x : Math.min(1, Math.max(0, Math.round((x + shift + (random.next() - 0.5) * 0.6) * 10) / 10))));
      const confidence = t % 2 === 0 ? 0.95 : 0.9;
      const c = compare(...meanReports("quality", a.map((x) => x * scale), b.map((x) => x * scale)), { confidence });
      expect(c.test).toBe("sign-flip");
      const excludes = c.ci[0] > 0 || c.ci[1] < 0;
      if (excludes !== c.significant) disagreements.push(`#${t}: n ${n}, diff ${c.diff}, ci ${c.ci}, p ${c.pValue}`);
      if (c.significant) significant++;
      expect(c.ci[0]).toBeLessThanOrEqual(c.diff + 1e-12);
      expect(c.ci[1]).toBeGreaterThanOrEqual(c.diff - 1e-12);
    }
    expect(disagreements).toEqual([]);
    // Both kinds of result occur, so the agreement is not the trivial one.
    expect(significant).toBeGreaterThan(25);
    expect(significant).toBeLessThan(125);
  });

  it("the interval is the set of shifts the test does not reject: just inside each end the enumerated test accepts, just outside it rejects", () => {
    const random = new Random(5, "inversion");
    let checkedEnds = 0;
    for (let t = 0; t < 40; t++) {
      const n = 8 + random.int(20);
      const a = Array.from({ length: n }, () => Math.round(random.next() * 20) / 20);
      const b = a.map((x, i) => (i < 10 ? Math.min(1, Math.max(0, x + Math.round((random.next() - 0.3) * 8) / 20)) : x));
      const differences = b.map((x, i) => x - a[i]!);
      const m = differences.filter((d) => d !== 0).length;
      if (m < 6) continue;
      const c = compare(...meanReports("quality", a, b));
      const [low, high] = c.ci;
      const bound = m / n;
      const step = 1e-7;
      for (const [end, inward] of [[low, step], [high, -step]] as const) {
        if (Math.abs(Math.abs(end) - bound) < 1e-12) continue; // the scores' limit, not the test's
        expect(shiftedSignFlipP(differences, end + inward)).toBeGreaterThanOrEqual(0.05);
        expect(shiftedSignFlipP(differences, end - inward)).toBeLessThan(0.05);
        checkedEnds++;
      }
    }
    expect(checkedEnds).toBeGreaterThan(20);
  });

  it("f1_score: 80 seeded label datasets (n 6 … 30, 3 labels, failed rows; exact and random patterns): agreement in every one", () => {
    const random = new Random(9, "macro");
    const labels = ["a", "b", "c"];
    const disagreements: string[] = [];
    let significant = 0, notSignificant = 0;
    const methods = new Set<string>();
    for (let t = 0; t < 80; t++) {
      const n = 6 + random.int(25);
      const gold = Array.from({ length: n }, () => labels[random.int(3)]!);
      const skill = random.next();
      const predict = (good: number) => gold.map((g) => (random.next() < 0.05 ? null : random.next() < good ? g : labels[random.int(3)]!));
      const predA = predict(0.3 + 0.3 * skill), predB = predict(0.3 + 0.6 * skill);
      const report = (pred: (string | null)[]) =>
        evaluationReport({ f1_score: ownMacroF1(gold, pred) }, gold.map((g, i) => row(i, g, pred[i]!, { f1_score: pred[i] === g ? 1 : 0 })));
      const c = compare(report(predA), report(predB), { metric: "f1_score" });
      expect(c.test).toBe("permutation-macro-f1");
      methods.add(c.ciMethod);
      const excludes = c.ci[0] > 0 || c.ci[1] < 0;
      if (excludes !== c.significant) disagreements.push(`#${t}: n ${n}, diff ${c.diff}, ci ${c.ci}, p ${c.pValue}`);
      if (c.significant) significant++;
      else notSignificant++;
    }
    expect(disagreements).toEqual([]);
    expect([...methods]).toEqual(["permutation-macro-f1-inversion"]);
    expect(significant).toBeGreaterThan(5);
    expect(notSignificant).toBeGreaterThan(5);
  });
});

// ---------------------------------------------------------------------------------------------
// BCa against a plain implementation
// ---------------------------------------------------------------------------------------------

/** The q-quantile of sorted values with linear interpolation between order statistics (numpy's default, R's type 7). */
function type7(sorted: readonly number[], q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h), hi = Math.ceil(h);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/**
 * BCa as Efron & Tibshirani (1993, ch. 14) write it, in the plainest code: B resamples drawn with the
 * same seeded stream as the library (n draws of `int(n)` per resample), ẑ₀ = Φ⁻¹(#{θ* < θ̂}/B + ½·#{θ* = θ̂}/B),
 * â = Σ(θ̄ − θ₍ᵢ₎)³ / (6·(Σ(θ̄ − θ₍ᵢ₎)²)^{3/2}) from the jackknife, ends at the type-7 quantiles of
 * Φ(ẑ₀ + (ẑ₀ + z)/(1 − â(ẑ₀ + z))).
 */
function plainBca(data: readonly number[], statistic: (xs: readonly number[]) => number, confidence: number, resamples: number, seed: number) {
  const n = data.length;
  const random = new Random(seed);
  const values: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const sample: number[] = [];
    for (let i = 0; i < n; i++) sample.push(data[random.int(n)]!);
    values.push(statistic(sample));
  }
  values.sort((x, y) => x - y);
  const estimate = statistic(data);
  const below = values.filter((v) => v < estimate - 1e-12).length;
  const equal = values.filter((v) => Math.abs(v - estimate) <= 1e-12).length;
  const bias = normalQuantile((below + equal / 2) / resamples);
  const jack = data.map((_, i) => statistic(data.filter((__, j) => j !== i)));
  const mean = jack.reduce((s, v) => s + v, 0) / n;
  const squares = jack.reduce((s, v) => s + (mean - v) ** 2, 0);
  const cubes = jack.reduce((s, v) => s + (mean - v) ** 3, 0);
  const acceleration = cubes / (6 * squares ** 1.5);
  const end = (z: number) => type7(values, normalCdf(bias + (bias + z) / (1 - acceleration * (bias + z))));
  const alpha = 1 - confidence;
  return { interval: [end(normalQuantile(alpha / 2)), end(normalQuantile(1 - alpha / 2))], bias, acceleration, equal };
}

describe("BCa against a plain implementation on fixed data", () => {
  const mean = (xs: readonly number[]) => xs.reduce((s, v) => s + v, 0) / xs.length;
  // Skewed to the right and coarse (many resampled means equal the estimate: ties), and skewed to the left.
  const coarse = [0, 0, 0, 0, 0, 0, 0, 0, 0.5, 1, 1, 0.5, 0, 0, 0, 1];
  const left = [0.1, 0.9, 0.95, 1, 1, 1, 1, 1, 1, 1, 0.85, 0.4, 1, 1, 0.7];

  it("the same ends, bias correction and acceleration to 1e-12, at 2,000 and 500 resamples, confidence 0.95 and 0.8", () => {
    for (const data of [coarse, left]) {
      for (const [resamples, confidence, seed] of [[2000, 0.95, 0], [500, 0.8, 3]] as const) {
        const reference = plainBca(data, mean, confidence, resamples, seed);
        // The fixture exercises what it is meant to: ties at the estimate, a skew, a bias.
        if (data === coarse) expect(reference.equal).toBeGreaterThan(resamples / 50);
        expect(Math.abs(reference.acceleration)).toBeGreaterThan(0.02);
        expect(Math.abs(reference.bias)).toBeGreaterThan(0.01);
        const result = bca(data.length, meanStatistic(data), confidence, resamples, seed);
        expect(result.acceleration).toBeCloseTo(reference.acceleration, 12);
        expect(result.bias).toBeCloseTo(reference.bias, 12);
        expect(result.interval[0]).toBeCloseTo(reference.interval[0]!, 12);
        expect(result.interval[1]).toBeCloseTo(reference.interval[1]!, 12);
      }
    }
  });
});
