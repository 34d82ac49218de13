/** Exact binomial tails, and the bisection the exact intervals and the McNemar power are solved by. */

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
 * Bisection on [0, 1] for the point where a monotone predicate turns true: returns the last point
 * found false and the first found true. The first point tried is exactly 1/2, so whether the answer
 * lies above or below 1/2 is decided by the predicate at 1/2 itself (what the McNemar p-value reads).
 */
export function bisect(turnsTrue: (p: number) => boolean): [low: number, high: number] {
  let low = 0, high = 1;
  for (;;) {
    const mid = (low + high) / 2;
    if (mid <= low || mid >= high) return [low, high];
    if (turnsTrue(mid)) high = mid;
    else low = mid;
  }
}
