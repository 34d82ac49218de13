/** The minimum detectable effect of a comparison: exact for paired 0/1 scores, else by the normal approximation. */
import { Binomial, bisect } from "./binomial.js";
import { mcnemarPower, mcnemarRejection } from "./mcnemar.js";
import { normalQuantile } from "./normal.js";

/** The power `mde` is computed for. */
export const MDE_POWER = 0.8;

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
