/** Share of predictions equal to their gold label. */
export function accuracy(gold: readonly string[], predicted: readonly string[]): number {
  if (gold.length !== predicted.length) throw new RangeError(`accuracy: ${gold.length} gold labels but ${predicted.length} predictions`);
  if (gold.length === 0) return 0;
  let hits = 0;
  for (let i = 0; i < gold.length; i++) if (gold[i] === predicted[i]) hits++;
  return hits / gold.length;
}

/** Macro-averaged F1 over every label seen in gold or predictions (a label never predicted nor present scores 0 F1 only if it appears). */
export function macroF1(gold: readonly string[], predicted: readonly string[]): number {
  if (gold.length !== predicted.length) throw new RangeError(`macroF1: ${gold.length} gold labels but ${predicted.length} predictions`);
  const labels = [...new Set([...gold, ...predicted])];
  if (labels.length === 0) return 0;
  let sum = 0;
  for (const label of labels) sum += perLabel(gold, predicted, label).f1;
  return sum / labels.length;
}

export function perLabel(gold: readonly string[], predicted: readonly string[], label: string): { precision: number; recall: number; f1: number; support: number } {
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
