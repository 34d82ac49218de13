/**
 * Paired permutation tests (two-sided, exact when the patterns are few enough, else seeded random
 * ones): the sign-flip test of a mean difference and the swap test of an `f1_score` difference.
 */
import type { EvaluationRow } from "../../store/records.js";
import { Random } from "../../random.js";
import type { FieldInfo } from "../fields.js";
import { labelCodes, macroFromCounts, textScores } from "./f1-statistic.js";
import { SEED } from "./methods.js";
import type { TestPatterns } from "./test-inversion.js";

/** Random sign flips of a permutation test when exact enumeration would take more. */
export const PERMUTATIONS = 10000;
/** Sign patterns the macro-F1 permutation test enumerates exactly (2^16); beyond, `PERMUTATIONS` random ones. */
export const MACRO_F1_EXACT_PATTERNS = 2 ** 16;

/**
 * The paired sign-flip permutation test of the mean difference (two-sided): under no difference each
 * pair's difference is as likely to have the other sign. Pairs with no difference change no sum, so
 * only the m non-zero differences are flipped: when 2^m ≤ `permutations` every sign pattern is
 * enumerated and p = count(|flipped sum| ≥ |observed sum|) / 2^m (exact); otherwise `permutations`
 * random patterns (seeded) and p = (count + 1) / (permutations + 1). With `keepPatterns`, each pattern's
 * flipped mean (the flipped sum over all n = `differences.length` pairs) and its share of flipped pairs
 * come back as `patterns`, for the interval that inverts the test (`invertPairedTest`).
 */
export function signFlipTest(differences: readonly number[], permutations = PERMUTATIONS, seed = SEED, keepPatterns = false): { pValue: number; exact: boolean; patterns?: TestPatterns } {
  const n = differences.length;
  const d = differences.filter((x) => x !== 0);
  const m = d.length;
  let observed = 0, scale = 0;
  for (const x of d) {
    observed += x;
    scale += Math.abs(x);
  }
  observed = Math.abs(observed);
  // Sums of the same numbers in another order may differ in the last bits: ties within that count.
  const threshold = observed - 1e-12 * Math.max(1, scale);
  const exact = 2 ** m <= permutations;
  const total = exact ? 2 ** m : permutations;
  const kept = keepPatterns ? { values: new Float64Array(total), swapped: new Float64Array(total), exact } : undefined;
  const random = exact ? undefined : new Random(seed);
  let count = 0;
  for (let r = 0; r < total; r++) {
    let sum = 0, flipped = 0;
    for (let i = 0; i < m; i++) {
      const flip = random === undefined ? ((r >>> i) & 1) === 1 : random.next() < 0.5;
      if (flip) flipped++;
      sum += flip ? -d[i]! : d[i]!;
    }
    if (Math.abs(sum) >= threshold) count++;
    if (kept !== undefined) {
      kept.values[r] = sum / n;
      kept.swapped[r] = m === 0 ? 0 : flipped / m;
    }
  }
  const pValue = exact ? count / total : (count + 1) / (permutations + 1);
  return kept === undefined ? { pValue, exact } : { pValue, exact, patterns: kept };
}

/** What the macro-F1 permutation test found. */
export interface MacroF1Test {
  pValue: number;
  /** Every swap pattern enumerated (else `permutations` random ones). */
  exact: boolean;
  /** Examples whose two predictions differ (only these can be swapped to any effect). */
  changed: number;
  /** `f1_score` of B − `f1_score` of A, as the test computed it. */
  observed: number;
  /** Each pattern's difference and share of swapped examples, when asked for (`keepPatterns`). */
  patterns?: TestPatterns;
}

/**
 * The paired permutation test of the `f1_score` difference (two-sided): under no difference the two
 * predictions of an example are exchangeable, so each example's pair may be swapped between A and B.
 * The statistic is f1_score(B) − f1_score(A) recomputed after the swaps (macro-F1 over the labels seen
 * on each side for label fields, mean token F1 for free text, averaged over the fields). Only the m
 * examples whose predictions differ change anything when swapped: when 2^m ≤ `exactPatterns` every
 * pattern is enumerated and p = count(|diff| ≥ |observed|) / 2^m; otherwise `permutations` random
 * patterns (seeded) and p = (count + 1) / (permutations + 1). With `keepPatterns` each pattern's
 * difference and share of swapped examples come back as `patterns` (for `invertPairedTest`).
 */
export function macroF1PermutationTest(
  rowsA: readonly EvaluationRow[],
  rowsB: readonly EvaluationRow[],
  fields: readonly FieldInfo[],
  options: { exactPatterns?: number; permutations?: number; seed?: number; keepPatterns?: boolean } = {},
): MacroF1Test {
  const n = rowsA.length;
  if (rowsB.length !== n) throw new RangeError(`macroF1PermutationTest: ${n} rows in A but ${rowsB.length} in B`);
  const exactPatterns = options.exactPatterns ?? MACRO_F1_EXACT_PATTERNS;
  const permutations = options.permutations ?? PERMUTATIONS;
  const labels = fields.filter((f) => f.label).map((f) => {
    const { size, gold, predicted: [a, b] } = labelCodes([rowsA, rowsB], f.name);
    const goldCount = new Float64Array(size);
    for (let i = 0; i < n; i++) goldCount[gold[i]!]!++;
    return { size, gold, a: a!, b: b!, goldCount };
  });
  const texts = fields.filter((f) => !f.label).map((f) => ({ a: textScores(rowsA, f.name), b: textScores(rowsB, f.name) }));
  const changedRows: number[] = [];
  for (let i = 0; i < n; i++) {
    if (labels.some((l) => l.a[i] !== l.b[i]) || texts.some((t) => t.a[i] !== t.b[i])) changedRows.push(i);
  }
  const m = changedRows.length;
  const fieldCount = fields.length;
  // Counts and sums with nothing swapped; each pattern starts from a copy of them.
  const base = labels.map((l) => {
    const predA = new Float64Array(l.size), hitA = new Float64Array(l.size), predB = new Float64Array(l.size), hitB = new Float64Array(l.size);
    for (let i = 0; i < n; i++) {
      const g = l.gold[i]!, pa = l.a[i]!, pb = l.b[i]!;
      if (pa >= 0) { predA[pa]!++; if (pa === g) hitA[g]!++; }
      if (pb >= 0) { predB[pb]!++; if (pb === g) hitB[g]!++; }
    }
    return { predA, hitA, predB, hitB };
  });
  const baseSums = texts.map((t) => {
    let sa = 0, sb = 0;
    for (let i = 0; i < n; i++) { sa += t.a[i]!; sb += t.b[i]!; }
    return [sa, sb] as const;
  });
  const scratch = labels.map((l) => ({ predA: new Float64Array(l.size), hitA: new Float64Array(l.size), predB: new Float64Array(l.size), hitB: new Float64Array(l.size) }));
  /** f1_score(B) − f1_score(A) with the changed rows whose `swapped(k)` is true swapped. */
  const difference = (swapped: (k: number) => boolean): number => {
    let total = 0;
    labels.forEach((l, f) => {
      const s = scratch[f]!, b0 = base[f]!;
      s.predA.set(b0.predA); s.hitA.set(b0.hitA); s.predB.set(b0.predB); s.hitB.set(b0.hitB);
      for (let k = 0; k < m; k++) {
        if (!swapped(k)) continue;
        const i = changedRows[k]!, g = l.gold[i]!, pa = l.a[i]!, pb = l.b[i]!;
        if (pa === pb) continue;
        // A's prediction moves to B and B's to A.
        if (pa >= 0) { s.predA[pa]!--; s.predB[pa]!++; if (pa === g) { s.hitA[g]!--; s.hitB[g]!++; } }
        if (pb >= 0) { s.predB[pb]!--; s.predA[pb]!++; if (pb === g) { s.hitB[g]!--; s.hitA[g]!++; } }
      }
      total += macroFromCounts(l.goldCount, s.predB, s.hitB) - macroFromCounts(l.goldCount, s.predA, s.hitA);
    });
    texts.forEach((t, f) => {
      let [sa, sb] = baseSums[f]!;
      for (let k = 0; k < m; k++) {
        if (!swapped(k)) continue;
        const i = changedRows[k]!;
        sa += t.b[i]! - t.a[i]!;
        sb += t.a[i]! - t.b[i]!;
      }
      total += (sb - sa) / n;
    });
    return fieldCount === 0 || n === 0 ? 0 : total / fieldCount;
  };
  const observed = difference(() => false);
  const threshold = Math.abs(observed) - 1e-12;
  const exact = 2 ** m <= exactPatterns;
  const total = exact ? 2 ** m : permutations;
  const kept = options.keepPatterns === true ? { values: new Float64Array(total), swapped: new Float64Array(total), exact } : undefined;
  const random = exact ? undefined : new Random(options.seed ?? SEED);
  const flags = new Uint8Array(m);
  let count = 0;
  for (let r = 0; r < total; r++) {
    let swaps = 0;
    for (let k = 0; k < m; k++) {
      flags[k] = random === undefined ? (r >>> k) & 1 : random.next() < 0.5 ? 1 : 0;
      swaps += flags[k]!;
    }
    const value = difference((k) => flags[k] === 1);
    if (Math.abs(value) >= threshold) count++;
    if (kept !== undefined) {
      kept.values[r] = value;
      kept.swapped[r] = m === 0 ? 0 : swaps / m;
    }
  }
  const pValue = exact ? count / total : (count + 1) / (permutations + 1);
  return { pValue, exact, changed: m, observed, ...(kept === undefined ? {} : { patterns: kept }) };
}
