// What the command line and the viewer both read of a stored evaluation run: its metrics (also for a
// run that ended early), the run as an EvaluationReport (so its intervals are report.ci's), and the
// name a run is listed under. Below lab/ and view/, which both use it.
import { inferFields } from "./fields.js";
import { EvaluationReport } from "./report.js";
import type { EvaluationRun } from "../store/records.js";

/** The metrics an evaluation recorded; for one that ended early, the mean of its rows' scores. */
export function metricsOf(run: EvaluationRun): Record<string, number> {
  const recorded = (run.summary as { metrics?: unknown }).metrics;
  if (recorded !== null && typeof recorded === "object" && Object.values(recorded).every((v) => typeof v === "number")) return recorded as Record<string, number>;
  const sums: Record<string, number> = {};
  for (const row of run.rows) for (const [m, v] of Object.entries(row.scores)) sums[m] = (sums[m] ?? 0) + v;
  return Object.fromEntries(Object.entries(sums).map(([m, v]) => [m, run.rows.length === 0 ? 0 : v / run.rows.length]));
}

/** The stored run as an `EvaluationReport`, so its intervals are the ones `report.ci` gives. */
export function storedReport(run: EvaluationRun, metrics: Record<string, number>): EvaluationReport {
  const failures = run.rows.filter((r) => r.error !== null);
  const sum = (key: "inputTokens" | "outputTokens" | "cost" | "durationMs") => run.rows.reduce((total, r) => total + r[key], 0);
  return new EvaluationReport({
    metrics, results: run.rows, failures, feedback: run.rows.map(() => ({})), inputTokens: sum("inputTokens"), outputTokens: sum("outputTokens"),
    cost: sum("cost"), durationMs: sum("durationMs"), runId: run.id, name: run.name,
  }, inferFields(run.rows));
}

/**
 * A run's name as listed: an optimization run started by an experiment (`typelm run`) is named by
 * its optimizer ("MIPROv2"), so the experiment's name goes in front, as in its evaluations' names.
 */
export function runTitle(name: string, kind: string, config: Record<string, unknown>): string {
  const experiment = config["experiment"];
  return kind === "optimization" && typeof experiment === "string" && experiment !== "" ? `${experiment} ${name}` : name;
}
