// `typelm view`: a local web server over one lab store, read-only. Pages are rendered on the server
// (pages.ts, pages-more.ts) from the store's read-only connection (a `ViewSource`: queries.ts for a
// file, pg-source.ts for a team's lab on PostgreSQL); the same data is JSON under /api/. Bootstrap
// intervals and comparisons (`f1_score`'s included) are computed on a worker thread (intervals.ts). Loaded
// only by the command line (a dynamic import), never by `import "typelm"`.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ValidationError } from "../errors.js";
import { pValueText } from "../evaluate/compare.js";
import { wilsonInterval } from "../evaluate/stats/share-interval.js";
import { metricsOf, runTitle, storedReport } from "../lab/commands.js";
import type { EvaluationRow, EvaluationRun, RunSummary } from "../store/records.js";
import { html, page } from "./html.js";
import { callsSection, evaluationPage, KINDS, LIVE_SCRIPT, rowPage, runsPage, STATUSES, type MetricLine } from "./pages.js";
import { comparePage, optimizationPage, registryNamePage, registryPage } from "./pages-more.js";
import { IntervalWorker } from "./intervals.js";
import type { RowQuery, RunQuery, ScoreColumns, ViewSource } from "./source.js";
import type { PackedRun } from "./interval-worker.js";
import { isPostgresUrl } from "../store/pg.js";

/** What `startViewer` takes: the store (a file, or a postgres:// URL), and where to listen (default 127.0.0.1:4173). */
export interface ViewerOptions {
  store: string;
  /** 0 picks a free port. */
  port?: number;
  host?: string;
  /**
   * Runs with more rows than this get a bootstrap interval after their page is sent (the page fills
   * it in when ready); default 20,000.
   */
  deferIntervalsAbove?: number;
}

/** A running viewer: its address, and `close()` to stop it. */
export interface Viewer {
  url: string;
  store: string;
  close(): Promise<void>;
}

export const DEFAULT_PORT = 4173;
const DEFER_INTERVALS_ABOVE = 20_000;
const PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 500;

class NotFound extends Error {}

/** Starts the viewer; resolves once it listens. */
export async function startViewer(options: ViewerOptions): Promise<Viewer> {
  const store = await openSource(options.store);
  const host = options.host ?? "127.0.0.1";
  const app = new App(store, options.deferIntervalsAbove ?? DEFER_INTERVALS_ABOVE);
  const server = createServer((req, res) => {
    // handle() answers its own errors; this is for a failure to send (the connection went away).
    app.handle(req, res).catch(() => res.destroy());
  });
  try {
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(options.port ?? DEFAULT_PORT, host, () => { server.off("error", fail); done(); });
    });
  } catch (error) {
    await app.close();
    const code = (error as { code?: unknown }).code;
    if (code === "EADDRINUSE") throw new ValidationError(`port ${options.port ?? DEFAULT_PORT} on ${host} is in use: give another with --port N (--port 0 picks a free one)`, { field: "port" });
    if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") throw new ValidationError(`cannot listen on host ${JSON.stringify(host)}: give an address of this machine with --host (default 127.0.0.1)`, { field: "host" });
    throw error;
  }
  const address = server.address() as AddressInfo;
  app.port = address.port;
  app.loopbackOnly = isLoopback(host);
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/`,
    store: store.path,
    close: () => closeServer(server).finally(() => app.close()),
  };
}

/** The store's reads: the file at a path, or a team's lab at a postgres:// URL (loads `pg`). */
async function openSource(store: string): Promise<ViewSource> {
  if (isPostgresUrl(store)) {
    const { PostgresViewSource } = await import("./pg-source.js");
    return PostgresViewSource.open(store);
  }
  const { SqliteViewSource } = await import("./queries.js");
  return new SqliteViewSource(store);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

/** The viewer's routes over one store. */
class App {
  port = 0;
  loopbackOnly = true;
  /** Metric intervals by run, rows and status: a finished run's are computed once. */
  readonly #metrics = new Map<string, MetricLine[]>();
  /** The intervals being computed (by the key of `#metrics`). */
  readonly #computing = new Map<string, Promise<MetricLine[]>>();
  readonly #intervals = new IntervalWorker();

  constructor(readonly store: ViewSource, readonly deferAbove: number) {}

  async close(): Promise<void> {
    await this.#intervals.close().finally(() => this.store.close());
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(res, 405, "text/plain; charset=utf-8", "The viewer is read-only: GET only.\n", { allow: "GET, HEAD" });
      return;
    }
    // A page on another site must not reach the viewer through a name that resolves to 127.0.0.1.
    const hostHeader = req.headers.host ?? "";
    if (this.loopbackOnly && !/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/i.test(hostHeader)) {
      send(res, 403, "text/plain; charset=utf-8", "The viewer answers only to 127.0.0.1, localhost and [::1].\n");
      return;
    }
    const url = new URL(req.url ?? "/", "http://viewer");
    let parts: string[];
    try {
      parts = url.pathname.split("/").filter((p) => p !== "").map((p) => decodeURIComponent(p));
    } catch {
      parts = ["\u0000"];
    }
    const api = parts[0] === "api";
    try {
      const out = api ? await this.api(parts.slice(1), url.searchParams) : await this.page(parts, url.searchParams);
      if (typeof out === "string") {
        send(res, 200, "text/html; charset=utf-8", out);
      } else {
        send(res, 200, "application/json; charset=utf-8", JSON.stringify(out));
      }
    } catch (error) {
      const status = error instanceof NotFound ? 404 : error instanceof ValidationError ? 400 : 500;
      const message = error instanceof Error ? error.message : String(error);
      if (api) send(res, status, "application/json; charset=utf-8", JSON.stringify({ error: message }));
      else send(res, status, "text/html; charset=utf-8", page(status === 404 ? "Not found" : "Error", this.store.path, html`<h1>${status === 404 ? "Not found" : "Error"}</h1><p id="error">${message}</p><p><a href="/">runs</a></p>`));
    }
  }

  // ---- pages -----------------------------------------------------------------------------------

  async page(parts: string[], q: URLSearchParams): Promise<string> {
    const s = this.store.path;
    if (parts.length === 0) return page("Runs", s, runsPage(await this.store.runs(runQuery(q)), runQuery(q)));
    if (parts[0] === "runs" && parts.length === 2) {
      const run = await this.#run(parts[1]!);
      if (run.kind === "optimization") {
        return page(run.name, s, await optimizationPage(run, await this.store.trials(run.id), html`<h1>${runTitle(run.name, run.kind, run.config)} <span class="muted">(optimization)</span></h1>
<p>run <code>${run.id}</code> · <span class="status-${run.status}">${run.status}</span> · started ${run.startedAt}${run.endedAt === null ? "" : html` · ended ${run.endedAt}`}</p>
${run.error === null ? "" : html`<pre class="worse">${run.error}</pre>`}`));
      }
      const d = await this.#evaluation(run, q);
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
    if (parts[0] === "registry" && parts.length === 1) return page("Registry", s, registryPage(await this.store.registryNames()));
    if (parts[0] === "registry" && parts.length === 2) {
      const r = await this.#registry(parts[1]!, q);
      return page(parts[1]!, s, registryNamePage(parts[1]!, r.versions, r.a, r.b));
    }
    throw new NotFound(`no page at /${parts.join("/")}`);
  }

  // ---- JSON ------------------------------------------------------------------------------------

  async api(parts: string[], q: URLSearchParams): Promise<unknown> {
    if (parts[0] === "runs" && parts.length === 1) return this.store.runs(runQuery(q));
    if (parts[0] === "runs" && parts.length >= 2) {
      const run = await this.#run(parts[1]!);
      if (parts.length === 2) {
        if (run.kind === "optimization") return { ...run, trials: await this.store.trials(run.id) };
        return { ...run, counts: await this.store.rowCounts(run.id), metrics: await this.#metricLines(run) };
      }
      if (parts[2] === "rows" && parts.length === 3) {
        const query = rowQuery(q, run);
        const after = q.get("after");
        if (after !== null) query.after = whole(after, "after");
        // The counts after the rows: a row written in between is counted, and the next poll brings it.
        const rows = await this.store.rows(run.id, query);
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

  async #evaluation(run: RunSummary, q: URLSearchParams) {
    const metrics = await this.#metricLines(run);
    const query = rowQuery(q, run, metrics.map((m) => m.name));
    // The last position before the rows: a row written in between comes with the first poll (the page adds it once, by index).
    const lastSeq = run.status === "running" ? await this.store.lastSeq(run.id) : 0;
    const [counts, rows, labels] = await Promise.all([this.store.rowCounts(run.id), this.store.rows(run.id, query), this.store.labels(run.id)]);
    // Only a running run's page polls for new rows.
    return { run, counts, metrics, rows, query, labels, metricNames: metricNames(run, metrics), lastSeq };
  }

  /**
   * The run's metrics with their intervals, as `typelm show` computes them from the stored rows. Past
   * `deferAbove` rows, an interval that needs a bootstrap is computed after the answer is sent: the
   * line says it is pending (the page asks again), so the first page does not wait for it.
   */
  async #metricLines(run: RunSummary): Promise<MetricLine[]> {
    const counts = await this.store.rowCounts(run.id);
    const key = `${run.id}\u0000${counts.rows}\u0000${run.status}`;
    const cached = this.#metrics.get(key);
    if (cached !== undefined) return cached;
    const computing = this.#computing.get(key);
    if (counts.rows > this.deferAbove) {
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
      const full = await this.store.fullRun(run.id) as EvaluationRun;
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
   * share (accuracy or exact_match, every score 0 or 1) has the Wilson interval of two SQL counts,
   * another mean metric the BCa bootstrap of its scores alone, and `f1_score` the BCa bootstrap of
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
      const c = await this.store.scoreCounts(run.id, name);
      // Without a recorded summary the value is the mean over the rows (a missing score counts 0).
      const value = summaryMetrics?.[name] ?? c.sum / c.n;
      if (name === "f1_score") {
        if (!bootstrap) {
          lines.push({ name, value, ci: undefined, method: "bootstrap-bca", pending: true });
          continue;
        }
        // Macro-F1 is recomputed on each resample: the worker gets the labels and predictions as codes.
        const columns = await this.store.scoreColumns(run.id, [name], { fields: true });
        const packedRun: PackedRun = { n: columns.ids.length, metrics: { [name]: value }, scores: columns.scores, fields: columns.fields };
        const { ci, method } = await this.#intervals.interval(packedRun, name);
        lines.push({ name, value, ci, method });
      } else if ((name === "accuracy" || name === "exact_match") && c.other === 0) {
        lines.push({ name, value, ci: wilsonInterval(c.sum, c.n), method: "wilson" });
      } else if (bootstrap) {
        lines.push({ name, value, ci: await this.#intervals.meanInterval(await this.store.scores(run.id, name)), method: "bootstrap-bca" });
      } else {
        lines.push({ name, value, ci: undefined, method: "bootstrap-bca", pending: true });
      }
    }
    return lines;
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

function send(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void {
  const nonce = /<script nonce="([^"]+)"/.exec(type.startsWith("text/html") ? body : "")?.[1];
  res.writeHead(status, {
    "content-type": type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    // Only the page's own inline script runs; stored text can never become a script or a style.
    "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'${nonce === undefined ? "" : `; script-src 'nonce-${nonce}'`}`,
    ...extra,
  });
  res.end(res.req.method === "HEAD" ? undefined : body);
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
  if (kind !== undefined && !KINDS.includes(kind)) throw new ValidationError(`kind expects ${KINDS.join(" or ")}; received ${JSON.stringify(kind)}`, { field: "kind" });
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

/** A finished run's recorded metric values, their intervals pending; undefined when it recorded none. */
function summaryLines(run: RunSummary): MetricLine[] | undefined {
  const recorded = (run.summary as { metrics?: unknown }).metrics;
  if (recorded === null || typeof recorded !== "object" || !Object.values(recorded).every((v) => typeof v === "number")) return undefined;
  const lines = Object.entries(recorded as Record<string, number>).map(([name, value]) => ({ name, value, ci: undefined, method: "…", pending: true }));
  return lines.length === 0 ? undefined : lines;
}

/** A run's recorded metric values (`typelm compare` takes them from its summary); undefined when it recorded none. */
function recordedMetrics(run: RunSummary): Record<string, number> | undefined {
  const recorded = (run.summary as { metrics?: unknown }).metrics;
  return recorded !== null && typeof recorded === "object" && Object.values(recorded).every((v) => typeof v === "number")
    ? recorded as Record<string, number> : undefined;
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



/** `typelm view`: starts the viewer, prints its address, and serves until interrupted (Ctrl-C). */
export async function serveCommand(options: ViewerOptions, io: { stdout: (text: string) => void; stderr: (text: string) => void }): Promise<number> {
  const viewer = await startViewer(options);
  // Listening for Ctrl-C before the address is announced: whoever reads it may stop the server at once.
  const stopped = new Promise<void>((done) => {
    const stop = () => { process.off("SIGINT", stop); process.off("SIGTERM", stop); done(); };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  io.stderr(`Serving ${viewer.store} read-only; Ctrl-C stops.\n`);
  io.stdout(`typelm view: ${viewer.url}\n`);
  await stopped;
  await viewer.close();
  return 0;
}

