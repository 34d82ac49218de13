import { ValidationError } from "../errors.js";
import { rescore } from "../evaluate/rescore.js";
import type { MetricSpec } from "../evaluate/scoring.js";
import type { LabStore } from "../store/lab-store.js";
import { runById, showRun } from "./commands.js";
import { loadMetricFile } from "./load-metric.js";
import { printable } from "./terminal.js";

/**
 * `typelm rescore <run id> --metric <file> ...`: scores the stored predictions of an evaluation run
 * with the metrics the files default-export (a metric function or a judge) and records a new run
 * linked to it. Returns what the command prints: the link, then the new run as `typelm show` shows it.
 */
export async function rescoreCommand(store: LabStore, given: string, metricFiles: readonly string[], cwd: string): Promise<string> {
  if (metricFiles.length === 0) {
    throw new ValidationError("rescore needs at least one --metric <file> (a file default-exporting a metric function or a Judge)", { field: "metric" });
  }
  const source = runById(store, given);
  const metrics: MetricSpec[] = [];
  for (const file of metricFiles) metrics.push(await loadMetricFile(file, cwd));
  const report = await rescore(source.id, { metrics, lab: store, progress: false });
  const judge = report.judge.calls === 0 ? "" : `; judge calls ${report.judge.calls}, tokens ${report.judge.inputTokens} in / ${report.judge.outputTokens} out, cost $${report.judge.cost.toFixed(4)}`;
  return `rescored ${printable(source.id)} (no program call${judge})\n${showRun(runById(store, report.runId!))}`;
}
