/**
 * The statistics behind `report.ci` and `compare` (seeded with lib/random.ts): the percentile bootstrap, the exact
 * McNemar test and the paired sign-flip permutation test. Everything is deterministic: the same
 * scores give the same intervals and p-values on every run and machine.
 */
import type { EvaluationRow } from "../store/records.js";
import { labelOf, textOf, type FieldInfo } from "./fields.js";
import { tokenF1 } from "./metrics.js";
import { Random } from "../random.js";

/** A confidence interval: `[low, high]`. */
export type Interval = [low: number, high: number];

/** Bootstrap resamples behind every interval. */
export const RESAMPLES = 2000;
/** Random sign flips of the permutation test when exact enumeration would take more. */
export const PERMUTATIONS = 10000;
/** The seed of every resampling and permutation stream. */
export const SEED = 0;

/** A statistic of a set of rows given by index (an index may repeat: bootstrap resamples draw with replacement). */
export type Statistic = (indices: ArrayLike<number>) => number;

/**
 * Percentile bootstrap: `resamples` times, draw n indices out of n with replacement and compute the
 * statistic; the interval is the (1 − confidence)/2 and (1 + confidence)/2 quantiles of those values
 * (linear interpolation between order statistics).
 */
export function bootstrapInterval(n: number, statistic: Statistic, confidence = 0.95, resamples = RESAMPLES, seed = SEED): Interval {
  if (n === 0) return [0, 0];
  const random = new Random(seed);
  const indices = new Uint32Array(n);
  const values = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) indices[i] = random.int(n);
    values[r] = statistic(indices);
  }
  values.sort();
  const alpha = 1 - confidence;
  return [quantile(values, alpha / 2), quantile(values, 1 - alpha / 2)];
}

/** The q-quantile of sorted values, interpolating linearly between neighbours (numpy's default). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/** The mean of `scores` over the indices. */
export function meanStatistic(scores: ArrayLike<number>): Statistic {
  return (indices) => {
    let sum = 0;
    for (let i = 0; i < indices.length; i++) sum += scores[indices[i]!]!;
    return indices.length === 0 ? 0 : sum / indices.length;
  };
}

/**
 * `f1_score` over the rows at the indices, as `aggregate` in scoring.ts computes it over the whole run:
 * per label field macro-F1 over the labels seen in those rows (a failed row a miss for its gold
 * label), per free-text field the mean token F1, averaged over the fields.
 */
export function f1Statistic(rows: readonly EvaluationRow[], fields: readonly FieldInfo[]): Statistic {
  const parts = fields.map((f): Statistic => {
    if (f.label) {
      const codes = new Map<string, number>();
      const code = (label: string) => {
        let c = codes.get(label);
        if (c === undefined) codes.set(label, (c = codes.size));
        return c;
      };
      // Gold labels first, then predicted ones: the order `labelsOf` sums them in over the whole run.
      const gold = Int32Array.from(rows, (r) => code(labelOf(r.expected[f.name]) ?? ""));
      const predicted = Int32Array.from(rows, (r) => {
        const label = r.error === null && r.prediction !== null ? labelOf(r.prediction[f.name]) : null;
        return label === null ? -1 : code(label);
      });
      const size = codes.size;
      const goldCount = new Float64Array(size), predictedCount = new Float64Array(size), hits = new Float64Array(size);
      return (indices) => {
        goldCount.fill(0); predictedCount.fill(0); hits.fill(0);
        for (let k = 0; k < indices.length; k++) {
          const i = indices[k]!;
          const g = gold[i]!, p = predicted[i]!;
          goldCount[g]!++;
          if (p >= 0) {
            predictedCount[p]!++;
            if (p === g) hits[g]!++;
          }
        }
        let sum = 0, seen = 0;
        for (let l = 0; l < size; l++) {
          if (goldCount[l] === 0 && predictedCount[l] === 0) continue;
          seen++;
          const precision = predictedCount[l] === 0 ? 0 : hits[l]! / predictedCount[l]!;
          const recall = goldCount[l] === 0 ? 0 : hits[l]! / goldCount[l]!;
          sum += precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
        }
        return seen === 0 ? 0 : sum / seen;
      };
    }
    const scores = Float64Array.from(rows, (r) =>
      r.error === null && r.prediction !== null ? tokenF1(textOf(r.prediction[f.name]), textOf(r.expected[f.name])) : 0);
    return meanStatistic(scores);
  });
  return (indices) => {
    if (indices.length === 0 || parts.length === 0) return 0;
    let total = 0;
    for (const part of parts) total += part(indices);
    return total / parts.length;
  };
}

/** The indices 0 … n−1. */
export function allIndices(n: number): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => i);
}

/**
 * How a metric's value over a run is computed from its rows: the mean of the per-row scores, or for
 * the built-in `f1_score` the aggregate over the rows. A metric function the user named `f1_score`
 * is a mean: the aggregate is used only when it gives the run's own value.
 */
export function metricStatistic(metric: string, rows: readonly EvaluationRow[], fields: readonly FieldInfo[] | undefined, value: number | undefined): Statistic {
  const scores = Float64Array.from(rows, (r) => r.scores?.[metric] ?? 0);
  const mean = meanStatistic(scores);
  if (metric !== "f1_score" || rows.length === 0) return mean;
  const known = fields ?? inferFields(rows);
  // With no expected fields `aggregate` takes the mean as well.
  if (known.length === 0) return mean;
  const f1 = f1Statistic(rows, known);
  if (value === undefined || Math.abs(f1(allIndices(rows.length)) - value) <= 1e-9) return f1;
  return mean;
}

/**
 * Field kinds from the rows alone (for a report that lost its module, e.g. a lab store run or a report
 * read back from JSON): as `describeFields` decides for a field no predictor declares, a field is a
 * label when every expected value is a string of one word (at most 40 characters) and there are at
 * most 32 distinct values.
 */
export function inferFields(rows: readonly EvaluationRow[]): FieldInfo[] {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.expected ?? {})))];
  return names.map((name) => {
    const values = rows.map((r) => r.expected?.[name]);
    const label = values.every((v) => typeof v === "string" && v.length <= 40 && !/\s/.test(v)) && new Set(values).size <= 32;
    return { name, label, labels: undefined };
  });
}

/**
 * The exact two-sided McNemar test: with b01 pairs that went 0 → 1 and b10 that went 1 → 0,
 * p = min(1, 2·P(X ≤ min(b01, b10))) with X ~ Binomial(b01 + b10, 1/2); 1 with no discordant pairs.
 */
export function mcnemarExact(b01: number, b10: number): number {
  const n = b01 + b10;
  if (n === 0) return 1;
  const m = Math.min(b01, b10);
  // Terms in log space: C(n, k) / 2^n under- or overflows a double beyond n ≈ 1000.
  let logTerm = -n * Math.LN2;
  let logSum = logTerm;
  for (let k = 1; k <= m; k++) {
    logTerm += Math.log(n - k + 1) - Math.log(k);
    logSum = logSum > logTerm ? logSum + Math.log1p(Math.exp(logTerm - logSum)) : logTerm + Math.log1p(Math.exp(logSum - logTerm));
  }
  return Math.min(1, 2 * Math.exp(logSum));
}

/** Which test gave a p-value. */
export type PairedTest = "McNemar exact" | "sign-flip exact" | "sign-flip permutation";

/**
 * The paired sign-flip permutation test of the mean difference (two-sided): under no difference each
 * pair's difference is as likely to have the other sign. Pairs with no difference change no sum, so
 * only the m non-zero differences are flipped: when 2^m ≤ `permutations` every sign pattern is
 * enumerated and p = count(|flipped sum| ≥ |observed sum|) / 2^m (exact); otherwise `permutations`
 * random patterns (seeded) and p = (count + 1) / (permutations + 1).
 */
export function signFlipTest(differences: readonly number[], permutations = PERMUTATIONS, seed = SEED): { pValue: number; exact: boolean } {
  const d = differences.filter((x) => x !== 0);
  const m = d.length;
  let observed = 0, scale = 0;
  for (const x of d) {
    observed += x;
    scale += Math.abs(x);
  }
  observed = Math.abs(observed);
  // Sums of the same numbers in another order may differ in the last bits: ties within that count.
  const threshold = observed - 1e-12 * Math.max(1, scale);
  if (2 ** m <= permutations) {
    let count = 0;
    const patterns = 2 ** m;
    for (let mask = 0; mask < patterns; mask++) {
      let sum = 0;
      for (let i = 0; i < m; i++) sum += (mask >>> i) & 1 ? -d[i]! : d[i]!;
      if (Math.abs(sum) >= threshold) count++;
    }
    return { pValue: count / patterns, exact: true };
  }
  const random = new Random(seed);
  let count = 0;
  for (let r = 0; r < permutations; r++) {
    let sum = 0;
    for (let i = 0; i < m; i++) sum += random.next() < 0.5 ? -d[i]! : d[i]!;
    if (Math.abs(sum) >= threshold) count++;
  }
  return { pValue: (count + 1) / (permutations + 1), exact: false };
}
