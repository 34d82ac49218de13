// The viewer's statistics that take seconds on a large run, computed off the server's event loop: a
// worker thread receives one metric's scores (a Float64Array, transferred) and answers with their
// mean's BCa interval, as `typelm show` computes it; a run's columns and answers with one metric's
// interval as `typelm show` computes it from the rows (`f1_score`'s recomputes macro-F1 on each
// resample); or two runs' columns and answers with their comparisons, as `typelm compare` computes
// them. Everything arrives as typed arrays and a few strings; the rows the library's functions read
// are rebuilt here with only what they read. Loaded only by lib/view/intervals.ts, as a file of its own.
import { parentPort } from "node:worker_threads";
import { ValidationError } from "../errors.js";
import { adjustComparisons, compare, type Comparison } from "../evaluate/compare.js";
import { inferFields } from "../evaluate/fields.js";
import type { CiMethod } from "../evaluate/stats/methods.js";
import { meanScoreInterval, metricInterval } from "../evaluate/stats/metric-interval.js";
import type { EvaluationRow } from "../store/records.js";
import { FAILED, NO_PREDICTION, type FieldColumns } from "./data/source.js";

/** One run as the worker reads it: each metric's value and per-row scores, and for `f1_score` the expected and predicted values. */
export interface PackedRun {
  /** Rows. */
  n: number;
  /**
   * Each row's pairing id; absent when the rows are paired by position (the server put run B's rows
   * in run A's order, having checked that both hold the same ids once each): row i is then `#i`.
   */
  ids?: string[];
  metrics: Record<string, number>;
  scores: Record<string, Float64Array>;
  fields?: FieldColumns;
}

/** One job: a mean's interval over the scores of every row of a run, one metric's interval over a run, or two runs compared on `metrics`. */
export type IntervalJob =
  | { id: number; kind: "mean"; scores: Float64Array }
  | { id: number; kind: "interval"; run: PackedRun; metric: string }
  | { id: number; kind: "compare"; a: PackedRun; b: PackedRun; metrics: string[] };

/** Its answer, or why it could not be computed (`validation` when the input was at fault: a `ValidationError`). */
export type IntervalAnswer =
  | { id: number; ci: [number, number]; method?: CiMethod }
  | { id: number; comparisons: (Comparison & { pAdjusted: number })[] }
  | { id: number; error: string; validation: boolean; field?: string };

/**
 * One row as the library's functions read it, over a packed run's arrays: its pairing id (or index),
 * scores (a missing score was packed as 0, which is what they count it as) and, when packed, its
 * expected values, the prediction's values of the expected fields and whether it failed. Each is
 * built when read, so a large run costs its typed arrays here and a small object per row, not a row
 * object with its values.
 */
class PackedRow {
  constructor(readonly run: UnpackedRun, readonly index: number) {}

  get exampleId(): string {
    return this.run.ids[this.index]!;
  }

  get scores(): Record<string, number> {
    const scores: Record<string, number> = {};
    for (const [m, s] of this.run.scores) scores[m] = s[this.index]!;
    return scores;
  }

  get expected(): Record<string, unknown> {
    const expected: Record<string, unknown> = {};
    const f = this.run.fields;
    if (f === undefined) return expected;
    for (let k = 0; k < f.names.length; k++) {
      const e = f.expected[k]![this.index]!;
      if (e >= 0) expected[f.names[k]!] = this.run.values[e];
    }
    return expected;
  }

  get prediction(): Record<string, unknown> | null {
    const f = this.run.fields;
    if (f === undefined || f.flags[this.index]! & NO_PREDICTION) return null;
    const prediction: Record<string, unknown> = {};
    for (let k = 0; k < f.names.length; k++) {
      const p = f.predicted[k]![this.index]!;
      if (p >= 0) prediction[f.names[k]!] = this.run.values[p];
    }
    return prediction;
  }

  get error(): string | null {
    const f = this.run.fields;
    return f !== undefined && f.flags[this.index]! & FAILED ? "failed" : null;
  }
}

interface UnpackedRun {
  /** Each row's pairing id: its own, or `#<position>` (the same strings for both runs of a comparison). */
  ids: readonly string[];
  scores: [string, Float64Array][];
  fields: FieldColumns | undefined;
  /** The fields' values, parsed once each. */
  values: unknown[];
}

/**
 * The rows of a packed run, as the library's functions read them (see `PackedRow`). A run paired by
 * position has ids `#0`, `#1`, ... (`positions`, made once for both runs: the functions read each
 * row's id several times, and a string made on each read would be garbage).
 */
export function rowsOf(run: PackedRun, positions?: readonly string[]): EvaluationRow[] {
  const ids = run.ids ?? (positions !== undefined && positions.length === run.n ? positions : positionIds(run.n));
  const unpacked: UnpackedRun = { ids, scores: Object.entries(run.scores), fields: run.fields, values: run.fields?.values.map((v) => JSON.parse(v) as unknown) ?? [] };
  return Array.from({ length: run.n }, (_, i) => new PackedRow(unpacked, i) as unknown as EvaluationRow);
}

/** `#0` … `#(n−1)`: the ids of rows paired by position, as `compare` names a row without an id. */
function positionIds(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `#${i}`);
}

function answer(job: IntervalJob): IntervalAnswer {
  if (job.kind === "mean") {
    const { interval, method } = meanScoreInterval(job.scores);
    return { id: job.id, ci: interval, method };
  }
  if (job.kind === "interval") {
    // As `typelm show` computes it: `storedReport`'s fields are inferred from the rows.
    const rows = rowsOf(job.run);
    const { interval, method } = metricInterval(job.metric, rows, inferFields(rows), job.run.metrics[job.metric]);
    return { id: job.id, ci: interval, method };
  }
  const positions = job.a.ids === undefined ? positionIds(job.a.n) : undefined;
  const a = { results: rowsOf(job.a, positions), metrics: job.a.metrics };
  const b = { results: rowsOf(job.b, positions), metrics: job.b.metrics };
  return { id: job.id, comparisons: adjustComparisons(job.metrics.map((metric) => compare(a, b, { metric }))) };
}

parentPort?.on("message", (job: IntervalJob) => {
  let out: IntervalAnswer;
  try {
    out = answer(job);
  } catch (error) {
    const validation = error instanceof ValidationError;
    out = { id: job.id, error: error instanceof Error ? error.message : String(error), validation, field: validation ? error.field : undefined };
  }
  parentPort!.postMessage(out);
});
