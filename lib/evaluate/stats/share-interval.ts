/**
 * Intervals for a share k of n: the modified Wilson interval behind every reported share, Wilson's
 * score interval it modifies, and the exact Clopper–Pearson interval.
 */
import { Binomial, bisect } from "./binomial.js";
import type { Interval } from "./methods.js";
import { normalQuantile } from "./normal.js";

/**
 * Wilson's score interval of a share k of n at `confidence`:
 * (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n) with z = Φ⁻¹(1 − α/2). 0 of n gives [0, high > 0],
 * n of n gives [low < 1, 1]. n = 0 gives [0, 0] (nothing measured).
 */
export function wilsonInterval(k: number, n: number, confidence = 0.95): Interval {
  if (n === 0) return [0, 0];
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const z2 = z * z;
  const p = k / n;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [k <= 0 ? 0 : Math.max(0, center - half), k >= n ? 1 : Math.min(1, center + half)];
}

/**
 * The counts next to 0 (and next to n) whose Wilson end is replaced by a Poisson bound: 2 for n ≤ 50,
 * else 3 (Brown, Cai & DasGupta 2001, sec. 4.1.1, give 2 for n ≤ 50 and 3 for 51 ≤ n ≤ 100; the dips
 * it removes stay as deep at any larger n, so 3 is kept there).
 */
export function poissonCounts(n: number): number {
  return n <= 50 ? 2 : 3;
}

/**
 * The one-sided Poisson lower bound of a count x ≥ 1 at level α: the λ with P(Poisson(λ) ≥ x) = α
 * (½·χ²_{2x} at α), by bisection. For x = 1 it is −ln(1 − α).
 */
export function poissonLowerBound(x: number, alpha: number): number {
  const atLeast = (lambda: number) => {
    let term = Math.exp(-lambda), below = term;
    for (let j = 1; j < x; j++) {
      term *= lambda / j;
      below += term;
    }
    return 1 - below;
  };
  let low = 0, high = x + 10 * Math.sqrt(x) + 10;
  for (let i = 0; i < 200 && high - low > 1e-15 * high; i++) {
    const mid = (low + high) / 2;
    if (atLeast(mid) < alpha) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/**
 * The modified Wilson interval of Brown, Cai & DasGupta (2001, Statistical Science 16(2), sec. 4.1.1),
 * what a share's `"wilson"` interval is: Wilson's score interval, except that for 1 ≤ k ≤ x* the lower
 * end is the one-sided Poisson bound λ/n with P(Poisson(λ) ≥ k) = α (and for 1 ≤ n − k ≤ x* the upper
 * end is 1 − λ/n with λ from n − k), x* = `poissonCounts(n)`. Wilson's interval covers only 0.84–0.86
 * of the time just above 0 and just below 1 (at p ≈ 0.17/n, where k = 1 no longer covers); the Poisson
 * end, lower than Wilson's, removes those dips. A k that is not a whole number (the mean of graded
 * scores taken as a share) gets Wilson's ends. n = 0 gives [0, 0].
 */
export function modifiedWilsonInterval(k: number, n: number, confidence = 0.95): Interval {
  if (n === 0) return [0, 0];
  let [low, high] = wilsonInterval(k, n, confidence);
  if (!Number.isInteger(k)) return [low, high];
  const alpha = 1 - confidence, counts = poissonCounts(n);
  if (k >= 1 && k <= counts) low = Math.min(low, poissonLowerBound(k, alpha) / n);
  if (n - k >= 1 && n - k <= counts) high = Math.max(high, 1 - poissonLowerBound(n - k, alpha) / n);
  return [low, high];
}

/**
 * The Clopper–Pearson (exact, equal-tailed) interval of a share k of m: low solves P(X ≥ k | low) = α/2,
 * high solves P(X ≤ k | high) = α/2 (0 when k = 0, 1 when k = m). m = 0 gives [0, 1].
 */
export function clopperPearson(k: number, m: number, confidence = 0.95, binomial = new Binomial(m)): Interval {
  if (m === 0) return [0, 1];
  const half = (1 - confidence) / 2;
  // P(X ≥ k | p) rises with p: the lower end is the first p where it reaches α/2.
  const low = k <= 0 ? 0 : bisect((p) => binomial.upper(k, p) >= half)[1];
  // P(X ≤ k | p) falls with p: the upper end is the last p where it is still at least α/2.
  const high = k >= m ? 1 : bisect((p) => binomial.lower(k, p) < half)[0];
  return [low, high];
}
