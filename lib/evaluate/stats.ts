/**
 * The statistics behind `report.ci` and `compare` (seeded with lib/random.ts): the Wilson score
 * interval for shares, the BCa bootstrap for other metrics, the exact McNemar test with its dual
 * Clopper–Pearson interval, the paired sign-flip test, the macro-F1 permutation test, the minimum
 * detectable effect and Holm's adjustment. Everything is deterministic: the same scores give the same
 * intervals and p-values on every run and machine.
 */
import { ValidationError } from "../errors.js";
import type { EvaluationRow } from "../store/records.js";
import { labelOf, textOf, type FieldInfo } from "./fields.js";
import { tokenF1 } from "./metrics.js";
import { Random } from "../random.js";

/** A confidence interval: `[low, high]`. */
export type Interval = [low: number, high: number];

/**
 * How an interval was computed: `"wilson"` (Wilson score interval of a share), `"bootstrap-bca"`
 * (bias-corrected and accelerated bootstrap) or `"clopper-pearson"` (a paired difference of 0/1
 * scores: the exact interval of the share of improved among the changed examples, scaled).
 */
export type CiMethod = "wilson" | "bootstrap-bca" | "clopper-pearson";

/** Which test gave a p-value. */
export type PairedTest = "mcnemar-exact" | "sign-flip" | "permutation-macro-f1";

/** Bootstrap resamples behind every bootstrap interval. */
export const RESAMPLES = 2000;
/** Random sign flips of a permutation test when exact enumeration would take more. */
export const PERMUTATIONS = 10000;
/** Sign patterns the macro-F1 permutation test enumerates exactly (2^16); beyond, `PERMUTATIONS` random ones. */
export const MACRO_F1_EXACT_PATTERNS = 2 ** 16;
/** The seed of every resampling and permutation stream. */
export const SEED = 0;
/** The power `mde` is computed for. */
export const MDE_POWER = 0.8;

// ---------------------------------------------------------------------------------------------
// The normal distribution
// ---------------------------------------------------------------------------------------------

const SQRT_PI = Math.sqrt(Math.PI);

/**
 * The complementary error function. For |x| < 3 the series erf(x) = 2/√π·e^(−x²)·Σ 2ⁿx^(2n+1)/(1·3·…·(2n+1))
 * (all terms positive, no cancellation), for larger x Laplace's continued fraction
 * erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), which keeps the relative precision
 * of the far tail. Relative error about 1e-13 or better.
 */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x < 3) {
    const x2 = 2 * x * x;
    let term = x, sum = x;
    for (let k = 1; k < 300; k++) {
      term *= x2 / (2 * k + 1);
      sum += term;
      if (term <= sum * 1e-17) break;
    }
    return 1 - (2 / SQRT_PI) * Math.exp(-x * x) * sum;
  }
  if (x > 27) return 0;
  let f = x;
  for (let k = 80; k >= 1; k--) f = x + k / 2 / f;
  return Math.exp(-x * x) / SQRT_PI / f;
}

/** Φ(x), the standard normal distribution function. */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / Math.SQRT2);
}

/**
 * Φ⁻¹(p), the standard normal quantile: a starting value from Abramowitz & Stegun 26.2.23 (error
 * below 4.5e-4), refined by Halley steps on Φ(x) − p until the step is below 1e-15 (a few steps).
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  // 1 − p is exact for p in [0.5, 1]; the lower tail keeps the relative precision.
  if (p > 0.5) return -normalQuantile(1 - p);
  const t = Math.sqrt(-2 * Math.log(p));
  let x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (let i = 0; i < 8; i++) {
    const e = normalCdf(x) - p;
    const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
    const step = u / (1 + (x * u) / 2);
    x -= step;
    if (Math.abs(step) <= 1e-15 * Math.max(1, Math.abs(x))) break;
  }
  return x;
}

// ---------------------------------------------------------------------------------------------
// The binomial distribution: exact tails, Wilson, Clopper–Pearson, McNemar, power
// ---------------------------------------------------------------------------------------------

/** Binomial(m, p) tail probabilities, summed in log space (C(m, k)·pᵏ under- or overflows a double beyond m ≈ 1000). */
export class Binomial {
  readonly #logChoose: Float64Array;

  constructor(readonly m: number) {
    if (!Number.isInteger(m) || m < 0) throw new RangeError(`Binomial: the number of trials must be a whole number ≥ 0; received ${m}`);
    const logChoose = new Float64Array(m + 1);
    // log C(m, j), built up to the middle and mirrored so that C(m, j) = C(m, m − j) exactly.
    const half = Math.floor(m / 2);
    for (let j = 1; j <= half; j++) logChoose[j] = logChoose[j - 1]! + Math.log(m - j + 1) - Math.log(j);
    for (let j = half + 1; j <= m; j++) logChoose[j] = logChoose[m - j]!;
    this.#logChoose = logChoose;
  }

  /** P(X ≤ k). */
  lower(k: number, p: number): number {
    if (k < 0) return 0;
    if (k >= this.m) return 1;
    if (p <= 0) return 1;
    if (p >= 1) return 0;
    return this.#sum(0, k, p);
  }

  /** P(X ≥ k). */
  upper(k: number, p: number): number {
    if (k <= 0) return 1;
    if (k > this.m) return 0;
    if (p <= 0) return 0;
    if (p >= 1) return 1;
    return this.#sum(k, this.m, p);
  }

  /**
   * Σ_{j=from}^{to} C(m, j)·pʲ·(1−p)^(m−j): the largest term (at the mode, or the end nearest it) in log
   * space, the others relative to it by the ratio of neighbours, outward until they no longer count.
   */
  #sum(from: number, to: number, p: number): number {
    const m = this.m, q = 1 - p;
    const start = Math.min(to, Math.max(from, Math.floor((m + 1) * p)));
    const logStart = this.#logChoose[start]! + start * Math.log(p) + (m - start) * Math.log1p(-p);
    const up = p / q, down = q / p;
    let sum = 1, term = 1;
    for (let j = start; j < to; j++) {
      term *= ((m - j) / (j + 1)) * up;
      sum += term;
      if (term < sum * 1e-17) break;
    }
    term = 1;
    for (let j = start; j > from; j--) {
      term *= (j / (m - j + 1)) * down;
      sum += term;
      if (term < sum * 1e-17) break;
    }
    return Math.min(1, Math.exp(logStart) * sum);
  }
}

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
 * Bisection on [0, 1] for the point where a monotone predicate turns true: returns the last point
 * found false and the first found true. The first point tried is exactly 1/2, so whether the answer
 * lies above or below 1/2 is decided by the predicate at 1/2 itself (what the McNemar p-value reads).
 */
function bisect(turnsTrue: (p: number) => boolean): [low: number, high: number] {
  let low = 0, high = 1;
  for (;;) {
    const mid = (low + high) / 2;
    if (mid <= low || mid >= high) return [low, high];
    if (turnsTrue(mid)) high = mid;
    else low = mid;
  }
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

/**
 * The minimum detectable effect of a paired comparison of 0/1 scores: with n pairs of which m changed
 * (discordant share d = m/n), the smallest true difference δ ≥ 0 for which the exact McNemar test at
 * level α = 1 − confidence rejects with probability ≥ `power` when each changed pair improved with
 * probability p = (1 + δ/d)/2 (the power summed exactly over the binomial). The power rises with p on
 * [1/2, 1], so δ is found by bisection. Null when no pair changed or when m is too small for the test
 * ever to reject (at α = 0.05, m ≤ 5: even m of m improved gives p = 2/2^m ≥ 0.05).
 */
export function mcnemarMde(n: number, m: number, confidence = 0.95, power = MDE_POWER): number | null {
  if (m === 0 || n === 0) return null;
  const alpha = 1 - confidence;
  const binomial = new Binomial(m);
  const region = mcnemarRejection(m, alpha, binomial);
  if (region.high > m) return null;
  const powerAt = (p: number) => mcnemarPower(m, p, alpha, binomial, region);
  // Bisection on p in [1/2, 1]: map [0, 1] onto it.
  const [, t] = bisect((u) => powerAt(0.5 + u / 2) >= power);
  const d = m / n;
  let delta = Math.min(d, d * (2 * (0.5 + t / 2) - 1));
  // The reader maps δ back to p = (1 + δ/d)/2: make sure that p still has the power (a few ulps up at most).
  for (let i = 0; i < 64 && delta < d && powerAt((1 + delta / d) / 2) < power; i++) delta = Math.min(d, delta + Math.max(Number.EPSILON * delta, Number.MIN_VALUE));
  return delta;
}

/**
 * The minimum detectable effect by the normal approximation: (z_{1−α/2} + z_power)·se, where se is
 * the standard error of the difference (for a mean of paired differences, sd/√n).
 */
export function normalMde(se: number, confidence = 0.95, power = MDE_POWER): number {
  return (normalQuantile(1 - (1 - confidence) / 2) + normalQuantile(power)) * se;
}

/**
 * Holm's step-down adjustment of a family of p-values: sorted ascending, the i-th smallest (from 1) is
 * multiplied by (m − i + 1), made monotone (never below the one before) and capped at 1. Returned in
 * the order given. Ties keep their order.
 */
export function holm(pValues: readonly number[]): number[] {
  if (!Array.isArray(pValues)) throw new ValidationError(`holm: expected an array of p-values; received ${typeof pValues}`, { field: "pValues" });
  pValues.forEach((p, i) => {
    if (typeof p !== "number" || !(p >= 0 && p <= 1)) {
      throw new ValidationError(`holm: pValues[${i}] must be a number between 0 and 1; received ${JSON.stringify(p)}`, { field: `pValues[${i}]` });
    }
  });
  const m = pValues.length;
  const order = pValues.map((_, i) => i).sort((x, y) => pValues[x]! - pValues[y]! || x - y);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach((i, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * pValues[i]!));
    adjusted[i] = running;
  });
  return adjusted;
}

// ---------------------------------------------------------------------------------------------
// Statistics of rows and the bootstrap
// ---------------------------------------------------------------------------------------------

/**
 * A statistic of a set of rows given by index (an index may repeat: bootstrap resamples draw with
 * replacement). `leaveOneOut`, when present, gives the n jackknife values (the statistic without row
 * i) faster than n calls would.
 */
export interface Statistic {
  (indices: ArrayLike<number>): number;
  leaveOneOut?: () => Float64Array;
}

/** The indices 0 … n−1. */
export function allIndices(n: number): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => i);
}

/** `resamples` bootstrap values of the statistic (n of n rows drawn with replacement, seeded), sorted. */
function bootstrapValues(n: number, statistic: Statistic, resamples: number, seed: number): Float64Array {
  const random = new Random(seed);
  const indices = new Uint32Array(n);
  const values = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) indices[i] = random.int(n);
    values[r] = statistic(indices);
  }
  return values.sort();
}

/**
 * Percentile bootstrap: the (1 − confidence)/2 and (1 + confidence)/2 quantiles of the bootstrap
 * values. No longer behind any reported interval (at small n it covers far less than it says: for a
 * share, 0 of n right gives [0, 0]); kept to measure that against.
 */
export function bootstrapInterval(n: number, statistic: Statistic, confidence = 0.95, resamples = RESAMPLES, seed = SEED): Interval {
  if (n === 0) return [0, 0];
  const values = bootstrapValues(n, statistic, resamples, seed);
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

/** The jackknife values of a statistic: without row i, for each i (its `leaveOneOut` when it has one). */
export function jackknife(n: number, statistic: Statistic): Float64Array {
  if (statistic.leaveOneOut !== undefined) return statistic.leaveOneOut();
  const out = new Float64Array(n);
  const indices = new Uint32Array(Math.max(0, n - 1));
  for (let i = 0; i < n; i++) {
    for (let j = 0, k = 0; j < n; j++) if (j !== i) indices[k++] = j;
    out[i] = statistic(indices);
  }
  return out;
}

/** The jackknife standard error √((n−1)/n · Σ(θ₍ᵢ₎ − θ̄)²); for a mean it is exactly sd/√n. 0 for n < 2. */
export function jackknifeStandardError(values: ArrayLike<number>): number {
  const n = values.length;
  if (n < 2) return 0;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += values[i]!;
  mean /= n;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (values[i]! - mean) ** 2;
  return Math.sqrt(((n - 1) / n) * squares);
}

/** A BCa interval with what it was built from. */
export interface BcaResult {
  interval: Interval;
  /** The statistic on all rows. */
  estimate: number;
  /** Jackknife standard error of the statistic. */
  standardError: number;
  /** Bias correction z₀ and acceleration a (both 0 when the interval collapsed). */
  bias: number;
  acceleration: number;
}

/**
 * The bias-corrected and accelerated (BCa) bootstrap interval (Efron 1987): `resamples` seeded
 * resamples; bias correction z₀ = Φ⁻¹(share of bootstrap values below the estimate, ties counted
 * half); acceleration a = Σ(θ̄ − θ₍ᵢ₎)³ / (6·(Σ(θ̄ − θ₍ᵢ₎)²)^{3/2}) from the jackknife; the interval is the
 * bootstrap quantiles at Φ(z₀ + (z₀ + z)/(1 − a(z₀ + z))) for z = Φ⁻¹(α/2) and Φ⁻¹(1 − α/2).
 * When every bootstrap value equals the estimate (all rows score the same) the interval collapses to
 * [estimate, estimate]; when none is on one side of it, that share is taken as 1/(2·resamples).
 */
export function bca(n: number, statistic: Statistic, confidence = 0.95, resamples = RESAMPLES, seed = SEED): BcaResult {
  if (n === 0) return { interval: [0, 0], estimate: 0, standardError: 0, bias: 0, acceleration: 0 };
  const estimate = statistic(allIndices(n));
  const loo = jackknife(n, statistic);
  const standardError = jackknifeStandardError(loo);
  const values = bootstrapValues(n, statistic, resamples, seed);
  const tolerance = 1e-12 * Math.max(1, Math.abs(estimate));
  if (values[resamples - 1]! - values[0]! <= tolerance) return { interval: [estimate, estimate], estimate, standardError, bias: 0, acceleration: 0 };
  let below = 0, equal = 0;
  for (const v of values) {
    if (v < estimate - tolerance) below++;
    else if (v <= estimate + tolerance) equal++;
  }
  const share = Math.min(1 - 0.5 / resamples, Math.max(0.5 / resamples, (below + equal / 2) / resamples));
  const bias = normalQuantile(share);
  let mean = 0;
  for (const v of loo) mean += v;
  mean /= n;
  let squares = 0, cubes = 0;
  for (const v of loo) {
    const d = mean - v;
    squares += d * d;
    cubes += d * d * d;
  }
  const acceleration = squares > 0 ? cubes / (6 * squares ** 1.5) : 0;
  const alpha = 1 - confidence;
  const level = (z: number, fallback: number) => {
    const denominator = 1 - acceleration * (bias + z);
    const q = normalCdf(bias + (bias + z) / denominator);
    // An acceleration so large that the correction turns over: the percentile end.
    return denominator > 0 && Number.isFinite(q) ? q : fallback;
  };
  const low = quantile(values, level(normalQuantile(alpha / 2), alpha / 2));
  const high = quantile(values, level(normalQuantile(1 - alpha / 2), 1 - alpha / 2));
  return { interval: [low, high], estimate, standardError, bias, acceleration };
}

/** The BCa interval alone (see `bca`). */
export function bcaInterval(n: number, statistic: Statistic, confidence = 0.95, resamples = RESAMPLES, seed = SEED): Interval {
  return bca(n, statistic, confidence, resamples, seed).interval;
}

/** The mean of `scores` over the indices; its leave-one-out values are (S − xᵢ)/(n − 1). */
export function meanStatistic(scores: ArrayLike<number>): Statistic {
  const statistic: Statistic = (indices) => {
    let sum = 0;
    for (let i = 0; i < indices.length; i++) sum += scores[indices[i]!]!;
    return indices.length === 0 ? 0 : sum / indices.length;
  };
  statistic.leaveOneOut = () => {
    const n = scores.length;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += scores[i]!;
    return Float64Array.from({ length: n }, (_, i) => (n < 2 ? 0 : (sum - scores[i]!) / (n - 1)));
  };
  return statistic;
}

/** B − A on the same rows (a paired difference); leave-one-out values are the differences of theirs. */
export function differenceStatistic(a: Statistic, b: Statistic, n: number): Statistic {
  const statistic: Statistic = (indices) => b(indices) - a(indices);
  statistic.leaveOneOut = () => {
    const la = jackknife(n, a), lb = jackknife(n, b);
    return lb.map((v, i) => v - la[i]!);
  };
  return statistic;
}

/** Per-label counts → macro-F1 over the labels seen (gold or predicted count above 0). */
function macroFromCounts(goldCount: ArrayLike<number>, predictedCount: ArrayLike<number>, hits: ArrayLike<number>): number {
  let sum = 0, seen = 0;
  for (let l = 0; l < goldCount.length; l++) {
    const g = goldCount[l]!, p = predictedCount[l]!;
    if (g === 0 && p === 0) continue;
    seen++;
    const precision = p === 0 ? 0 : hits[l]! / p;
    const recall = g === 0 ? 0 : hits[l]! / g;
    sum += precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  }
  return seen === 0 ? 0 : sum / seen;
}

/** A label field's gold and predicted labels as codes (−1: no predicted label, the row failed or lacks the field). */
function labelCodes(rowSets: readonly (readonly EvaluationRow[])[], field: string): { size: number; gold: Int32Array; predicted: Int32Array[] } {
  const codes = new Map<string, number>();
  const code = (label: string) => {
    let c = codes.get(label);
    if (c === undefined) codes.set(label, (c = codes.size));
    return c;
  };
  // Gold labels first, then predicted ones: the order `labelsOf` sums them in over the whole run.
  const gold = Int32Array.from(rowSets[0]!, (r) => code(labelOf(r.expected[field]) ?? ""));
  const predicted = rowSets.map((rows) => Int32Array.from(rows, (r) => {
    const label = r.error === null && r.prediction !== null ? labelOf(r.prediction[field]) : null;
    return label === null ? -1 : code(label);
  }));
  return { size: codes.size, gold, predicted };
}

/** A free-text field's token F1 per row (0 for a failed row). */
function textScores(rows: readonly EvaluationRow[], field: string): Float64Array {
  return Float64Array.from(rows, (r) => (r.error === null && r.prediction !== null ? tokenF1(textOf(r.prediction[field]), textOf(r.expected[field])) : 0));
}

/**
 * `f1_score` over the rows at the indices, as `aggregate` in scoring.ts computes it over the whole run:
 * per label field macro-F1 over the labels seen in those rows (a failed row a miss for its gold
 * label), per free-text field the mean token F1, averaged over the fields.
 */
export function f1Statistic(rows: readonly EvaluationRow[], fields: readonly FieldInfo[]): Statistic {
  const n = rows.length;
  const parts = fields.map((f): Statistic => {
    if (!f.label) return meanStatistic(textScores(rows, f.name));
    const { size, gold, predicted: [predicted] } = labelCodes([rows], f.name);
    const goldCount = new Float64Array(size), predictedCount = new Float64Array(size), hits = new Float64Array(size);
    const count = (i: number, by: number) => {
      const g = gold[i]!, p = predicted![i]!;
      goldCount[g]! += by;
      if (p >= 0) {
        predictedCount[p]! += by;
        if (p === g) hits[g]! += by;
      }
    };
    const statistic: Statistic = (indices) => {
      goldCount.fill(0); predictedCount.fill(0); hits.fill(0);
      for (let k = 0; k < indices.length; k++) count(indices[k]!, 1);
      return macroFromCounts(goldCount, predictedCount, hits);
    };
    statistic.leaveOneOut = () => {
      goldCount.fill(0); predictedCount.fill(0); hits.fill(0);
      for (let i = 0; i < n; i++) count(i, 1);
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        count(i, -1);
        out[i] = macroFromCounts(goldCount, predictedCount, hits);
        count(i, 1);
      }
      return out;
    };
    return statistic;
  });
  const statistic: Statistic = (indices) => {
    if (indices.length === 0 || parts.length === 0) return 0;
    let total = 0;
    for (const part of parts) total += part(indices);
    return total / parts.length;
  };
  statistic.leaveOneOut = () => {
    const out = new Float64Array(n);
    if (n < 2 || parts.length === 0) return out;
    for (const part of parts) {
      const values = jackknife(n, part);
      for (let i = 0; i < n; i++) out[i]! += values[i]!;
    }
    return out.map((v) => v / parts.length);
  };
  return statistic;
}

/**
 * The expected fields `f1_score` is aggregated over (macro-F1 for labels), when the metric is the
 * built-in `f1_score` of these rows: a metric function the user named `f1_score` is a mean, recognised
 * because the aggregate does not give the run's own value. Null for a mean metric.
 */
export function f1AggregateFields(metric: string, rows: readonly EvaluationRow[], fields: readonly FieldInfo[] | undefined, value: number | undefined): readonly FieldInfo[] | null {
  if (metric !== "f1_score" || rows.length === 0) return null;
  const known = fields ?? inferFields(rows);
  // With no expected fields `aggregate` takes the mean as well.
  if (known.length === 0) return null;
  if (value !== undefined && Math.abs(f1Statistic(rows, known)(allIndices(rows.length)) - value) > 1e-9) return null;
  return known;
}

/**
 * How a metric's value over a run is computed from its rows: the mean of the per-row scores, or for
 * the built-in `f1_score` the aggregate over the rows (see `f1AggregateFields`).
 */
export function metricStatistic(metric: string, rows: readonly EvaluationRow[], fields: readonly FieldInfo[] | undefined, value: number | undefined): Statistic {
  const aggregate = f1AggregateFields(metric, rows, fields, value);
  if (aggregate !== null) return f1Statistic(rows, aggregate);
  return meanStatistic(Float64Array.from(rows, (r) => r.scores?.[metric] ?? 0));
}

/** A share: `accuracy` or `exact_match` with every per-row score 0 or 1. */
export function isShare(metric: string, rows: readonly EvaluationRow[]): boolean {
  if (metric !== "accuracy" && metric !== "exact_match") return false;
  return rows.every((r) => {
    const s = r.scores?.[metric] ?? 0;
    return s === 0 || s === 1;
  });
}

/**
 * A metric's interval over a run and its method: Wilson for a share (see `isShare`), else the BCa
 * bootstrap of the metric's statistic (`f1_score` recomputed as macro-F1 on each resample).
 */
export function metricInterval(metric: string, rows: readonly EvaluationRow[], fields: readonly FieldInfo[] | undefined, value: number | undefined, confidence = 0.95): { interval: Interval; method: CiMethod } {
  if (isShare(metric, rows)) {
    let k = 0;
    for (const r of rows) k += r.scores?.[metric] ?? 0;
    return { interval: wilsonInterval(k, rows.length, confidence), method: "wilson" };
  }
  return { interval: bcaInterval(rows.length, metricStatistic(metric, rows, fields, value), confidence), method: "bootstrap-bca" };
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

// ---------------------------------------------------------------------------------------------
// Permutation tests
// ---------------------------------------------------------------------------------------------

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

/** What the macro-F1 permutation test found. */
export interface MacroF1Test {
  pValue: number;
  /** Every swap pattern enumerated (else `permutations` random ones). */
  exact: boolean;
  /** Examples whose two predictions differ (only these can be swapped to any effect). */
  changed: number;
  /** `f1_score` of B − `f1_score` of A, as the test computed it. */
  observed: number;
}

/**
 * The paired permutation test of the `f1_score` difference (two-sided): under no difference the two
 * predictions of an example are exchangeable, so each example's pair may be swapped between A and B.
 * The statistic is f1_score(B) − f1_score(A) recomputed after the swaps (macro-F1 over the labels seen
 * on each side for label fields, mean token F1 for free text, averaged over the fields). Only the m
 * examples whose predictions differ change anything when swapped: when 2^m ≤ `exactPatterns` every
 * pattern is enumerated and p = count(|diff| ≥ |observed|) / 2^m; otherwise `permutations` random
 * patterns (seeded) and p = (count + 1) / (permutations + 1).
 */
export function macroF1PermutationTest(
  rowsA: readonly EvaluationRow[],
  rowsB: readonly EvaluationRow[],
  fields: readonly FieldInfo[],
  options: { exactPatterns?: number; permutations?: number; seed?: number } = {},
): MacroF1Test {
  const n = rowsA.length;
  if (rowsB.length !== n) throw new RangeError(`macroF1PermutationTest: ${n} rows in A but ${rowsB.length} in B`);
  const exactPatterns = options.exactPatterns ?? MACRO_F1_EXACT_PATTERNS;
  const permutations = options.permutations ?? PERMUTATIONS;
  const labels = fields.filter((f) => f.label).map((f) => {
    const { size, gold, predicted: [a, b] } = labelCodes([rowsA, rowsB], f.name);
    const goldCount = new Float64Array(size);
    for (let i = 0; i < n; i++) goldCount[gold[i]!]!++;
    return { size, gold, a: a!, b: b!, goldCount };
  });
  const texts = fields.filter((f) => !f.label).map((f) => ({ a: textScores(rowsA, f.name), b: textScores(rowsB, f.name) }));
  const changedRows: number[] = [];
  for (let i = 0; i < n; i++) {
    if (labels.some((l) => l.a[i] !== l.b[i]) || texts.some((t) => t.a[i] !== t.b[i])) changedRows.push(i);
  }
  const m = changedRows.length;
  const fieldCount = fields.length;
  // Counts and sums with nothing swapped; each pattern starts from a copy of them.
  const base = labels.map((l) => {
    const predA = new Float64Array(l.size), hitA = new Float64Array(l.size), predB = new Float64Array(l.size), hitB = new Float64Array(l.size);
    for (let i = 0; i < n; i++) {
      const g = l.gold[i]!, pa = l.a[i]!, pb = l.b[i]!;
      if (pa >= 0) { predA[pa]!++; if (pa === g) hitA[g]!++; }
      if (pb >= 0) { predB[pb]!++; if (pb === g) hitB[g]!++; }
    }
    return { predA, hitA, predB, hitB };
  });
  const baseSums = texts.map((t) => {
    let sa = 0, sb = 0;
    for (let i = 0; i < n; i++) { sa += t.a[i]!; sb += t.b[i]!; }
    return [sa, sb] as const;
  });
  const scratch = labels.map((l) => ({ predA: new Float64Array(l.size), hitA: new Float64Array(l.size), predB: new Float64Array(l.size), hitB: new Float64Array(l.size) }));
  /** f1_score(B) − f1_score(A) with the changed rows whose `swapped(k)` is true swapped. */
  const difference = (swapped: (k: number) => boolean): number => {
    let total = 0;
    labels.forEach((l, f) => {
      const s = scratch[f]!, b0 = base[f]!;
      s.predA.set(b0.predA); s.hitA.set(b0.hitA); s.predB.set(b0.predB); s.hitB.set(b0.hitB);
      for (let k = 0; k < m; k++) {
        if (!swapped(k)) continue;
        const i = changedRows[k]!, g = l.gold[i]!, pa = l.a[i]!, pb = l.b[i]!;
        if (pa === pb) continue;
        // A's prediction moves to B and B's to A.
        if (pa >= 0) { s.predA[pa]!--; s.predB[pa]!++; if (pa === g) { s.hitA[g]!--; s.hitB[g]!++; } }
        if (pb >= 0) { s.predB[pb]!--; s.predA[pb]!++; if (pb === g) { s.hitB[g]!--; s.hitA[g]!++; } }
      }
      total += macroFromCounts(l.goldCount, s.predB, s.hitB) - macroFromCounts(l.goldCount, s.predA, s.hitA);
    });
    texts.forEach((t, f) => {
      let [sa, sb] = baseSums[f]!;
      for (let k = 0; k < m; k++) {
        if (!swapped(k)) continue;
        const i = changedRows[k]!;
        sa += t.b[i]! - t.a[i]!;
        sb += t.a[i]! - t.b[i]!;
      }
      total += (sb - sa) / n;
    });
    return fieldCount === 0 || n === 0 ? 0 : total / fieldCount;
  };
  const observed = difference(() => false);
  const threshold = Math.abs(observed) - 1e-12;
  if (2 ** m <= exactPatterns) {
    const patterns = 2 ** m;
    let count = 0;
    for (let mask = 0; mask < patterns; mask++) {
      if (Math.abs(difference((k) => ((mask >>> k) & 1) === 1)) >= threshold) count++;
    }
    return { pValue: count / patterns, exact: true, changed: m, observed };
  }
  const random = new Random(options.seed ?? SEED);
  const flags = new Uint8Array(m);
  let count = 0;
  for (let r = 0; r < permutations; r++) {
    for (let k = 0; k < m; k++) flags[k] = random.next() < 0.5 ? 1 : 0;
    if (Math.abs(difference((k) => flags[k] === 1)) >= threshold) count++;
  }
  return { pValue: (count + 1) / (permutations + 1), exact: false, changed: m, observed };
}
