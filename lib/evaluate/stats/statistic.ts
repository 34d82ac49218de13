/**
 * A statistic of a set of rows given by index, what the bootstrap resamples: the mean of per-row
 * scores, a paired difference of two statistics, and the jackknife (leave-one-out) values of one.
 */

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
