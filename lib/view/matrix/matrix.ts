// The viewer's matrix: several evaluation runs over the same examples side by side (`/matrix?runs=a,b,c`).
// The runs' rows are lined up by example id in the first run's order, and the examples where their
// scores differ marked, by one SQL read (sql.ts: on the file's query thread, or PostgreSQL's
// sessions for slow reads); that line-up is kept per runs, row counts and statuses, so paging and the
// disagreement filter cost one page of rows (read by index, in each run) each. Each run's metrics and intervals are its page's (`MetricLines`); the
// pairwise tests (`typelm compare` on each pair, Holm-adjusted over the family) run on the interval
// worker. The pages are page.ts; routes.ts sends the requests here.
import { ValidationError } from "../../errors.js";
import type { Comparison } from "../../evaluate/compare.js";
import { holm } from "../../evaluate/stats/holm.js";
import type { RunSummary } from "../../store/records.js";
import type { PackedRun } from "../interval-worker.js";
import type { IntervalWorker } from "../intervals.js";
import { recordedMetrics, type MetricLines } from "../metric-lines.js";
import type { MetricLine } from "../pages.js";
import type { LineUpRow } from "./sql.js";
import type { ScoreColumns, ViewRow, ViewSource } from "../data/source.js";

/** Runs a matrix shows at most. */
export const MAX_MATRIX_RUNS = 10;

/** How a matrix's examples are narrowed and paged. */
export interface MatrixQuery {
  /** Only the examples where the runs' scores differ. */
  disagree: boolean;
  limit: number;
  offset: number;
}

/** One example of a matrix: its id, whether the runs' scores differ, and each run's row (in the runs' order). */
export interface MatrixRow {
  exampleId: string;
  disagree: boolean;
  cells: (ViewRow | undefined)[];
}

/** One page of a matrix, with what its head shows. */
export interface MatrixData {
  runs: RunSummary[];
  /** Each run's metric lines, in the runs' order. */
  metrics: MetricLine[][];
  /** The metrics every run has: the scores compared for `disagree` and by the tests. */
  shared: string[];
  /** Examples in each run. */
  examples: number;
  /** Examples where the runs' scores differ on a shared metric. */
  disagreeing: number;
  /** Examples the query matches (all, or the disagreeing ones). */
  total: number;
  rows: MatrixRow[];
  query: MatrixQuery;
}

/** One pair's comparison on one metric, with its p-value adjusted over every pair and metric shown (Holm). */
export interface PairTest extends Comparison {
  /** The pair: run A's and run B's ids (B − A). */
  runA: string;
  runB: string;
  /** `pValue` adjusted (Holm) over the whole family: every pair of runs on every shared metric. */
  pAdjusted: number;
}

/** Examples lined up across the runs (first run's order) and where they disagree. */
interface LineUp {
  ids: string[];
  /** Per run, each example's index in that run (in the line-up's order). */
  indices: Int32Array[];
  disagree: Uint8Array;
  /** The positions of the disagreeing examples. */
  disagreeing: Int32Array;
}

/** The runs of a matrix from its `runs` parameter(s): comma-separated ids (or starts of ids), given once or repeated. */
export function matrixRunIds(q: URLSearchParams): string[] {
  const ids = q.getAll("runs").flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s !== "");
  if (ids.length < 2) {
    throw new ValidationError(`a matrix shows two or more evaluation runs side by side: give them as ?runs=<id>,<id>[,<id>…]; received ${ids.length === 0 ? "none" : `one (${ids[0]})`}`, { field: "runs" });
  }
  if (ids.length > MAX_MATRIX_RUNS) throw new ValidationError(`a matrix shows at most ${MAX_MATRIX_RUNS} runs; received ${ids.length}`, { field: "runs" });
  return ids;
}

/** The matrices of one store. */
export class Matrices {
  /** Line-ups by runs, row counts and statuses (a few kept: a person pages through one matrix at a time). */
  readonly #lineUps = new Map<string, Promise<LineUp>>();

  /** `find`: a run by its id or the start of it (a 404 when none). */
  constructor(readonly store: ViewSource, readonly intervals: IntervalWorker, readonly metricLines: MetricLines, readonly find: (id: string) => Promise<RunSummary>) {}

  /** The runs: evaluations, each once; a 400 with a sentence otherwise. */
  async #evaluations(given: string[]): Promise<RunSummary[]> {
    const runs: RunSummary[] = [];
    for (const id of given) {
      const run = await this.find(id);
      if (run.kind !== "evaluation") throw new ValidationError(`run ${run.id} is an ${run.kind} run; a matrix shows evaluation runs`, { field: "runs" });
      if (runs.some((r) => r.id === run.id)) throw new ValidationError(`run ${run.id} is given twice; a matrix shows each run once`, { field: "runs" });
      const { bestTrial: _best, ...summary } = run as RunSummary & { bestTrial?: unknown };
      runs.push(summary);
    }
    return runs;
  }

  /** The runs' metric lines (their pages') and the metrics they share; a 400 with a sentence when none. */
  async #metrics(runs: RunSummary[]): Promise<{ metrics: MetricLine[][]; shared: string[] }> {
    const metrics = await Promise.all(runs.map((r) => this.metricLines.of(r)));
    const names = metrics.map((lines) => lines.map((l) => l.name));
    const shared = names[0]!.filter((m) => names.every((n) => n.includes(m)));
    if (shared.length === 0) {
      throw new ValidationError(`the runs share no metric (${runs.map((r, i) => `${r.id.slice(0, 8)}: ${names[i]!.join(", ") || "none"}`).join("; ")}); a matrix compares the runs' scores on a metric they all have`, { field: "runs" });
    }
    return { metrics, shared };
  }

  /** One page of the matrix of `given` runs. */
  async page(given: string[], query: MatrixQuery, signal?: AbortSignal): Promise<MatrixData> {
    const runs = await this.#evaluations(given);
    // The line-up (on the query thread) starts while the metric lines are computed, when the runs name
    // their metrics (recorded or configured: the names the lines will have).
    const named = sharedNames(runs);
    const early = named === undefined ? undefined : this.#lineUp(runs, named, signal);
    early?.catch(() => undefined);
    const { metrics, shared } = await this.#metrics(runs);
    const lineUp = early !== undefined && named!.join("\u0000") === shared.join("\u0000") ? await early : await this.#lineUp(runs, shared, signal);
    const total = query.disagree ? lineUp.disagreeing.length : lineUp.ids.length;
    const end = Math.min(total, query.offset + query.limit);
    const positions: number[] = [];
    for (let p = query.offset; p < end; p++) positions.push(query.disagree ? lineUp.disagreeing[p]! : p);
    // Each run's rows of this page, read by their indices in that run (through the primary key).
    const found = await Promise.all(runs.map((r, j) => this.store.rowsByIndex(r.id, positions.map((p) => lineUp.indices[j]![p]!))));
    const byIndex = found.map((rows) => new Map(rows.map((r) => [r.index, r])));
    const rows = positions.map((p) => ({ exampleId: lineUp.ids[p]!, disagree: lineUp.disagree[p] === 1, cells: byIndex.map((m, j) => m.get(lineUp.indices[j]![p]!)) }));
    return { runs, metrics, shared, examples: lineUp.ids.length, disagreeing: lineUp.disagreeing.length, total, rows, query };
  }

  /**
   * Every pair of the runs compared on every shared metric as `typelm compare` compares two runs (on
   * the interval worker), the p-values adjusted by Holm over that whole family.
   */
  async tests(given: string[], signal?: AbortSignal): Promise<{ runs: RunSummary[]; metrics: MetricLine[][]; shared: string[]; tests: PairTest[] }> {
    const runs = await this.#evaluations(given);
    const { metrics, shared } = await this.#metrics(runs);
    // Checks the runs hold the same examples (a 400 with a sentence otherwise).
    await this.#lineUp(runs, shared, signal);
    const fields = shared.includes("f1_score");
    const columns = await Promise.all(runs.map((r) => this.store.scoreColumns(r.id, shared, { fields })));
    const values = metrics.map((lines) => Object.fromEntries(lines.map((l) => [l.name, l.value])));
    const tests: Omit<PairTest, "pAdjusted">[] = [];
    for (let i = 0; i < runs.length; i++) {
      for (let j = i + 1; j < runs.length; j++) {
        // The worker takes the arrays it is given: each pair gets copies.
        const found = await this.intervals.compare(packed(columns[i]!, values[i]!), packed(columns[j]!, values[j]!), shared);
        for (const c of found) {
          const { pAdjusted: _ownFamily, ...comparison } = c;
          tests.push({ ...comparison, runA: runs[i]!.id, runB: runs[j]!.id });
        }
      }
    }
    const adjusted = holm(tests.map((t) => t.pValue));
    return { runs, metrics, shared, tests: tests.map((t, k) => ({ ...t, pAdjusted: adjusted[k]! })) };
  }

  /** The runs' examples lined up (kept while the runs' statuses and, for a run going on, row counts are the same). */
  #lineUp(runs: RunSummary[], shared: string[], signal?: AbortSignal): Promise<LineUp> {
    return (async () => {
      // A run that has ended has all its rows: only a running run's count is read.
      const counts = await Promise.all(runs.map((r) => (r.status === "running" ? this.store.rowCounts(r.id).then((c) => c.rows) : -1)));
      const key = runs.map((r, i) => `${r.id}\u0000${counts[i]}\u0000${r.status}`).join("\u0001") + `\u0002${shared.join("\u0000")}`;
      let lineUp = this.#lineUps.get(key);
      if (lineUp === undefined) {
        lineUp = this.#read(runs, shared, signal);
        // A failed read is not kept: the next request reads again.
        lineUp.catch(() => this.#lineUps.delete(key));
        this.#lineUps.set(key, lineUp);
        for (const k of this.#lineUps.keys()) if (this.#lineUps.size > 4) this.#lineUps.delete(k);
      }
      return lineUp;
    })();
  }

  async #read(runs: RunSummary[], shared: string[], signal?: AbortSignal): Promise<LineUp> {
    const found = await this.store.lineUp(runs.map((r) => r.id), shared, signal);
    const ids: string[] = [];
    const indices = runs.map(() => new Int32Array(found.length));
    const disagree = new Uint8Array(found.length);
    const disagreeing: number[] = [];
    for (const r of found) {
      if (r.present !== null || r.pos === null) throw notLinedUp(runs, r);
      const at = ids.length;
      if (Number(r.d) === 1) { disagree[at] = 1; disagreeing.push(at); }
      for (let j = 0; j < runs.length; j++) indices[j]![at] = Number(r[`i${j}`]);
      ids.push(r.id);
    }
    return { ids, indices, disagree, disagreeing: Int32Array.from(disagreeing) };
  }
}

/** The metrics every run names (recorded, else configured: as its metric lines name them); undefined when a run names none. */
function sharedNames(runs: RunSummary[]): string[] | undefined {
  const names = runs.map((run) => {
    const recorded = recordedMetrics(run);
    const configured = run.config["metrics"];
    return recorded !== undefined ? Object.keys(recorded) : Array.isArray(configured) ? configured.filter((m): m is string => typeof m === "string") : [];
  });
  if (names.some((n) => n.length === 0)) return undefined;
  const shared = names[0]!.filter((m) => names.every((n) => n.includes(m)));
  return shared.length === 0 ? undefined : shared;
}

/** Why the runs cannot be lined up: an example not in every run, or in one twice (a 400 with a sentence). */
function notLinedUp(runs: RunSummary[], r: LineUpRow): ValidationError {
  const holding = (r.present ?? "").split(",");
  const name = (run: RunSummary) => `${run.id.slice(0, 8)} (${run.name})`;
  const lacking = runs.filter((run) => !holding.includes(run.id));
  if (lacking.length === 0) {
    return new ValidationError(`a run holds example ${JSON.stringify(r.id)} more than once; a matrix lines runs up by example id, so each must be once in each run`, { field: "runs" });
  }
  const holders = runs.filter((run) => holding.includes(run.id));
  return new ValidationError(
    `the runs are not over the same examples: ${JSON.stringify(r.id)} is in run ${holders.map(name).join(", ")} but not in run ${lacking.map(name).join(", ")}; ` +
    "a matrix shows runs of one test set side by side", { field: "runs" });
}

/** A run's columns packed for the interval worker, as copies (the worker takes the arrays it is given). */
function packed(c: ScoreColumns, metrics: Record<string, number>): PackedRun {
  const f = c.fields;
  return {
    n: c.ids.length, ids: c.ids, metrics,
    scores: Object.fromEntries(Object.entries(c.scores).map(([m, s]) => [m, s.slice()])),
    fields: f === undefined ? undefined : { names: f.names, values: f.values, expected: f.expected.map((x) => x.slice()), predicted: f.predicted.map((x) => x.slice()), flags: f.flags.slice() },
  };
}
