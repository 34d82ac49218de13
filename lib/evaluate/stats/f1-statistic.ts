/**
 * `f1_score` as a statistic of rows: macro-F1 over the labels of each label field and the mean token
 * F1 of each free-text field, recomputed on any subset or resample of the rows.
 */
import type { EvaluationRow } from "../../store/records.js";
import { inferFields, labelOf, textOf, type FieldInfo } from "../fields.js";
import { tokenF1 } from "../metrics.js";
import { allIndices, jackknife, meanStatistic, type Statistic } from "./statistic.js";

/** Per-label counts → macro-F1 over the labels seen (gold or predicted count above 0). */
export function macroFromCounts(goldCount: ArrayLike<number>, predictedCount: ArrayLike<number>, hits: ArrayLike<number>): number {
  let sum = 0, seen = 0;
  for (let l = 0; l < goldCount.length; l++) {
    const g = goldCount[l]!, p = predictedCount[l]!;
    if (g === 0 && p === 0) continue;
    seen++;
    const precision = p === 0 ? 0 : hits[l]! / p;
    const recall = g === 0 ? 0 : hits[l]! / g;
    sum += precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  }
  return seen === 0 ? 0 : sum / seen;
}

/** A label field's gold and predicted labels as codes (−1: no predicted label, the row failed or lacks the field). */
export function labelCodes(rowSets: readonly (readonly EvaluationRow[])[], field: string): { size: number; gold: Int32Array; predicted: Int32Array[] } {
  const codes = new Map<string, number>();
  const code = (label: string) => {
    let c = codes.get(label);
    if (c === undefined) codes.set(label, (c = codes.size));
    return c;
  };
  // Gold labels first, then predicted ones: the order `labelsOf` sums them in over the whole run.
  const gold = Int32Array.from(rowSets[0]!, (r) => code(labelOf(r.expected[field]) ?? ""));
  const predicted = rowSets.map((rows) => Int32Array.from(rows, (r) => {
    const label = r.error === null && r.prediction !== null ? labelOf(r.prediction[field]) : null;
    return label === null ? -1 : code(label);
  }));
  return { size: codes.size, gold, predicted };
}

/** A free-text field's token F1 per row (0 for a failed row). */
export function textScores(rows: readonly EvaluationRow[], field: string): Float64Array {
  return Float64Array.from(rows, (r) => (r.error === null && r.prediction !== null ? tokenF1(textOf(r.prediction[field]), textOf(r.expected[field])) : 0));
}

/**
 * `f1_score` over the rows at the indices, as `aggregate` in scoring.ts computes it over the whole run:
 * per label field macro-F1 over the labels seen in those rows (a failed row a miss for its gold
 * label), per free-text field the mean token F1, averaged over the fields.
 */
export function f1Statistic(rows: readonly EvaluationRow[], fields: readonly FieldInfo[]): Statistic {
  const n = rows.length;
  const parts = fields.map((f): Statistic => {
    if (!f.label) return meanStatistic(textScores(rows, f.name));
    const { size, gold, predicted: [predicted] } = labelCodes([rows], f.name);
    const goldCount = new Float64Array(size), predictedCount = new Float64Array(size), hits = new Float64Array(size);
    const count = (i: number, by: number) => {
      const g = gold[i]!, p = predicted![i]!;
      goldCount[g]! += by;
      if (p >= 0) {
        predictedCount[p]! += by;
        if (p === g) hits[g]! += by;
      }
    };
    const statistic: Statistic = (indices) => {
      goldCount.fill(0); predictedCount.fill(0); hits.fill(0);
      for (let k = 0; k < indices.length; k++) count(indices[k]!, 1);
      return macroFromCounts(goldCount, predictedCount, hits);
    };
    statistic.leaveOneOut = () => {
      goldCount.fill(0); predictedCount.fill(0); hits.fill(0);
      for (let i = 0; i < n; i++) count(i, 1);
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        count(i, -1);
        out[i] = macroFromCounts(goldCount, predictedCount, hits);
        count(i, 1);
      }
      return out;
    };
    return statistic;
  });
  const statistic: Statistic = (indices) => {
    if (indices.length === 0 || parts.length === 0) return 0;
    let total = 0;
    for (const part of parts) total += part(indices);
    return total / parts.length;
  };
  statistic.leaveOneOut = () => {
    const out = new Float64Array(n);
    if (n < 2 || parts.length === 0) return out;
    for (const part of parts) {
      const values = jackknife(n, part);
      for (let i = 0; i < n; i++) out[i]! += values[i]!;
    }
    return out.map((v) => v / parts.length);
  };
  return statistic;
}

/**
 * The expected fields `f1_score` is aggregated over (macro-F1 for labels), when the metric is the
 * built-in `f1_score` of these rows: a metric function the user named `f1_score` is a mean, recognised
 * because the aggregate does not give the run's own value. Null for a mean metric.
 */
export function f1AggregateFields(metric: string, rows: readonly EvaluationRow[], fields: readonly FieldInfo[] | undefined, value: number | undefined): readonly FieldInfo[] | null {
  if (metric !== "f1_score" || rows.length === 0) return null;
  const known = fields ?? inferFields(rows);
  // With no expected fields `aggregate` takes the mean as well.
  if (known.length === 0) return null;
  if (value !== undefined && Math.abs(f1Statistic(rows, known)(allIndices(rows.length)) - value) > 1e-9) return null;
  return known;
}
