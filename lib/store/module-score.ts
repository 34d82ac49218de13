/**
 * The last score measured for a module instance. Evaluation and the optimizers note the score of
 * what they evaluate or return; `Registry.store` keeps it with the version. Held weakly, per instance
 * (a clone starts without one).
 */
const scores = new WeakMap<object, number>();

export function noteScore(module: object, score: number): void {
  if (Number.isFinite(score)) scores.set(module, score);
}

export function lastScore(module: object): number | undefined {
  return scores.get(module);
}
