// The metric a rows filter or sort names (`?metric=`) must be one of the run's: one it does not have
// would match nothing and say nothing, so it is refused (HTTP 400) with a sentence naming the metric
// asked for and the run's metrics. The run's metrics: those its config and summary name, then those
// its first row scored (one indexed read).
import { ValidationError } from "../errors.js";
import type { RunSummary } from "../store/records.js";
import type { ViewSource } from "./data/source.js";

/** Throws a `ValidationError` when `metric` (given in the query) is none of the run's metrics; `known`: those already at hand. */
export async function checkMetric(store: ViewSource, run: RunSummary, metric: string | undefined, known: readonly string[]): Promise<void> {
  if (metric === undefined || known.includes(metric)) return;
  const recorded = run.summary["metrics"];
  const names = new Set(known);
  if (recorded !== null && typeof recorded === "object") for (const name of Object.keys(recorded)) names.add(name);
  if (!names.has(metric)) {
    const first = await store.rows(run.id, { limit: 1, offset: 0 });
    for (const r of first.rows) for (const name of Object.keys(r.scores)) names.add(name);
  }
  if (names.has(metric)) return;
  const list = [...names];
  throw new ValidationError(
    `run ${run.id} has no metric ${JSON.stringify(metric)}: ${list.length === 0 ? "it has recorded no metric yet" : `its metric${list.length === 1 ? " is" : "s are"} ${list.join(", ")}`}`,
    { field: "metric" },
  );
}
