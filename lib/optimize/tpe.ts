import type { Random } from "../random.js";

/** One categorical parameter: its name and how many choices it has. */
export interface Parameter {
  name: string;
  size: number;
}

export interface Observation {
  params: Record<string, number>;
  /** Higher is better. Failed trials are not observations. */
  score: number;
}

export interface TPEOptions {
  /**
   * Suggestions before the model is used (Optuna's n_startup_trials). They are stratified: each
   * parameter walks through a fresh random permutation of its choices, so with startup ≥ a parameter's
   * size every choice of it is tried once (default: the largest parameter size).
   */
  startupTrials?: number;
  /** Share of observations counted as "good" (default 0.25; Optuna uses 0.1 of many more trials). At most 25 are. */
  gamma?: number;
  /** Draws from the good distribution compared per parameter (Optuna's n_ei_candidates, 24). */
  candidates?: number;
  /** Pseudo-count added to every choice so unseen choices keep some probability. */
  priorWeight?: number;
}

/**
 * A seeded, univariate Tree-structured Parzen Estimator over categorical parameters (Bergstra et al.
 * 2011; the shape of Optuna's TPESampler). After the (stratified) startup trials, the observations are split into
 * the best γ share and the rest; each parameter gets a smoothed categorical distribution l(x) from the
 * good ones and g(x) from the others, and the suggestion is, among draws from l, the choice with the
 * largest l(x)/g(x). The random stream is consumed the same way for the same history, so replaying
 * recorded scores reproduces the same suggestions.
 */
export class CategoricalTPE {
  private readonly startup: number;
  private readonly gamma: number;
  private readonly draws: number;
  private readonly prior: number;
  private suggested = 0;
  private readonly permutations = new Map<string, number[]>();

  constructor(
    private readonly params: readonly Parameter[],
    private readonly random: Random,
    options: TPEOptions = {},
  ) {
    this.startup = options.startupTrials ?? Math.max(1, ...params.map((p) => p.size));
    this.gamma = options.gamma ?? 0.25;
    this.draws = options.candidates ?? 24;
    this.prior = options.priorWeight ?? 1;
  }

  suggest(history: readonly Observation[]): Record<string, number> {
    const out: Record<string, number> = {};
    const n = this.suggested++;
    if (n < this.startup || history.length === 0) {
      for (const p of this.params) {
        if (n % p.size === 0) this.permutations.set(p.name, this.random.shuffle([...Array(p.size).keys()]));
        out[p.name] = this.permutations.get(p.name)![n % p.size]!;
      }
      return out;
    }
    // Stable sort: equal scores keep their trial order, so the split does not depend on sort internals.
    const ranked = history.map((h, i) => [h, i] as const).sort((a, b) => b[0].score - a[0].score || a[1] - b[1]).map(([h]) => h);
    const nGood = Math.max(1, Math.min(Math.ceil(this.gamma * ranked.length), 25));
    const good = ranked.slice(0, nGood);
    const bad = ranked.slice(nGood);
    for (const p of this.params) {
      const l = this.density(p, good);
      const g = this.density(p, bad);
      let best = -1;
      let bestRatio = -Infinity;
      for (let d = 0; d < this.draws; d++) {
        const x = this.drawFrom(l);
        const ratio = Math.log(l[x]!) - Math.log(g[x]!);
        if (ratio > bestRatio) [best, bestRatio] = [x, ratio];
      }
      out[p.name] = best;
    }
    return out;
  }

  private density(p: Parameter, observations: readonly Observation[]): number[] {
    const w = new Array<number>(p.size).fill(this.prior / p.size);
    for (const o of observations) {
      const x = o.params[p.name];
      if (x !== undefined && x >= 0 && x < p.size) w[x]! += 1;
    }
    const total = w.reduce((a, b) => a + b, 0);
    return w.map((v) => v / total);
  }

  private drawFrom(weights: readonly number[]): number {
    let u = this.random.next();
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i]!;
      if (u < 0) return i;
    }
    return weights.length - 1;
  }
}
