/** Independent reference computations and report builders the statistics suites share (never the library's own code for an expected value). */
import { EvaluationReport } from "../../lib/index.js";
import type { FieldInfo } from "../../lib/evaluate/fields.js";
import type { EvaluationRow } from "../../lib/store/records.js";

/** Macro-F1 over the labels seen in gold or predictions; null prediction = no label. */
export function ownMacroF1(gold: readonly string[], predicted: readonly (string | null)[]): number {
  const labels = new Set<string>(gold);
  for (const p of predicted) if (p !== null) labels.add(p);
  let sum = 0;
  for (const label of labels) {
    let tp = 0, fp = 0, fn = 0;
    gold.forEach((g, i) => {
      const p = predicted[i];
      if (g === label && p === label) tp++;
      else if (p === label) fp++;
      else if (g === label) fn++;
    });
    const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
    const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
    sum += precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  }
  return labels.size === 0 ? 0 : sum / labels.size;
}

export const LABEL: FieldInfo[] = [{ name: "label", label: true, labels: undefined }];

export function row(index: number, expected: string, predicted: string | null, scores: Record<string, number>): EvaluationRow {
  return {
    index, exampleId: `ex-${index}`, inputs: { text: `t${index}` }, expected: { label: expected },
    prediction: predicted === null ? null : { label: predicted }, scores, error: predicted === null ? "LMError: failed" : null,
    durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
  };
}

export function evaluationReport(metrics: Record<string, number>, results: EvaluationRow[], fields: FieldInfo[] = LABEL): EvaluationReport {
  return new EvaluationReport({ metrics, results, failures: results.filter((r) => r.error !== null), feedback: [], inputTokens: 0, outputTokens: 0, cost: 0, durationMs: 0, runId: null }, fields);
}
