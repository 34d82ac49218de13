import { ValidationError } from "../errors.js";
import type { EvaluationRow } from "../store/records.js";

/**
 * What the metric and confusion charts read from an evaluation: the `Evaluation` report (rows in
 * `results`, metrics as properties) or an `EvaluationRun` from the lab store (rows in `rows`, metrics
 * in `summary`). Only these members are read; everything else is ignored.
 */
export interface ReportInput {
  name?: string;
  results?: readonly EvaluationRow[];
  rows?: readonly EvaluationRow[];
  /** Metric name → value over the run (the report's own numbers; macro-F1 cannot be rebuilt from rows). */
  metrics?: Record<string, number>;
  summary?: Record<string, unknown>;
  /** Metric name → 95% interval `[low, high]` (an `EvaluationReport`'s `ci`); drawn as error bars. */
  ci?: Readonly<Record<string, readonly [number, number]>>;
  /** The report's own confusion matrix; used when present, so its label order (enum order) is kept. */
  confusion?(field?: string): { field: string; labels: string[]; matrix: number[][]; unanswered: number[] };
}

/** Metric names Evaluation computes as a whole (macro-F1 is not a mean of per-row scores). */
const NAMED_METRICS = ["accuracy", "f1_score", "exact_match", "token_f1"];

/** What the metric and confusion helpers accept, for their error messages. */
export const REPORT_EXPECTED = "an Evaluation report or a lab store evaluation run (lab.run(id))";

export function reportRows(report: ReportInput): readonly EvaluationRow[] {
  const rows = report.results ?? report.rows;
  if (!Array.isArray(rows)) {
    throw new ValidationError(
      "Expected an Evaluation report (with `results`) or an evaluation run from the lab store (with `rows`); " +
        "received an object with neither. Pass what `new Evaluation().evaluate(...)` returned or `lab.run(id)`.",
      { field: "report" },
    );
  }
  return rows;
}

function numberAt(source: unknown, key: string): number | undefined {
  const value = source && typeof source === "object" ? (source as Record<string, unknown>)[key] : undefined;
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** Metric name → value: the report's own number when it has one, else the mean of the rows' scores. */
export function reportMetrics(report: ReportInput): Map<string, number> {
  const rows = reportRows(report);
  const names = new Set<string>();
  for (const name of Object.keys(report.metrics ?? {})) names.add(name);
  for (const name of NAMED_METRICS) {
    if ([report, report.summary, report.summary?.metrics].some((s) => numberAt(s, name) !== undefined)) names.add(name);
  }
  for (const row of rows) for (const name of Object.keys(row.scores ?? {})) names.add(name);
  const metrics = new Map<string, number>();
  for (const name of names) {
    const own = numberAt(report.metrics, name) ?? numberAt(report, name) ?? numberAt(report.summary?.metrics, name) ?? numberAt(report.summary, name);
    if (own !== undefined) metrics.set(name, own);
    else if (rows.length) metrics.set(name, rows.reduce((sum, r) => sum + (r.scores?.[name] ?? 0), 0) / rows.length);
  }
  return metrics;
}

/** Metric name → `[low, high]` from the report's `ci`, for the metrics that have a finite interval. */
export function reportIntervals(report: ReportInput): Map<string, readonly [number, number]> {
  const out = new Map<string, readonly [number, number]>();
  const ci = report.ci;
  if (ci === null || typeof ci !== "object") return out;
  for (const [name, interval] of Object.entries(ci)) {
    if (Array.isArray(interval) && interval.length === 2 && interval.every((v) => typeof v === "number" && Number.isFinite(v))) {
      out.set(name, [interval[0], interval[1]]);
    }
  }
  return out;
}
