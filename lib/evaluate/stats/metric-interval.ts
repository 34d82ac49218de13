/** A metric's interval over a run: Wilson for a share, else the BCa bootstrap of how the metric is computed. */
import type { EvaluationRow } from "../../store/records.js";
import type { FieldInfo } from "../fields.js";
import { bcaInterval } from "./bootstrap.js";
import { f1AggregateFields, f1Statistic } from "./f1-statistic.js";
import type { CiMethod, Interval } from "./methods.js";
import { wilsonInterval } from "./share-interval.js";
import { meanStatistic, type Statistic } from "./statistic.js";

/**
 * How a metric's value over a run is computed from its rows: the mean of the per-row scores, or for
 * the built-in `f1_score` the aggregate over the rows (see `f1AggregateFields`).
 */
export function metricStatistic(metric: string, rows: readonly EvaluationRow[], fields: readonly FieldInfo[] | undefined, value: number | undefined): Statistic {
  const aggregate = f1AggregateFields(metric, rows, fields, value);
  if (aggregate !== null) return f1Statistic(rows, aggregate);
  return meanStatistic(Float64Array.from(rows, (r) => r.scores?.[metric] ?? 0));
}

/** A share: `accuracy` or `exact_match` with every per-row score 0 or 1. */
export function isShare(metric: string, rows: readonly EvaluationRow[]): boolean {
  if (metric !== "accuracy" && metric !== "exact_match") return false;
  return rows.every((r) => {
    const s = r.scores?.[metric] ?? 0;
    return s === 0 || s === 1;
  });
}

/**
 * A metric's interval over a run and its method: Wilson for a share (see `isShare`), else the BCa
 * bootstrap of the metric's statistic (`f1_score` recomputed as macro-F1 on each resample).
 */
export function metricInterval(metric: string, rows: readonly EvaluationRow[], fields: readonly FieldInfo[] | undefined, value: number | undefined, confidence = 0.95): { interval: Interval; method: CiMethod } {
  if (isShare(metric, rows)) {
    let k = 0;
    for (const r of rows) k += r.scores?.[metric] ?? 0;
    return { interval: wilsonInterval(k, rows.length, confidence), method: "wilson" };
  }
  return { interval: bcaInterval(rows.length, metricStatistic(metric, rows, fields, value), confidence), method: "bootstrap-bca" };
}
