/**
 * The arithmetic behind the built-in metrics: label statistics over parallel lists, and SQuAD's
 * answer normalisation, exact match and token-level F1 for free text.
 */

/** Precision, recall, F1 and support (gold count) of one label. */
export interface LabelStats {
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

/** Share of predictions equal to their gold label. `null` (no prediction) counts as wrong. */
export function accuracy(gold: readonly string[], predicted: readonly (string | null)[]): number {
  sameLength("accuracy", gold, predicted);
  if (gold.length === 0) return 0;
  let hits = 0;
  for (let i = 0; i < gold.length; i++) if (gold[i] === predicted[i]) hits++;
  return hits / gold.length;
}

/**
 * Macro-averaged F1 over every label seen in gold or predictions. A `null` prediction (the example
 * failed) is a miss for its gold label and adds no label of its own.
 */
export function macroF1(gold: readonly string[], predicted: readonly (string | null)[]): number {
  sameLength("macroF1", gold, predicted);
  const labels = labelsOf(gold, predicted);
  if (labels.length === 0) return 0;
  let sum = 0;
  for (const label of labels) sum += perLabel(gold, predicted, label).f1;
  return sum / labels.length;
}

export function perLabel(gold: readonly string[], predicted: readonly (string | null)[], label: string): LabelStats {
  let tp = 0, fp = 0, fn = 0, support = 0;
  for (let i = 0; i < gold.length; i++) {
    const g = gold[i] === label;
    const p = predicted[i] === label;
    if (g) support++;
    if (g && p) tp++;
    else if (p) fp++;
    else if (g) fn++;
  }
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1, support };
}

/** Every label in gold or predictions, in first-seen order, gold first. */
export function labelsOf(gold: readonly string[], predicted: readonly (string | null)[]): string[] {
  const seen = new Set<string>(gold);
  for (const p of predicted) if (p !== null) seen.add(p);
  return [...seen];
}

/** SQuAD answer normalisation: lower case, no punctuation, no articles (a, an, the), single spaces. */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    // As SQuAD's script: punctuation is deleted, not turned into a space ("don't" → "dont").
    .replace(/[\p{P}$+<=>^`|~]/gu, "")
    .replace(/\b(a|an|the)\b/g, " ")
    .split(/\s+/)
    .filter((t) => t !== "")
    .join(" ");
}

/** 1 when both texts are equal after `normalizeAnswer`, else 0. */
export function exactMatch(predicted: string, gold: string): number {
  return normalizeAnswer(predicted) === normalizeAnswer(gold) ? 1 : 0;
}

/**
 * SQuAD token-level F1: the bag-of-tokens overlap of the normalised texts. Two empty answers match
 * (1); one empty answer against a non-empty one scores 0.
 */
export function tokenF1(predicted: string, gold: string): number {
  const p = tokensOf(predicted);
  const g = tokensOf(gold);
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const left = counts.get(t) ?? 0;
    if (left > 0) {
      common++;
      counts.set(t, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

function tokensOf(text: string): string[] {
  const n = normalizeAnswer(text);
  return n === "" ? [] : n.split(" ");
}

function sameLength(what: string, gold: readonly unknown[], predicted: readonly unknown[]): void {
  if (gold.length !== predicted.length) {
    throw new RangeError(`${what}: ${gold.length} gold labels but ${predicted.length} predictions`);
  }
}
