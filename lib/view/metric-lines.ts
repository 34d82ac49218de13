// A run's metric lines on its page and in /api/runs/<id>: each metric's value and interval as `typelm
// show` computes them from the stored rows, kept by run, row count and status so that a finished run's
// are computed once. Bootstraps run on the interval worker (intervals.ts).
import { modifiedWilsonInterval } from "../evaluate/stats/share-interval.js";
import { metricsOf, storedReport } from "../evaluate/stored-run.js";
import type { EvaluationRun, RunSummary } from "../store/records.js";
import type { PackedRun } from "./interval-worker.js";
import type { IntervalWorker } from "./intervals.js";
import type { MetricLine } from "./pages.js";
import type { ViewSource } from "./data/source.js";

/** The metric lines of one store's runs. */
export class MetricLines {
  /** Metric intervals by run, rows and status: a finished run's are computed once. */
  readonly #metrics = new Map<string, MetricLine[]>();
  /** The intervals being computed (by the key of `#metrics`). */
  readonly #computing = new Map<string, Promise<MetricLine[]>>();
  readonly #store: ViewSource;
  readonly #intervals: IntervalWorker;
  readonly #deferAbove: number;

  constructor(store: ViewSource, intervals: IntervalWorker, deferAbove: number) {
    this.#store = store;
    this.#intervals = intervals;
    this.#deferAbove = deferAbove;
  }

  /**
   * The run's metrics with their intervals, as `typelm show` computes them from the stored rows. Past
   * `deferAbove` rows, an interval that needs a bootstrap is computed after the answer is sent: the
   * line says it is pending (the page asks again), so the first page does not wait for it.
   */
  async of(run: RunSummary): Promise<MetricLine[]> {
    const counts = await this.#store.rowCounts(run.id);
    const key = `${run.id}\u0000${counts.rows}\u0000${run.status}`;
    const cached = this.#metrics.get(key);
    if (cached !== undefined) return cached;
    const computing = this.#computing.get(key);
    if (counts.rows > this.#deferAbove) {
      const quick = (await this.#sqlLines(run, counts.rows, false)) ?? summaryLines(run);
      if (quick !== undefined && quick.some((l) => l.pending)) {
        // The store was closed meanwhile (the viewer stopped), or it failed to read: the next request computes and says.
        if (computing === undefined) this.#compute(run, counts.rows, key, true).catch(() => undefined);
        return quick;
      }
    }
    return computing ?? this.#compute(run, counts.rows, key, false);
  }

  /**
   * Computes a run's lines once for `key` (a second request waits for the same computation); `later`
   * starts after this turn of the event loop, so the answer that deferred it is sent first (a file's
   * reads are synchronous).
   */
  #compute(run: RunSummary, rows: number, key: string, later: boolean): Promise<MetricLine[]> {
    const start = later ? new Promise<void>((next) => setImmediate(next)) : Promise.resolve();
    const computing = start.then(() => this.#computeLines(run, rows, key)).finally(() => this.#computing.delete(key));
    this.#computing.set(key, computing);
    return computing;
  }

  async #computeLines(run: RunSummary, rows: number, key: string): Promise<MetricLine[]> {
    let lines = await this.#sqlLines(run, rows, true);
    if (lines === undefined) {
      // The metrics are not known without the rows (no summary, no configured metrics): from the whole run.
      const full = await this.#store.fullRun(run.id) as EvaluationRun;
      const metrics = metricsOf(full);
      const report = storedReport(full, metrics);
      lines = Object.entries(metrics).map(([name, value]) => ({ name, value, ci: report.ci[name], method: report.ciMethod[name] ?? "percentile bootstrap" }));
    }
    for (const k of this.#metrics.keys()) if (k.startsWith(`${run.id}\u0000`)) this.#metrics.delete(k);
    this.#metrics.set(key, lines);
    return lines;
  }

  /**
   * The lines of a run, as `typelm show` computes them from its rows, without loading the rows: a
   * share (any metric but `f1_score` with every score 0 or 1) has the modified Wilson interval of two
   * SQL counts, another mean metric the BCa bootstrap of its scores alone (the share bound when they
   * show no spread, see `meanScoreInterval`), and `f1_score` the BCa bootstrap of
   * macro-F1 over the expected and predicted values (read as columns), both computed on the worker
   * thread. Undefined when the metrics are not known without the rows.
   */
  async #sqlLines(run: RunSummary, rows: number, bootstrap: boolean): Promise<MetricLine[] | undefined> {
    if (rows === 0) return undefined;
    const summaryMetrics = recordedMetrics(run);
    const configured = run.config["metrics"];
    const names = summaryMetrics !== undefined ? Object.keys(summaryMetrics) : Array.isArray(configured) ? configured.filter((m): m is string => typeof m === "string") : [];
    if (names.length === 0) return undefined;
    const lines: MetricLine[] = [];
    for (const name of names) {
      const c = await this.#store.scoreCounts(run.id, name);
      // Without a recorded summary the value is the mean over the rows (a missing score counts 0).
      const value = summaryMetrics?.[name] ?? c.sum / c.n;
      if (name === "f1_score") {
        if (!bootstrap) {
          lines.push({ name, value, ci: undefined, method: "bootstrap-bca", pending: true });
          continue;
        }
        // Macro-F1 is recomputed on each resample: the worker gets the labels and predictions as codes.
        const columns = await this.#store.scoreColumns(run.id, [name], { fields: true });
        const packedRun: PackedRun = { n: columns.ids.length, metrics: { [name]: value }, scores: columns.scores, fields: columns.fields };
        const { ci, method } = await this.#intervals.interval(packedRun, name);
        lines.push({ name, value, ci, method });
      } else if (c.other === 0) {
        // Every score 0 or 1: a share, whatever the metric's name.
        lines.push({ name, value, ci: modifiedWilsonInterval(c.sum, c.n), method: "wilson" });
      } else if (bootstrap) {
        const { ci, method } = await this.#intervals.meanInterval(await this.#store.scores(run.id, name));
        lines.push({ name, value, ci, method });
      } else {
        lines.push({ name, value, ci: undefined, method: "bootstrap-bca", pending: true });
      }
    }
    return lines;
  }
}

/** A finished run's recorded metric values, their intervals pending; undefined when it recorded none. */
function summaryLines(run: RunSummary): MetricLine[] | undefined {
  const recorded = recordedMetrics(run);
  if (recorded === undefined) return undefined;
  const lines = Object.entries(recorded).map(([name, value]) => ({ name, value, ci: undefined, method: "…", pending: true }));
  return lines.length === 0 ? undefined : lines;
}

/** A run's recorded metric values (`typelm compare` takes them from its summary); undefined when it recorded none. */
export function recordedMetrics(run: RunSummary): Record<string, number> | undefined {
  const recorded = (run.summary as { metrics?: unknown }).metrics;
  return recorded !== null && typeof recorded === "object" && Object.values(recorded).every((v) => typeof v === "number")
    ? recorded as Record<string, number> : undefined;
}
