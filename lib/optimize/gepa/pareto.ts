import type { Random } from "../../random.js";

/** What selection reads of a candidate: its per-validation-example scores (same order for all) and their mean. */
export interface Scored {
  scores: readonly number[];
  mean: number;
}

/**
 * For each validation example, the candidates with the best score on it (GEPA's Pareto front by
 * example). An example every candidate scores equally on puts them all in its front.
 */
export function fronts(pool: readonly Scored[]): Set<number>[] {
  const n = pool[0]?.scores.length ?? 0;
  return Array.from({ length: n }, (_, k) => {
    const best = Math.max(...pool.map((c) => c.scores[k]!));
    return new Set(pool.flatMap((c, i) => (c.scores[k] === best ? [i] : [])));
  });
}

/**
 * The candidates left when those dominated on the front are removed: candidate y is dominated when
 * every front it is in also holds another remaining candidate. Weaker candidates (lower mean) are
 * removed first, one at a time, as in the reference implementation.
 */
export function nonDominated(pool: readonly Scored[], front: readonly Set<number>[]): Set<number> {
  const onFront = [...new Set(front.flatMap((f) => [...f]))].sort((a, b) => pool[a]!.mean - pool[b]!.mean || a - b);
  const removed = new Set<number>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const y of onFront) {
      if (removed.has(y)) continue;
      const mine = front.filter((f) => f.has(y));
      if (mine.every((f) => [...f].some((o) => o !== y && !removed.has(o)))) {
        removed.add(y);
        changed = true;
        break;
      }
    }
  }
  return new Set(onFront.filter((i) => !removed.has(i)));
}

/**
 * A parent drawn from the Pareto front: each non-dominated candidate with probability proportional
 * to the number of validation examples it is best on. Keeps candidates that are best on a few
 * examples in play instead of always refining the best average.
 */
export function selectPareto(pool: readonly Scored[], random: Random): number {
  const front = fronts(pool);
  const keep = nonDominated(pool, front);
  const weights = [...keep].map((i) => ({ i, w: front.filter((f) => f.has(i)).length }));
  const total = weights.reduce((s, x) => s + x.w, 0);
  let r = random.next() * total;
  for (const { i, w } of weights) {
    if ((r -= w) < 0) return i;
  }
  return weights[weights.length - 1]!.i;
}

/** The candidate with the highest mean (the earliest on a tie, so the seed wins ties). */
export function selectBest(pool: readonly Scored[]): number {
  let best = 0;
  pool.forEach((c, i) => {
    if (c.mean > pool[best]!.mean) best = i;
  });
  return best;
}
