// The viewer's routes over one store: each page (pages*.ts) and the same data as JSON
// under /api/, from the URL's path and query. A run's metric lines come from metric-lines.ts; a
// comparison is computed on the interval worker (intervals.ts). server.ts is the HTTP server around them.
import { randomBytes } from "node:crypto";
import { ValidationError } from "../errors.js";
import { pValueText } from "../evaluate/compare.js";
import { metricsOf, runTitle } from "../evaluate/stored-run.js";
import type { EvaluationRow, RunSummary } from "../store/records.js";
import { html, Markup, page } from "./html.js";
import { evaluationPage, KINDS, runsPage, STATUSES, type MetricLine } from "./pages.js";
import { comparePage, registryNamePage, registryPage } from "./pages-more.js";
import { optimizationPage } from "./pages-optimization.js";
import { callsSection, rowPage } from "./pages-row.js";
import { LIVE_SCRIPT } from "./live-script.js";
import { checkMetric } from "./metric-filter.js";
import { IntervalWorker } from "./intervals.js";
import { MetricLines, recordedMetrics } from "./metric-lines.js";
import { Matrices } from "./matrix/matrix.js";
import { MatrixRoutes } from "./matrix/routes.js";
import { PICK_SCRIPT } from "./matrix/pick.js";
import type { RowQuery, RunQuery, ScoreColumns, ViewSource } from "./data/source.js";
import type { PackedRun } from "./interval-worker.js";
import { FIELDS_SCRIPT } from "./fields.js";
import { readOnlyReviewPage, reviewPage } from "./review/page.js";
import { queueQuery, reviewQueue } from "./review/queue.js";
import { REVIEW_SCRIPT, REVIEW_STYLE } from "./review/script.js";

const PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 500;

/** No page or data at the address (answered 404). */
export class NotFound extends Error {}

/** The viewer's routes over one store. */
export class Routes {
  readonly #intervals = new IntervalWorker();
  readonly #metricLines: MetricLines;
  readonly #matrix: MatrixRoutes;

  /** `review`: the viewer was started with --review (the queue page offers writing). */
  constructor(readonly store: ViewSource, deferAbove: number, readonly review = false) {
    this.#metricLines = new MetricLines(store, this.#intervals, deferAbove);
    this.#matrix = new MatrixRoutes(new Matrices(store, this.#intervals, this.#metricLines, (id) => this.#run(id)));
  }

  async close(): Promise<void> {
    await this.#intervals.close().finally(() => this.store.close());
  }

  // ---- pages -----------------------------------------------------------------------------------

  /** The page at `parts`; `signal` is aborted when the request is gone (its slow reads are stopped). */
  async page(parts: string[], q: URLSearchParams, signal?: AbortSignal): Promise<string> {
    const s = this.store.path;
    if (parts.length === 0) return page("Runs", s, runsPage(await this.store.runs(runQuery(q)), runQuery(q)), { nonce: randomBytes(16).toString("base64"), code: PICK_SCRIPT });
    if (parts[0] === "matrix") {
      const matrix = await this.#matrix.page(parts.slice(1), q, paging(q), signal);
      if (matrix !== undefined) return matrix;
    }
    if (parts[0] === "runs" && parts.length === 2) {
      const run = await this.#run(parts[1]!);
      if (run.kind === "optimization") {
        return page(run.name, s, await optimizationPage(run, await this.store.trials(run.id), html`<h1>${runTitle(run.name, run.kind, run.config)} <span class="muted">(optimization)</span></h1>
<p>run <code>${run.id}</code> · <span class="status-${run.status}">${run.status}</span> · started ${run.startedAt}${run.endedAt === null ? "" : html` · ended ${run.endedAt}`}</p>
${run.error === null ? "" : html`<pre class="worse">${run.error}</pre>`}`));
      }
      const d = await this.#evaluation(run, q, signal);
      return page(run.name, s, evaluationPage(d), { nonce: randomBytes(16).toString("base64"), code: LIVE_SCRIPT });
    }
    if (parts[0] === "runs" && parts.length === 4 && parts[2] === "rows") {
      const run = await this.#run(parts[1]!);
      const row = await this.store.row(run.id, index(parts[3]!));
      if (row === undefined) throw new NotFound(`run ${run.id} has no example ${parts[3]}`);
      return page(`Example ${row.index}`, s, rowPage(run, row, callsSection(await this.store.calls(run.id, row.index))));
    }
    if (parts[0] === "compare" && parts.length === 3) {
      const c = await this.#compare(parts[1]!, parts[2]!);
      // The changed examples shown, read in full (the comparison itself may have read only scores).
      const first = c.comparisons[0]!;
      const shown = [...first.better, ...first.worse].slice(0, 200);
      const [rowsA, rowsB] = await Promise.all([this.store.rowsById(c.a.id, shown), this.store.rowsById(c.b.id, shown)]);
      return page("Comparison", s, comparePage(c.a, c.b, c.comparisons, byId(rowsA), byId(rowsB), pValueText));
    }
    if (parts[0] === "review" && parts.length === 1) {
      if (!this.review) return page("Review queue", s, readOnlyReviewPage());
      const query = queueQuery(q);
      const { runs, items } = await reviewQueue(this.store, query);
      return page("Review queue", s, html`<style>${new Markup(REVIEW_STYLE)}</style>${reviewPage(items, runs.length, query)}`,
        { nonce: randomBytes(16).toString("base64"), code: `${FIELDS_SCRIPT}${REVIEW_SCRIPT}` });
    }
    if (parts[0] === "registry" && parts.length === 1) return page("Registry", s, registryPage(await this.store.registryNames()));
    if (parts[0] === "registry" && parts.length === 2) {
      const r = await this.#registry(parts[1]!, q);
      return page(parts[1]!, s, registryNamePage(parts[1]!, r.versions, r.a, r.b));
    }
    throw new NotFound(`no page at /${parts.join("/")}`);
  }

  // ---- JSON ------------------------------------------------------------------------------------

  /** The JSON at /api/`parts`; `signal` as for `page`. */
  async api(parts: string[], q: URLSearchParams, signal?: AbortSignal): Promise<unknown> {
    if (parts[0] === "runs" && parts.length === 1) return this.store.runs(runQuery(q));
    if (parts[0] === "runs" && parts.length >= 2) {
      const run = await this.#run(parts[1]!);
      if (parts.length === 2) {
        if (run.kind === "optimization") return { ...run, trials: await this.store.trials(run.id) };
        return { ...run, counts: await this.store.rowCounts(run.id), metrics: await this.#metricLines.of(run) };
      }
      if (parts[2] === "rows" && parts.length === 3) {
        const query = rowQuery(q, run);
        await checkMetric(this.store, run, text(q, "metric"), metricNames(run, []));
        const after = q.get("after");
        if (after !== null) query.after = whole(after, "after");
        // The counts after the rows: a row written in between is counted, and the next poll brings it.
        const rows = await this.store.rows(run.id, { ...query, signal });
        return { ...rows, status: (await this.#run(run.id)).status, counts: await this.store.rowCounts(run.id) };
      }
      if (parts[2] === "rows" && parts.length === 4) {
        const row = await this.store.row(run.id, index(parts[3]!));
        if (row === undefined) throw new NotFound(`run ${run.id} has no example ${parts[3]}`);
        return { ...row, calls: await this.store.calls(run.id, row.index) };
      }
    }
    if (parts[0] === "compare" && parts.length === 3) {
      const c = await this.#compare(parts[1]!, parts[2]!);
      return { a: c.a, b: c.b, comparisons: c.comparisons };
    }
    if (parts[0] === "matrix") {
      const matrix = await this.#matrix.api(parts.slice(1), q, paging(q), signal);
      if (matrix !== undefined) return matrix;
    }
    if (parts[0] === "reviews" && parts.length === 1) {
      const given = text(q, "runId");
      if (given === undefined) throw new ValidationError("runId is missing: GET /api/reviews?runId=<run id> lists a run's reviews", { field: "runId" });
      const run = await this.#run(given);
      return this.store.annotations(run.id, q.get("all") === "1" || q.get("all") === "true");
    }
    if (parts[0] === "registry" && parts.length === 1) return this.store.registryNames();
    if (parts[0] === "registry" && parts.length === 2) return await this.#registry(parts[1]!, q);
    throw new NotFound(`no data at /api/${parts.join("/")}`);
  }

  // ---- shared ----------------------------------------------------------------------------------

  async #run(id: string) {
    const run = await this.store.run(id);
    if (run === undefined) throw new NotFound(`no run whose id is or starts with ${JSON.stringify(id)} in ${this.store.path}`);
    return run;
  }

  async #evaluation(run: RunSummary, q: URLSearchParams, signal?: AbortSignal) {
    const metrics = await this.#metricLines.of(run);
    const query = rowQuery(q, run, metrics.map((m) => m.name));
    await checkMetric(this.store, run, text(q, "metric"), metricNames(run, metrics));
    // The last position before the rows: a row written in between comes with the first poll (the page adds it once, by index).
    const lastSeq = run.status === "running" ? await this.store.lastSeq(run.id) : 0;
    const [counts, rows, labels] = await Promise.all([this.store.rowCounts(run.id), this.store.rows(run.id, { ...query, signal }), this.store.labels(run.id)]);
    // Only a running run's page polls for new rows.
    return { run, counts, metrics, rows, query, labels, metricNames: metricNames(run, metrics), lastSeq };
  }

  /**
   * The comparison `typelm compare` prints, computed on the worker thread from the two runs' scores
   * read as columns (and, for `f1_score`, their expected and predicted values as codes); only the
   * changed examples shown are read whole, by the page.
   */
  async #compare(idA: string, idB: string) {
    const found: RunSummary[] = [];
    for (const id of [idA, idB]) {
      const run = await this.#run(id);
      if (run.kind !== "evaluation") throw new ValidationError(`run ${run.id} is an ${run.kind} run; a comparison takes two evaluation runs`, { field: "run" });
      const { bestTrial: _best, ...summary } = run;
      found.push(summary);
    }
    // Each run's metric values: recorded when it finished, else (a run still going) the means of its rows' scores.
    const values: Record<string, number>[] = [];
    for (const run of found) values.push(recordedMetrics(run) ?? metricsOf({ ...run, kind: "evaluation", rows: await this.store.scoreRows(run.id) }));
    const shared = sharedMetrics(values[0]!, values[1]!);
    const fields = shared.includes("f1_score");
    const ca = await this.store.scoreColumns(found[0]!.id, shared, { fields });
    // B's ids are not kept while they are A's, in A's order (two evaluations of one test set).
    let cb: ScoreColumns | undefined = await this.store.scoreColumns(found[1]!.id, shared, { fields, sameIdsAs: ca.ids });
    const inOrder = inOrderOf(ca, cb);
    const pack = (c: ScoreColumns, metrics: Record<string, number>, ids: boolean): PackedRun =>
      ({ n: c.ids.length, ids: ids ? c.ids : undefined, metrics, scores: c.scores, fields: c.fields });
    if (inOrder === undefined) {
      // The runs' ids differ (or repeat): the worker pairs the rows by id, and says what differs as `compare` does.
      return { a: found[0]!, b: found[1]!, comparisons: await this.#intervals.compare(pack(ca, values[0]!, true), pack(cb, values[1]!, true), shared) };
    }
    // The same examples once each: B's rows in A's order, paired by position (row i is `#i` on the worker).
    const jobB = pack(inOrder, values[1]!, false);
    cb = undefined;
    const comparisons = await this.#intervals.compare(pack(ca, values[0]!, false), jobB, shared);
    const idOf = (position: string) => ca.ids[Number(position.slice(1))]!;
    return { a: found[0]!, b: found[1]!, comparisons: comparisons.map((c) => ({ ...c, better: c.better.map(idOf), worse: c.worse.map(idOf) })) };
  }

  async #registry(name: string, q: URLSearchParams) {
    const versions = await this.store.versions(name);
    if (versions.length === 0) throw new NotFound(`no module named ${JSON.stringify(name)} in the registry of ${this.store.path}`);
    const pick = (key: string, fallback: number) => {
      const given = q.get(key);
      const wanted = given === null || given === "" ? fallback : whole(given, key);
      const found = versions.find((v) => v.version === wanted);
      if (found === undefined) throw new ValidationError(`${name} has no version ${wanted}; it has ${versions.map((v) => `v${v.version}`).join(", ")}`, { field: key });
      return found;
    };
    const last = versions[versions.length - 1]!.version;
    const before = versions.length > 1 ? versions[versions.length - 2]!.version : last;
    return { versions, a: pick("a", before), b: pick("b", last) };
  }
}

function whole(text: string, name: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new ValidationError(`${name} expects a whole number; received ${JSON.stringify(text)}`, { field: name });
  return Number(text);
}

function index(text: string): number {
  if (!/^\d+$/.test(text)) throw new NotFound(`${JSON.stringify(text)} is not an example index (a whole number)`);
  return Number(text);
}

function paging(q: URLSearchParams): { limit: number; offset: number } {
  const size = q.get("size");
  const limit = size === null || size === "" ? PAGE_SIZE : Math.min(MAX_PAGE_SIZE, Math.max(1, whole(size, "size")));
  const pageText = q.get("page");
  const pageNo = pageText === null || pageText === "" ? 1 : Math.max(1, whole(pageText, "page"));
  return { limit, offset: (pageNo - 1) * limit };
}

function text(q: URLSearchParams, key: string): string | undefined {
  const v = q.get(key);
  return v === null || v === "" ? undefined : v;
}

function runQuery(q: URLSearchParams): RunQuery {
  const kind = text(q, "kind"), status = text(q, "status");
  if (kind !== undefined && !KINDS.includes(kind)) throw new ValidationError(`kind expects ${KINDS.slice(0, -1).join(", ")} or ${KINDS[KINDS.length - 1]}; received ${JSON.stringify(kind)}`, { field: "kind" });
  if (status !== undefined && !STATUSES.includes(status)) throw new ValidationError(`status expects ${STATUSES.join(", ")}; received ${JSON.stringify(status)}`, { field: "status" });
  return { kind, status, name: text(q, "name"), model: text(q, "model"), ...paging(q) };
}

function metricNames(run: RunSummary, lines: MetricLine[]): string[] {
  const configured = run.config["metrics"];
  const names = Array.isArray(configured) ? configured.filter((m): m is string => typeof m === "string") : [];
  return [...new Set([...names, ...lines.map((l) => l.name)])];
}

function rowQuery(q: URLSearchParams, run: RunSummary, known: string[] = []): RowQuery {
  const names = [...new Set([...metricNames(run, []), ...known])];
  const metric = text(q, "metric") ?? names[0];
  const sort = text(q, "sort") ?? "index";
  if (sort !== "index" && sort !== "score" && sort !== "duration") throw new ValidationError(`sort expects index, score or duration; received ${JSON.stringify(sort)}`, { field: "sort" });
  const max = text(q, "max");
  let maxScore: number | undefined;
  if (max !== undefined) {
    maxScore = Number(max);
    if (!Number.isFinite(maxScore)) throw new ValidationError(`max expects a number (a score, e.g. 0.5); received ${JSON.stringify(max)}`, { field: "max" });
  }
  return {
    failed: q.get("failed") === "1" || q.get("failed") === "true", label: text(q, "label"), text: text(q, "text"),
    metric, maxScore, sort, descending: q.get("desc") === "1" || q.get("desc") === "true", ...paging(q),
  };
}


function sharedMetrics(a: Record<string, number>, b: Record<string, number>): string[] {
  const shared = Object.keys(a).filter((m) => m in b);
  if (shared.length === 0) {
    throw new ValidationError(`the two runs share no metric (A: ${Object.keys(a).join(", ") || "none"}; B: ${Object.keys(b).join(", ") || "none"})`, { field: "metric" });
  }
  return shared;
}

/**
 * Run B's columns in run A's row order when both hold the same pairing ids, each once; else undefined.
 * The same order (two evaluations of one test set) is returned as it is.
 */
function inOrderOf(a: ScoreColumns, b: ScoreColumns): ScoreColumns | undefined {
  const n = a.ids.length;
  if (b.ids.length !== n) return undefined;
  if (b.ids === a.ids || a.ids.every((id, i) => id === b.ids[i])) {
    // Each id once: sorted, no two neighbours equal (no map of every id needed).
    const sorted = a.ids.slice().sort();
    for (let i = 1; i < n; i++) if (sorted[i] === sorted[i - 1]) return undefined;
    return b;
  }
  const position = new Map<string, number>();
  for (let i = 0; i < n; i++) position.set(a.ids[i]!, i);
  if (position.size !== n) return undefined;
  // order[i]: the row of B paired with A's row i.
  const order = new Int32Array(n).fill(-1);
  for (let j = 0; j < n; j++) {
    const i = position.get(b.ids[j]!);
    if (i === undefined || order[i] !== -1) return undefined;
    order[i] = j;
  }
  position.clear();
  const moved = <T extends Float64Array | Int32Array | Uint8Array>(x: T): T => {
    const y = new (x.constructor as new (n: number) => T)(n);
    for (let i = 0; i < n; i++) y[i] = x[order[i]!]!;
    return y;
  };
  const f = b.fields;
  return {
    ids: a.ids,
    scores: Object.fromEntries(Object.entries(b.scores).map(([m, s]) => [m, moved(s)])),
    fields: f === undefined ? undefined : { names: f.names, values: f.values, expected: f.expected.map(moved), predicted: f.predicted.map(moved), flags: moved(f.flags) },
  };
}

function byId(rows: readonly EvaluationRow[]): Map<string, EvaluationRow> {
  return new Map(rows.map((r) => [r.exampleId ?? `#${r.index}`, r]));
}
