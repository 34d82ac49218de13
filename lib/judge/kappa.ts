import type { Interval } from "../evaluate/stats/methods.js";
import { normalQuantile } from "../evaluate/stats/normal.js";

/** Cohen's κ of a confusion matrix, with its large-sample standard error and interval. */
export interface Kappa {
  /** κ = (pₒ − pₑ)/(1 − pₑ); NaN when pₑ = 1 (both raters used one and the same category) or n = 0. */
  kappa: number;
  /** The large-sample standard error of Fleiss, Cohen & Everitt (1969). */
  standardError: number;
  /** κ ± z·SE, clipped to [−1, 1]. */
  ci: Interval;
  /** Observed (weighted) agreement pₒ. */
  observed: number;
  /** (Weighted) agreement expected by chance from the two raters' marginals, pₑ. */
  expected: number;
}

/** `"quadratic"`: agreement weight 1 − (i − j)²/(k − 1)² between categories i and j (ordered); `"none"`: 1 on the diagonal only. */
export type KappaWeights = "none" | "quadratic";

/**
 * Cohen's κ (weighted κ with `"quadratic"` weights) of `matrix[i][j]`: items rater 1 put in category
 * i and rater 2 in category j. With agreement weights wᵢⱼ, pᵢⱼ = matrix[i][j]/n, row and column
 * marginals rᵢ, cⱼ: pₒ = Σ wᵢⱼ pᵢⱼ, pₑ = Σ wᵢⱼ rᵢ cⱼ, κ = (pₒ − pₑ)/(1 − pₑ).
 *
 * The interval is the normal one, κ ± z·SE, with the large-sample variance of Fleiss, Cohen & Everitt
 * (1969, Psychological Bulletin 72(5), 323–327), which holds for κ ≠ 0 (not only under independence):
 * Var = [Σᵢⱼ pᵢⱼ (wᵢⱼ − (w̄ᵢ. + w̄.ⱼ)(1 − κ))² − (κ − pₑ(1 − κ))²] / (n (1 − pₑ)²), w̄ᵢ. = Σⱼ cⱼ wᵢⱼ, w̄.ⱼ = Σᵢ rᵢ wᵢⱼ.
 * With κ = 1 the variance is 0 and the interval [1, 1]; at small n it is too narrow, like every
 * large-sample interval.
 */
export function cohenKappa(matrix: readonly (readonly number[])[], weights: KappaWeights = "none", confidence = 0.95): Kappa {
  const k = matrix.length;
  let n = 0;
  for (const row of matrix) {
    if (row.length !== k) throw new RangeError(`cohenKappa: the matrix must be square; a row has ${row.length} cells for ${k} categories`);
    for (const cell of row) n += cell;
  }
  const none = { kappa: NaN, standardError: NaN, ci: [NaN, NaN] as Interval, observed: NaN, expected: NaN };
  if (n === 0) return none;
  const w = (i: number, j: number): number => (weights === "none" || k < 2 ? (i === j ? 1 : 0) : 1 - (i - j) ** 2 / (k - 1) ** 2);
  const p = matrix.map((row) => row.map((cell) => cell / n));
  const r = p.map((row) => row.reduce((a, b) => a + b, 0));
  const c = Array.from({ length: k }, (_, j) => p.reduce((a, row) => a + row[j]!, 0));
  let observed = 0, expected = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      observed += w(i, j) * p[i]![j]!;
      expected += w(i, j) * r[i]! * c[j]!;
    }
  }
  if (1 - expected <= 1e-12) return { ...none, observed, expected };
  const kappa = (observed - expected) / (1 - expected);
  const rowMean = Array.from({ length: k }, (_, i) => c.reduce((a, cj, j) => a + cj * w(i, j), 0));
  const colMean = Array.from({ length: k }, (_, j) => r.reduce((a, ri, i) => a + ri * w(i, j), 0));
  let sum = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) sum += p[i]![j]! * (w(i, j) - (rowMean[i]! + colMean[j]!) * (1 - kappa)) ** 2;
  }
  const variance = Math.max(0, (sum - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2));
  const standardError = Math.sqrt(variance);
  const z = normalQuantile(1 - (1 - confidence) / 2);
  return { kappa, standardError, ci: [Math.max(-1, kappa - z * standardError), Math.min(1, kappa + z * standardError)], observed, expected };
}

/** The confusion of two raters' labels over `labels` (rows: the first rater, columns: the second); labels not listed are an error. */
export function confusionOf(labels: readonly string[], first: readonly string[], second: readonly string[]): number[][] {
  const index = new Map(labels.map((l, i) => [l, i]));
  const matrix = labels.map(() => labels.map(() => 0));
  first.forEach((a, t) => {
    const i = index.get(a), j = index.get(second[t]!);
    if (i === undefined || j === undefined) throw new RangeError(`confusionOf: label ${JSON.stringify(i === undefined ? a : second[t])} is not one of ${labels.join(", ")}`);
    matrix[i]![j]!++;
  });
  return matrix;
}
