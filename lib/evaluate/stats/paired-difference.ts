/**
 * The difference of two paired shares (0/1 scores of the same examples under two programs) with an
 * unconditional interval: Tango's score statistic and interval (Tango 1998, "Equivalence test and
 * confidence interval for the difference in proportions for the paired-sample design", Statistics in
 * Medicine 17:891–908), and the exact one-sided McNemar test of "no drop".
 *
 * Of n pairs, `improved` went 0 → 1 (first program 0, second 1) and `worsened` 1 → 0; the difference
 * is Δ = P(improved) − P(worsened), estimated by (improved − worsened)/n. Unlike the interval that
 * conditions on the changed pairs (which is [0, 0] when no pair changed), Tango's interval keeps the
 * number of changed pairs random, so few or no changed pairs among few examples still give a wide
 * interval.
 */
import { Binomial } from "./binomial.js";
import type { Interval } from "./methods.js";
import { normalQuantile } from "./normal.js";

/**
 * Tango's score statistic for H0: Δ = delta, with n pairs of which `improved` (b) went 0 → 1 and
 * `worsened` (c) went 1 → 0: Z(Δ) = (b − c − nΔ) / √(n·(2·p̃ + Δ − Δ²)), where p̃ is the maximum-
 * likelihood estimate of p(1→0) under Δ (see `constrainedWorsened`). Z falls as Δ rises; it is
 * ±Infinity where the variance is 0 and the numerator is not.
 */
export function tangoStatistic(improved: number, worsened: number, n: number, delta: number): number {
  const numerator = improved - worsened - n * delta;
  const pWorse = constrainedWorsened(improved, worsened, n, delta);
  // Under Δ: p(0→1) = p(1→0) + Δ, and Var(b − c) = n·(p(0→1) + p(1→0) − Δ²).
  const variance = n * (2 * pWorse + delta - delta * delta);
  if (!(variance > 1e-300)) return numerator === 0 ? 0 : numerator > 0 ? Infinity : -Infinity;
  return numerator / Math.sqrt(variance);
}

/**
 * The maximum-likelihood estimate of p = p(1→0) under p(0→1) = p + Δ: the non-negative root of
 * 2n·p² + B·p + C = 0, B = −b − c + (2n − b + c)·Δ, C = −c·Δ·(1 − Δ) (Tango 1998, with his
 * n12 = b, n21 = c and his Δ = p12 − p21 = Δ here).
 */
function constrainedWorsened(improved: number, worsened: number, n: number, delta: number): number {
  const b = improved, c = worsened;
  const A = 2 * n;
  const B = -b - c + (2 * n - b + c) * delta;
  const C = -c * delta * (1 - delta);
  const root = (Math.sqrt(Math.max(0, B * B - 4 * A * C)) - B) / (2 * A);
  return Math.min(1, Math.max(0, root));
}

/** The Δ in [−1, 1] where the falling `tangoStatistic` crosses z, by bisection. */
function solve(improved: number, worsened: number, n: number, z: number): number {
  let low = -1, high = 1;
  for (let i = 0; i < 200; i++) {
    const mid = (low + high) / 2;
    if (mid <= low || mid >= high) break;
    if (tangoStatistic(improved, worsened, n, mid) > z) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

function checkCounts(improved: number, worsened: number, n: number): void {
  for (const [name, value] of [["improved", improved], ["worsened", worsened], ["n", n]] as const) {
    if (!Number.isInteger(value) || value < 0) throw new RangeError(`paired difference: ${name} must be a whole number ≥ 0; received ${value}`);
  }
  if (n === 0 || improved + worsened > n) throw new RangeError(`paired difference: needs n ≥ 1 and improved + worsened ≤ n; received ${improved} + ${worsened} of ${n}`);
}

/**
 * Tango's score interval of Δ at `confidence` (two-sided, default 0.95): every Δ that the score test
 * does not reject, {Δ : |Z(Δ)| < z}, for n pairs of which `improved` went 0 → 1 and `worsened` 1 → 0.
 */
export function tangoInterval(improved: number, worsened: number, n: number, confidence = 0.95): Interval {
  checkCounts(improved, worsened, n);
  const z = normalQuantile(1 - (1 - confidence) / 2);
  return [solve(improved, worsened, n, z), solve(improved, worsened, n, -z)];
}

/**
 * Tango's one-sided lower confidence bound of Δ at level `alpha` (default 0.05): the smallest Δ the
 * one-sided score test of H0: Δ ≤ δ does not reject; Δ ≥ bound with about 1 − alpha confidence.
 */
export function tangoLowerBound(improved: number, worsened: number, n: number, alpha = 0.05): number {
  checkCounts(improved, worsened, n);
  return solve(improved, worsened, n, normalQuantile(1 - alpha));
}

/**
 * Whether the data rule out a drop larger than `tolerance` (Δ < −tolerance) at one-sided level
 * `alpha`: Tango's score test of H0: Δ ≤ −tolerance rejects, which is `tangoLowerBound ≥ −tolerance`.
 */
export function rulesOutDrop(improved: number, worsened: number, n: number, tolerance: number, alpha = 0.05): boolean {
  checkCounts(improved, worsened, n);
  return tangoStatistic(improved, worsened, n, -tolerance) >= normalQuantile(1 - alpha);
}

/**
 * The exact one-sided McNemar test of "no drop" (H0: Δ ≥ 0 against Δ < 0): P(X ≤ improved) with
 * X ~ Binomial(improved + worsened, 1/2); 1 when no pair changed. Conditional on the changed pairs,
 * so its level is at most alpha for every n and every rate of change.
 */
export function dropPValue(improved: number, worsened: number): number {
  const m = improved + worsened;
  if (m === 0) return 1;
  return new Binomial(m).lower(improved, 0.5);
}

/**
 * About how many pairs would make the score test conclusive if the shares of improved and worsened
 * pairs stayed as they are: the statistic grows as √n at fixed shares, so the smallest N with
 * Z ≥ z for H0: Δ ≤ −tolerance (a pass), or, when more pairs worsened than improved, with the McNemar
 * score |b − c|/√(b + c) ≥ z (a fail). Null when neither can happen (no difference and tolerance 0).
 */
export function pairsNeeded(improved: number, worsened: number, n: number, tolerance: number, alpha = 0.05): number | null {
  checkCounts(improved, worsened, n);
  const z = normalQuantile(1 - alpha);
  const candidates: number[] = [];
  const pass = tangoStatistic(improved, worsened, n, -tolerance);
  if (pass > 0) candidates.push(n * (z / pass) ** 2);
  if (worsened > improved) candidates.push(n * (z / ((worsened - improved) / Math.sqrt(worsened + improved))) ** 2);
  return candidates.length === 0 ? null : Math.ceil(Math.min(...candidates));
}
