/**
 * The exact McNemar test of paired 0/1 scores: its p-value, the dual Clopper–Pearson interval of the
 * difference, its rejection region and its exact power.
 */
import { Binomial } from "./binomial.js";
import type { Interval } from "./methods.js";
import { clopperPearson } from "./share-interval.js";

/** Two-sided exact binomial p-value of k successes in `binomial.m` trials against p = 1/2: min(1, 2·min tail). */
function twoSidedHalf(binomial: Binomial, k: number): number {
  return Math.min(1, 2 * Math.min(binomial.lower(k, 0.5), binomial.upper(k, 0.5)));
}

/**
 * The exact two-sided McNemar test: with b01 pairs that went 0 → 1 and b10 that went 1 → 0,
 * p = min(1, 2·min(P(X ≤ b01), P(X ≥ b01))) with X ~ Binomial(b01 + b10, 1/2), which is
 * min(1, 2·P(X ≤ min(b01, b10))); 1 with no discordant pairs.
 */
export function mcnemarExact(b01: number, b10: number): number {
  const m = b01 + b10;
  if (m === 0) return 1;
  return twoSidedHalf(new Binomial(m), b01);
}

/**
 * The McNemar test with the difference interval that goes with it, for n pairs of 0/1 scores of which
 * `improved` went 0 → 1 and `worsened` 1 → 0: the Clopper–Pearson interval [lo, hi] of
 * improved/(improved + worsened), mapped to a difference, diff = (b − c)/n = ((b + c)/n)·(2·p̂ − 1), so
 * the interval is ((b + c)/n)·(2·[lo, hi] − 1). The p-value and the interval read the same binomial
 * tails at 1/2, so `pValue < 1 − confidence` exactly when the interval excludes 0. No changed pair:
 * p = 1 and the interval [0, 0].
 */
export function mcnemarComparison(improved: number, worsened: number, n: number, confidence = 0.95): { pValue: number; ci: Interval } {
  const m = improved + worsened;
  if (m === 0) return { pValue: 1, ci: [0, 0] };
  const binomial = new Binomial(m);
  const pValue = twoSidedHalf(binomial, improved);
  const [lo, hi] = clopperPearson(improved, m, confidence, binomial);
  return { pValue, ci: [(m * (2 * lo - 1)) / n, (m * (2 * hi - 1)) / n] };
}

/**
 * The exact McNemar test's rejection region for m discordant pairs at level α: it rejects when the
 * number improved is ≤ `low` or ≥ `high` (`low` = −1 and `high` = m + 1 when no count rejects).
 */
export function mcnemarRejection(m: number, alpha: number, binomial = new Binomial(m)): { low: number; high: number } {
  const rejects = (k: number) => twoSidedHalf(binomial, k) < alpha;
  // The p-value rises with k up to m/2 and falls after: binary search for each boundary.
  let yes = -1, no = Math.floor(m / 2) + 1;
  while (no - yes > 1) {
    const mid = (yes + no) >> 1;
    if (rejects(mid)) yes = mid;
    else no = mid;
  }
  const low = yes;
  let no2 = Math.ceil(m / 2) - 1, yes2 = m + 1;
  while (yes2 - no2 > 1) {
    const mid = (yes2 + no2) >> 1;
    if (rejects(mid)) yes2 = mid;
    else no2 = mid;
  }
  return { low, high: yes2 };
}

/** The exact power of the McNemar test at level α with m discordant pairs that each improved with probability p. */
export function mcnemarPower(m: number, p: number, alpha: number, binomial = new Binomial(m), region = mcnemarRejection(m, alpha, binomial)): number {
  return binomial.lower(region.low, p) + binomial.upper(region.high, p);
}
