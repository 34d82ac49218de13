import type { Interval } from "../evaluate/stats/methods.js";
import { normalQuantile } from "../evaluate/stats/normal.js";

/** Cohen's κ of a confusion matrix, with its large-sample standard error and interval. */
export interface Kappa {
  /** κ = (pₒ − pₑ)/(1 − pₑ); NaN when pₑ = 1 (both raters used one and the same category) or n = 0. */
  kappa: number;
  /** The large-sample standard error of Fleiss, Cohen & Everitt (1969), of the table as it is. */
  standardError: number;
  /**
   * κ̃ ± z·SẼ on the table with 2/k² added to each of its k² cells (two items spread evenly), clipped
   * to [−1, 1] and widened to hold κ itself: never a single point (see `cohenKappa`).
   */
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
 * `standardError` is the large-sample one of Fleiss, Cohen & Everitt (1969, Psychological Bulletin
 * 72(5), 323–327), which holds for κ ≠ 0 (not only under independence):
 * Var = [Σᵢⱼ pᵢⱼ (wᵢⱼ − (w̄ᵢ. + w̄.ⱼ)(1 − κ))² − (κ − pₑ(1 − κ))²] / (n (1 − pₑ)²), w̄ᵢ. = Σⱼ cⱼ wᵢⱼ, w̄.ⱼ = Σᵢ rᵢ wᵢⱼ.
 * The plain interval κ ± z·SE is too narrow at small n (exact coverage 0.31–0.86 at n = 30 on skewed
 * two-label populations) and a single point at κ = ±1 (the variance is 0 there). `ci` is the same normal interval
 * computed on the table with two pseudo-items spread evenly over its cells (2/k² each, ½ for two
 * labels), as Agresti and Coull add pseudo-counts to a share: κ̃ ± z·SẼ, clipped to [−1, 1], widened to
 * hold κ. Every cell is then positive, so the variance is too and the interval is never a point; with
 * two labels its exact coverage at n = 30 was 0.91–0.98 on seven of eight populations measured, 0.83 on
 * one where κ is undefined in 16% of samples (docs/judges.md lists them; bench/coverage.ts measures them).
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
  const { kappa, standardError, observed, expected } = kappaOf(matrix, n, weights);
  if (Number.isNaN(kappa)) return { ...none, observed, expected };
  const added = 2 / (k * k);
  const smoothed = kappaOf(matrix.map((row) => row.map((cell) => cell + added)), n + 2, weights);
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const low = Math.max(-1, Math.min(kappa, smoothed.kappa - z * smoothed.standardError));
  const high = Math.min(1, Math.max(kappa, smoothed.kappa + z * smoothed.standardError));
  return { kappa, standardError, ci: [low, high], observed, expected };
}

/** κ, its Fleiss–Cohen–Everitt standard error, pₒ and pₑ of a table of n items (cells may be fractional); κ NaN when pₑ = 1. */
function kappaOf(matrix: readonly (readonly number[])[], n: number, weights: KappaWeights): { kappa: number; standardError: number; observed: number; expected: number } {
  const k = matrix.length;
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
  if (1 - expected <= 1e-12) return { kappa: NaN, standardError: NaN, observed, expected };
  const kappa = (observed - expected) / (1 - expected);
  const rowMean = Array.from({ length: k }, (_, i) => c.reduce((a, cj, j) => a + cj * w(i, j), 0));
  const colMean = Array.from({ length: k }, (_, j) => r.reduce((a, ri, i) => a + ri * w(i, j), 0));
  let sum = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) sum += p[i]![j]! * (w(i, j) - (rowMean[i]! + colMean[j]!) * (1 - kappa)) ** 2;
  }
  const variance = Math.max(0, (sum - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2));
  return { kappa, standardError: Math.sqrt(variance), observed, expected };
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
