import type { Random } from "../random.js";
import { CategoricalTPE, type Observation, type Parameter } from "./tpe.js";

/** What proposes the next configuration from the scores so far. */
export interface Searcher {
  suggest(history: readonly Observation[]): Record<string, number>;
}

/**
 * MIPROv2's searcher: a seeded multivariate categorical TPE, as DSPy's (Optuna's TPESampler with
 * multivariate=True). The startup trials cover every choice of the largest parameter once when the
 * trials allow it; the model takes over from there.
 */
export function miproSearcher(params: readonly Parameter[], random: Random, trials: number): Searcher {
  const largest = Math.max(1, ...params.map((p) => p.size));
  return new CategoricalTPE(params, random, { startupTrials: Math.min(trials, largest), multivariate: true });
}

export interface SearchLoopOptions {
  searcher: Searcher;
  trials: number;
  /** A full evaluation after every this many trials, and after the last. */
  fullEvalEvery: number;
  /** Configurations already scored on the full validation set (the baseline): in the history, never fully evaluated again. */
  initial: readonly Observation[];
  /** Scores a configuration on a minibatch for trial `t`; null when the trial failed (not an observation). */
  minibatch(params: Record<string, number>, t: number): Promise<number | null>;
  /** Scores a configuration on the full validation set; null when it failed. */
  full(params: Record<string, number>, info: { afterTrial: number; minibatchMean: number }): Promise<number | null>;
}

/** A stable key for a configuration's parameter values. */
export function paramsKey(params: Record<string, number>): string {
  return Object.keys(params).sort().map((k) => `${k}=${params[k]}`).join(",");
}

/**
 * MIPROv2's search (DSPy's minibatch mode): each trial scores the searcher's suggestion on a minibatch;
 * every `fullEvalEvery` trials the configuration with the best mean minibatch score that has not had
 * its full evaluation yet gets one. The searcher learns from every score — minibatch and full (DSPy adds
 * both to the Optuna study) — so a configuration that disappoints on the full set is not chased.
 */
export async function searchLoop(o: SearchLoopOptions): Promise<void> {
  const history: Observation[] = [...o.initial];
  const fullyEvaluated = new Set(o.initial.map((h) => paramsKey(h.params)));
  const seen = new Map<string, { params: Record<string, number>; scores: number[] }>();
  for (let t = 0; t < o.trials; t++) {
    const suggestion = o.searcher.suggest(history);
    const score = await o.minibatch(suggestion, t);
    if (score !== null) {
      history.push({ params: suggestion, score });
      const key = paramsKey(suggestion);
      const entry = seen.get(key) ?? { params: suggestion, scores: [] };
      entry.scores.push(score);
      seen.set(key, entry);
    }
    if ((t + 1) % o.fullEvalEvery !== 0 && t !== o.trials - 1) continue;
    let pick: { key: string; params: Record<string, number>; mean: number } | undefined;
    for (const [key, e] of seen) {
      if (fullyEvaluated.has(key)) continue;
      const mean = e.scores.reduce((a, v) => a + v, 0) / e.scores.length;
      if (pick === undefined || mean > pick.mean) pick = { key, params: e.params, mean };
    }
    if (pick === undefined) continue;
    fullyEvaluated.add(pick.key);
    const full = await o.full(pick.params, { afterTrial: t, minibatchMean: pick.mean });
    if (full !== null) history.push({ params: pick.params, score: full });
  }
}
