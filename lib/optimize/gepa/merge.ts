import type { Random } from "../../random.js";

/** What a merge reads of a candidate. */
export interface MergeCandidate {
  instructions: Record<string, string>;
  /** Pool indices of its parents. */
  parents: readonly number[];
  mean: number;
}

export interface MergePlan {
  a: number;
  b: number;
  ancestor: number;
  /** Per predictor path: the pool index whose instruction the merged candidate takes. */
  from: Record<string, number>;
  instructions: Record<string, string>;
}

function ancestors(pool: readonly MergeCandidate[], i: number): Set<number> {
  const found = new Set<number>();
  const visit = (n: number) => {
    for (const p of pool[n]!.parents) {
      if (!found.has(p)) {
        found.add(p);
        visit(p);
      }
    }
  };
  visit(i);
  return found;
}

/** Whether some predictor is changed in exactly one of a and b relative to the ancestor (so the merge adds something). */
function complementary(pool: readonly MergeCandidate[], ancestor: number, a: number, b: number): boolean {
  return Object.keys(pool[ancestor]!.instructions).some((path) => {
    const [x, ya, yb] = [pool[ancestor]!.instructions[path], pool[a]!.instructions[path], pool[b]!.instructions[path]];
    return (x === ya || x === yb) && ya !== yb;
  });
}

/**
 * GEPA's system-aware merge: two candidates from `among` (the non-dominated ones), neither an
 * ancestor of the other, with a common ancestor no better than either; the merged candidate takes,
 * per predictor, the instruction of whichever descendant changed it (the better one when both did),
 * and must take something from each.
 * `tried` holds "a,b,ancestor" keys already attempted. Returns undefined when no pair qualifies.
 */
export function planMerge(pool: readonly MergeCandidate[], among: readonly number[], tried: ReadonlySet<string>, random: Random, attempts = 10): MergePlan | undefined {
  if (among.length < 2) return undefined;
  for (let t = 0; t < attempts; t++) {
    let [a, b] = random.sample(among, 2) as [number, number];
    if (b < a) [a, b] = [b, a];
    const ancA = ancestors(pool, a);
    const ancB = ancestors(pool, b);
    if (ancA.has(b) || ancB.has(a)) continue;
    const common = [...ancA].filter((x) => ancB.has(x)).sort((x, y) => x - y)
      .filter((x) => !tried.has(`${a},${b},${x}`) && pool[x]!.mean <= pool[a]!.mean && pool[x]!.mean <= pool[b]!.mean && complementary(pool, x, a, b));
    if (common.length === 0) continue;
    const ancestor = random.pick(common);
    const from: Record<string, number> = {};
    const instructions: Record<string, string> = {};
    for (const [path, x] of Object.entries(pool[ancestor]!.instructions)) {
      const [ya, yb] = [pool[a]!.instructions[path]!, pool[b]!.instructions[path]!];
      const source = ya === yb ? a : x === ya ? b : x === yb ? a : pool[b]!.mean > pool[a]!.mean ? b : a;
      from[path] = source;
      instructions[path] = pool[source]!.instructions[path]!;
    }
    // A merge that copies one descendant whole would only spend budget re-scoring it.
    if (Object.values(from).every((s) => s === a) || Object.values(from).every((s) => s === b)) continue;
    return { a, b, ancestor, from, instructions };
  }
  return undefined;
}

/**
 * The validation examples a merge is first tried on: as many where a beats b as where b beats a and
 * where they tie, topped up from the rest (GEPA's balanced subsample). Returns example positions.
 */
export function mergeSubsample(scoresA: readonly number[], scoresB: readonly number[], size: number, random: Random): number[] {
  const all = scoresA.map((_, k) => k);
  const buckets = [all.filter((k) => scoresA[k]! > scoresB[k]!), all.filter((k) => scoresB[k]! > scoresA[k]!), all.filter((k) => scoresA[k] === scoresB[k])];
  const each = Math.max(1, Math.ceil(size / 3));
  const picked: number[] = [];
  for (const bucket of buckets) picked.push(...random.sample(bucket, Math.min(each, size - picked.length)));
  const rest = all.filter((k) => !picked.includes(k));
  picked.push(...random.sample(rest, size - picked.length));
  return picked.sort((x, y) => x - y);
}
