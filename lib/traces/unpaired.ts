/**
 * The two-window comparison when inputs do not recur (production traffic rarely repeats): the
 * difference of the two windows' mean scores, with a one-sided permutation test of "no drop" (the
 * window labels shuffled, 10,000 seeded shuffles) and a one-sided 95% percentile-bootstrap lower bound
 * (each window resampled on its own, 10,000 seeded resamples). Verdicts as the gate's.
 */
import { Random } from "../random.js";

/** What the unpaired comparison found: candidate − baseline, its lower bound, the one-sided p-value. */
export interface UnpairedResult {
  diff: number;
  low: number;
  pValue: number;
  verdict: "passed" | "failed" | "inconclusive";
}

const ROUNDS = 10_000;

function mean(values: readonly number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return values.length === 0 ? 0 : s / values.length;
}

/** Compares `candidate` scores with `baseline` scores (independent samples) at level `alpha` with tolerance `tolerance`. */
export function unpairedDecision(baseline: readonly number[], candidate: readonly number[], tolerance: number, alpha = 0.05, seed = 0): UnpairedResult {
  const diff = mean(candidate) - mean(baseline);
  const all = [...baseline, ...candidate];
  const random = new Random(seed, "traces-unpaired");
  const nb = baseline.length;
  let atMost = 0;
  const pool = [...all];
  for (let r = 0; r < ROUNDS; r++) {
    // A shuffle of the pooled scores: the first nb are the baseline's.
    for (let i = pool.length - 1; i > 0; i--) {
      const j = random.int(i + 1);
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    if (mean(pool.slice(nb)) - mean(pool.slice(0, nb)) <= diff) atMost++;
  }
  const pValue = (atMost + 1) / (ROUNDS + 1);
  const boot: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let sb = 0, sc = 0;
    for (let i = 0; i < baseline.length; i++) sb += baseline[random.int(baseline.length)]!;
    for (let i = 0; i < candidate.length; i++) sc += candidate[random.int(candidate.length)]!;
    boot.push(sc / candidate.length - sb / baseline.length);
  }
  boot.sort((a, b) => a - b);
  const low = boot[Math.floor(alpha * ROUNDS)]!;
  const verdict = pValue <= alpha ? "failed" : low >= -tolerance ? "passed" : "inconclusive";
  return { diff, low, pValue, verdict };
}
