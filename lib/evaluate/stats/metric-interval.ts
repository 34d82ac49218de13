/**
 * A metric's interval over a run: the (modified) Wilson interval for a share, else the BCa bootstrap of
 * how the metric is computed, with a share-style bound when a [0, 1] metric's rows show no spread.
 */
import type { EvaluationRow } from "../../store/records.js";
import type { FieldInfo } from "../fields.js";
import { bca } from "./bootstrap.js";
import { f1AggregateFields, f1Statistic } from "./f1-statistic.js";
import type { CiMethod, Interval } from "./methods.js";
import { modifiedWilsonInterval } from "./share-interval.js";
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

/**
 * A share: a metric that is a mean of per-row scores (not the built-in `f1_score` aggregate), every
 * score 0 or 1 (`accuracy`, `exact_match`, or a 0/1 metric of the user's own). A missing score counts 0.
 */
export function isShare(metric: string, rows: readonly EvaluationRow[], fields?: readonly FieldInfo[], value?: number): boolean {
  if (f1AggregateFields(metric, rows, fields, value) !== null) return false;
  return rows.every((r) => {
    const s = r.scores?.[metric] ?? 0;
    return s === 0 || s === 1;
  });
}

/**
 * The interval of a mean of per-row scores and its method: the modified Wilson interval of k of n when
 * every score is 0 or 1 (a share); else the BCa bootstrap of the mean, except that when every row
 * scores the same value c in [0, 1] (the bootstrap collapses to [c, c]) it is the Wilson interval of
 * the mean as a share, of n·c "right" of n: no [0, 1] score with mean c spreads more than a 0/1 score
 * does, so the share's interval is the bound a sample without spread can defend. Scores outside
 * [0, 1] without spread keep [c, c].
 */
export function meanScoreInterval(scores: ArrayLike<number>, confidence = 0.95): { interval: Interval; method: CiMethod } {
  const n = scores.length;
  let k = 0, binary = true, bounded = true;
  for (let i = 0; i < n; i++) {
    const s = scores[i]!;
    k += s;
    if (s !== 0 && s !== 1) binary = false;
    if (!(s >= 0 && s <= 1)) bounded = false;
  }
  if (binary) return { interval: modifiedWilsonInterval(k, n, confidence), method: "wilson" };
  return boundedBca(n, meanStatistic(scores), bounded, confidence);
}

/** BCa, or for a statistic in [0, 1] whose bootstrap collapsed, the Wilson interval of its value as a share of n. */
function boundedBca(n: number, statistic: Statistic, bounded: boolean, confidence: number): { interval: Interval; method: CiMethod } {
  const result = bca(n, statistic, confidence);
  if (result.collapsed && bounded && n > 0 && result.estimate >= 0 && result.estimate <= 1) {
    return { interval: modifiedWilsonInterval(result.estimate * n, n, confidence), method: "wilson" };
  }
  return { interval: result.interval, method: "bootstrap-bca" };
}

/**
 * A metric's interval over a run and its method: the modified Wilson interval for a share (see
 * `isShare`), else the BCa bootstrap of the metric's statistic (`f1_score` recomputed as macro-F1 on
 * each resample); a statistic in [0, 1] whose rows show no spread (every resample the same value c)
 * gets the Wilson interval of c as a share of n instead of [c, c] (see `meanScoreInterval`).
 */
export function metricInterval(metric: string, rows: readonly EvaluationRow[], fields: readonly FieldInfo[] | undefined, value: number | undefined, confidence = 0.95): { interval: Interval; method: CiMethod } {
  const aggregate = f1AggregateFields(metric, rows, fields, value);
  if (aggregate === null) return meanScoreInterval(Float64Array.from(rows, (r) => r.scores?.[metric] ?? 0), confidence);
  return boundedBca(rows.length, f1Statistic(rows, aggregate), true, confidence);
}
