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
  /**
   * Model the parameters jointly (Optuna's multivariate TPE, which DSPy's MIPROv2 uses): each observation
   * is one kernel over whole configurations, so a draw keeps the choices that scored well together.
   * Default true; false gives one independent distribution per parameter (Optuna's default), which on
   * MIPROv2's noisy minibatch scores locks onto early choices (see test/optimize/search.test.ts).
   */
  multivariate?: boolean;
  /** Optuna's kernel weights: equal below 25 observations, older ones ramped down beyond (default true). */
  rampWeights?: boolean;
}

/**
 * A seeded Tree-structured Parzen Estimator over categorical parameters (Bergstra et al. 2011; the
 * shape of Optuna's TPESampler, multivariate as DSPy's MIPROv2 runs it). After the (stratified) startup
 * trials, the observations are split into the best γ share and the rest; a density l(x) is built from
 * the good ones and g(x) from the others (jointly over all parameters, or per parameter when
 * `multivariate` is false), and the suggestion is, among draws from l, the one with the largest l(x)/g(x). The random stream is consumed the same way for the same history, so replaying
 * recorded scores reproduces the same suggestions.
 */
export class CategoricalTPE {
  private readonly startup: number;
  private readonly gamma: number;
  private readonly draws: number;
  private readonly prior: number;
  private readonly multivariate: boolean;
  private readonly ramp: boolean;
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
    this.multivariate = options.multivariate ?? true;
    this.ramp = options.rampWeights ?? true;
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
    if (this.multivariate) return this.suggestJoint(history, good, bad);
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

  /**
   * Optuna's multivariate sampling for categorical parameters: a mixture with one kernel per observation
   * (plus a uniform prior kernel); kernel k puts weight 1 + prior/K on its observed choice and prior/K on
   * every choice, normalised. Candidates are drawn from the good mixture (a kernel, then each parameter
   * from it) and the one with the largest log l(x) − log g(x) is suggested.
   */
  private suggestJoint(history: readonly Observation[], good: readonly Observation[], bad: readonly Observation[]): Record<string, number> {
    const order = new Map(history.map((h, i) => [h, i] as const));
    const byTime = (xs: readonly Observation[]) => [...xs].sort((a, b) => order.get(a)! - order.get(b)!);
    const l = this.mixture(byTime(good));
    const g = this.mixture(byTime(bad));
    let best: Record<string, number> = {};
    let bestRatio = -Infinity;
    for (let d = 0; d < this.draws; d++) {
      const k = this.drawFrom(l.weights);
      const x: Record<string, number> = {};
      for (const p of this.params) x[p.name] = this.drawFrom(l.kernels[k]!.get(p.name)!);
      const ratio = this.logPdf(l, x) - this.logPdf(g, x);
      if (ratio > bestRatio) [best, bestRatio] = [x, ratio];
    }
    return best;
  }

  private mixture(observations: readonly Observation[]): { weights: number[]; kernels: Map<string, number[]>[] } {
    const n = observations.length;
    const kernelCount = n + 1;
    const weights = this.kernelWeights(n);
    weights.push(this.prior);
    const total = weights.reduce((a, b) => a + b, 0);
    const kernels: Map<string, number[]>[] = [];
    for (let k = 0; k < kernelCount; k++) {
      const m = new Map<string, number[]>();
      for (const p of this.params) {
        const w = new Array<number>(p.size).fill(this.prior / kernelCount);
        const x = k < n ? observations[k]!.params[p.name] : undefined;
        if (x !== undefined && x >= 0 && x < p.size) w[x]! += 1;
        const sum = w.reduce((a, b) => a + b, 0);
        m.set(p.name, w.map((v) => v / sum));
      }
      kernels.push(m);
    }
    return { weights: weights.map((w) => w / total), kernels };
  }

  /** Optuna's default_weights: equal below 25; beyond, the oldest ramp from 1/n up to 1 and the last 25 weigh 1. */
  private kernelWeights(n: number): number[] {
    if (!this.ramp || n < 25) return new Array<number>(n).fill(1);
    const rampLength = n - 25;
    const ramp = Array.from({ length: rampLength }, (_, i) => (rampLength === 1 ? 1 / n : 1 / n + ((1 - 1 / n) * i) / (rampLength - 1)));
    return [...ramp, ...new Array<number>(25).fill(1)];
  }

  private logPdf(m: { weights: number[]; kernels: Map<string, number[]>[] }, x: Record<string, number>): number {
    const terms = m.kernels.map((k, i) => Math.log(m.weights[i]!) + this.params.reduce((a, p) => a + Math.log(k.get(p.name)![x[p.name]!]!), 0));
    const top = Math.max(...terms);
    return top + Math.log(terms.reduce((a, t) => a + Math.exp(t - top), 0));
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
