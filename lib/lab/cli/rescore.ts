import { ValidationError } from "../../errors.js";
import { rescore } from "../../evaluate/rescore.js";
import type { MetricSpec } from "../../evaluate/scoring.js";
import type { Lab } from "../../store/lab-store.js";
import type { LabRun } from "../../store/records.js";
import { runById } from "../runs/find.js";
import { showRun } from "./show.js";
import { loadMetricFile } from "../experiment/load-metric.js";

/**
 * `typelm rescore <run id> --metric <file> ...`: scores the stored predictions of an evaluation run
 * with the metrics the files default-export (a metric function or a judge) and records a new run
 * linked to it. Returns what the command prints: the new run as `typelm show` shows it (with its source).
 */
export async function rescoreCommand(store: Lab, given: string, metricFiles: readonly string[], cwd: string): Promise<string> {
  if (metricFiles.length === 0) {
    throw new ValidationError("rescore needs at least one --metric <file> (a file default-exporting a metric function or a Judge)", { field: "metric" });
  }
  // A run by its id or the start of it, with `typelm show`'s messages, from the file or a team's lab.
  const find = async (id: string): Promise<LabRun> => {
    if (store.engine === "sqlite") return runById(store, id);
    const { postgresRunById } = await import("../runs/team-store.js");
    return postgresRunById(store, id);
  };
  const source = await find(given);
  const metrics: MetricSpec[] = [];
  for (const file of metricFiles) metrics.push(await loadMetricFile(file, cwd));
  const report = await rescore(source.id, { metrics, lab: store, progress: false });
  return showRun(await find(report.runId!));
}
