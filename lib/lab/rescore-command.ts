import { ValidationError } from "../errors.js";
import { rescore } from "../evaluate/rescore.js";
import type { MetricSpec } from "../evaluate/scoring.js";
import type { LabStore } from "../store/lab-store.js";
import { runById, showRun } from "./commands.js";
import { loadMetricFile } from "./load-metric.js";

/**
 * `typelm rescore <run id> --metric <file> ...`: scores the stored predictions of an evaluation run
 * with the metrics the files default-export (a metric function or a judge) and records a new run
 * linked to it. Returns what the command prints: the new run as `typelm show` shows it (with its source).
 */
export async function rescoreCommand(store: LabStore, given: string, metricFiles: readonly string[], cwd: string): Promise<string> {
  if (metricFiles.length === 0) {
    throw new ValidationError("rescore needs at least one --metric <file> (a file default-exporting a metric function or a Judge)", { field: "metric" });
  }
  const source = runById(store, given);
  const metrics: MetricSpec[] = [];
  for (const file of metricFiles) metrics.push(await loadMetricFile(file, cwd));
  const report = await rescore(source.id, { metrics, lab: store, progress: false });
  return showRun(runById(store, report.runId!));
}
