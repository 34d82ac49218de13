/**
 * Bootstrap intervals of a statistic (seeded resampling of the rows): the bias-corrected and
 * accelerated (BCa) interval behind every reported interval that is not of a share, and the plain
 * percentile interval it is measured against.
 */
import { Random } from "../../random.js";
import { SEED, type Interval } from "./methods.js";
import { normalCdf, normalQuantile } from "./normal.js";
import { allIndices, jackknife, type Statistic } from "./statistic.js";

/** Bootstrap resamples behind every bootstrap interval. */
export const RESAMPLES = 2000;

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
  /** Every bootstrap value equal to the estimate (the rows show no spread): the interval is [estimate, estimate]. */
  collapsed: boolean;
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
  if (n === 0) return { interval: [0, 0], estimate: 0, standardError: 0, bias: 0, acceleration: 0, collapsed: true };
  const estimate = statistic(allIndices(n));
  const loo = jackknife(n, statistic);
  const standardError = jackknifeStandardError(loo);
  const values = bootstrapValues(n, statistic, resamples, seed);
  const tolerance = 1e-12 * Math.max(1, Math.abs(estimate));
  if (values[resamples - 1]! - values[0]! <= tolerance) return { interval: [estimate, estimate], estimate, standardError, bias: 0, acceleration: 0, collapsed: true };
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
  return { interval: [low, high], estimate, standardError, bias, acceleration, collapsed: false };
}

/** The BCa interval alone (see `bca`). */
export function bcaInterval(n: number, statistic: Statistic, confidence = 0.95, resamples = RESAMPLES, seed = SEED): Interval {
  return bca(n, statistic, confidence, resamples, seed).interval;
}
