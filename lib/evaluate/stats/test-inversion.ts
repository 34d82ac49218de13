/**
 * The interval of a paired difference that goes with its permutation test: the shifts δ the same test
 * does not reject, so that the interval excludes 0 exactly when the test is significant.
 */
import type { Interval } from "./methods.js";

/**
 * The patterns a paired permutation test compared the observed difference with: for each, the
 * difference it gave (`values`) and the share of the m changed examples it swapped (or flipped the
 * sign of) (`swapped`, 0 … 1).
 */
export interface TestPatterns {
  /** The difference each pattern gave. */
  values: Float64Array;
  /** The share of the changed examples each pattern swapped, 0 … 1. */
  swapped: Float64Array;
  /** Every pattern enumerated (p = count/patterns), else random ones (p = (count + 1)/(patterns + 1)). */
  exact: boolean;
}

/**
 * The confidence interval that inverts a paired permutation test: the set of shifts δ of the difference
 * D (the test's observed statistic) for which the test of "the difference is δ" does not reject at
 * α = 1 − confidence. Under "the difference is δ" each changed example carries δ·n/m of it, so a
 * pattern that swaps a share f of the m changed examples gives D_s − δ·(1 − 2f) (for a mean of paired
 * differences this is exactly the sign-flip test of dᵢ − δ·n/m over the changed examples), compared with
 * |D − δ|, on the same patterns as the test. On each side of D the number of patterns at least as far
 * out only grows toward D, so the accepted shifts form one interval [low, high]: each end is an order
 * statistic of the patterns' critical shifts, found exactly, not by search.
 *
 * The test's own p-value at δ = 0 decides whether 0 is inside (`significantAtZero`), so the interval
 * excludes 0 exactly when the test is significant, whatever rounding does to ties. Shifts are kept to
 * [−bound, bound] (the differences the scores allow): with very few changed examples no shift is
 * rejected and the interval is that whole range. No changed example (no patterns but the identity) gives [0, 0].
 */
export function invertPairedTest(observed: number, patterns: TestPatterns, confidence: number, significantAtZero: boolean, bound: number): Interval {
  const count = patterns.values.length;
  if (count <= 1 || bound <= 0) return [0, 0];
  const alpha = 1 - confidence;
  // The fewest patterns at least as far out that make p ≥ α, as the test computes p.
  const accepts = (c: number) => (patterns.exact ? c / count : (c + 1) / (count + 1)) >= alpha;
  let need = Math.max(0, Math.floor(alpha * count) - 2);
  while (!accepts(need)) need++;
  const lows = new Float64Array(count), highs = new Float64Array(count);
  for (let r = 0; r < count; r++) {
    const f = patterns.swapped[r]!, value = patterns.values[r]!;
    if (f <= 0 || f >= 1) {
      // Nothing or everything swapped: |D_s − δ(1 − 2f)| = |D − δ| at every δ, always counted.
      lows[r] = -Infinity;
      highs[r] = Infinity;
      continue;
    }
    // For δ ≤ D the pattern counts when δ ≥ (D − D_s)/(2f) or δ ≥ (D + D_s)/(2(1 − f)); for δ ≥ D when δ is at most either.
    const first = (observed - value) / (2 * f), second = (observed + value) / (2 * (1 - f));
    lows[r] = Math.min(first, second);
    highs[r] = Math.max(first, second);
  }
  lows.sort();
  highs.sort();
  // δ ≤ D is accepted when at least `need` lows are ≤ δ; δ ≥ D when at least `need` highs are ≥ δ.
  let low = need === 0 ? -Infinity : lows[need - 1]!;
  let high = need === 0 ? Infinity : highs[count - need]!;
  low = Math.min(Math.max(low, -bound), observed);
  high = Math.max(Math.min(high, bound), observed);
  if (!significantAtZero) {
    low = Math.min(low, 0);
    high = Math.max(high, 0);
  } else if (low <= 0 && high >= 0) {
    // Rounding in a tie said otherwise than the test: the nearest critical shift beyond 0, toward D.
    if (observed > 0) low = firstAbove(lows, need - 1, 0, observed);
    else high = -firstAbove(highs.map((v) => -v).reverse(), need - 1, 0, -observed);
  }
  return [low, high];
}

/** The first of the sorted values from index `from` on that is above `than`; `fallback` when none is. */
function firstAbove(sorted: Float64Array, from: number, than: number, fallback: number): number {
  for (let i = Math.max(0, from); i < sorted.length; i++) if (sorted[i]! > than) return Math.min(sorted[i]!, fallback);
  return fallback;
}
