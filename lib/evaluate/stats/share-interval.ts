/** Intervals for a share k of n: Wilson's score interval and the exact Clopper–Pearson interval. */
import { Binomial, bisect } from "./binomial.js";
import type { Interval } from "./methods.js";
import { normalQuantile } from "./normal.js";

/**
 * The Wilson score interval of a share k of n at `confidence`:
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
