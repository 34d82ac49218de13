// The viewer's reads of a lab store file, over its own read-only connection: nothing here can write to
// the file, and no migration is applied (a store written by an older typelm is shown as it is).
// better-sqlite3 reads synchronously; the quick reads (indexed) run here and return settled promises
// (`ViewSource`), the slow ones (a filter over every row of a run) on the query thread (query-thread.ts),
// so the server answers other pages meanwhile. A stored value that is not valid JSON is read as missing.
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Database } from "better-sqlite3";
import { ValidationError } from "../../errors.js";
import { storeError } from "../../store/db.js";
import { storedCalls } from "../../store/stored-calls.js";
import { sqliteMedia } from "../../store/media/tables.js";
import type { MediaBlob } from "../../store/media/refs.js";
import { QueryThread } from "../query-thread.js";
import { annotationFrom, annotationsSql, type Annotation, type AnnotationRaw } from "../../store/annotations/annotations.js";
import { runFeedbackSql, type RowFeedback } from "../review/feedback.js";
import { sqliteLineUpSql, type LineUpRow } from "../matrix/sql.js";
import { inOrderLineUp, sqliteInOrderSql, type InOrderRow } from "../matrix/in-order.js";
import type { ModelCall } from "../../lm/usage-scope.js";
import type { EvaluationRow, EvaluationRun, LabRun, RunSummary, Trial } from "../../store/records.js";
import {
  ColumnsBuilder, LISTED_COLUMNS, listedColumn, onlyOne, parse, QUERY_TIMEOUT_MS, QueryTimeout, row, scoreRow, summary, trial, version,
  type ColumnOptions, type RegistryName, type ScoreColumns, type RowQuery, type RowRaw, type RunQuery, type RunRaw, type TrialRaw, type VersionRaw, type ViewRow, type ViewSource, type ViewVersion,
} from "./source.js";

export type { RowQuery, RunQuery, ViewRow, ViewSource, ViewVersion } from "./source.js";

const requireFromHere = createRequire(import.meta.url);

/** A row's columns as lists and pages read them (not its recorded calls, which only its own page shows). */
const ROW = "rowid AS seq, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost";
/** A row's columns as a page of rows reads them: long values cut (see `LISTED_CHARS`). */
const LISTED = `rowid AS seq, idx, example_id, ${LISTED_COLUMNS.map((c) => listedColumn(c, (col, n) => `substr(${col}, 1, ${n})`)).join(", ")}, scores_json, duration_ms, input_tokens, output_tokens, cost`;

/** How a query reads a JSON text column: as it is, or as NULL when it is not valid JSON (see `#reading`). */
type Json = (column: string) => string;
const PLAIN: Json = (column) => column;
const SAFE: Json = (column) => `(CASE WHEN json_valid(${column}) THEN ${column} END)`;

/** Whether a read failed on stored text that is not valid JSON (SQLite's "malformed JSON"). */
function malformed(error: unknown): boolean {
  for (let e = error as { message?: unknown; cause?: unknown } | undefined, depth = 0; e != null && depth < 3; e = e.cause as typeof e, depth++) {
    if (typeof e.message === "string" && /malformed JSON/i.test(e.message)) return true;
  }
  return false;
}

/** A read-only view of the lab store file at `path`. */
export class SqliteViewSource implements ViewSource {
  readonly path: string;
  readonly #db: Database;
  /** Where the slow reads run (a worker thread with its own connection). */
  readonly #thread: QueryThread;
  /** A stored value did not parse: JSON is read through `SAFE` from then on. */
  #safe = false;

  /** `timeoutMs`: how long one slow read may take (default `QUERY_TIMEOUT_MS`). */
  constructor(path: string, options: { timeoutMs?: number } = {}) {
    this.path = resolve(path);
    this.#thread = new QueryThread(this.path, options.timeoutMs ?? QUERY_TIMEOUT_MS);
    if (!existsSync(this.path)) {
      throw new ValidationError(`no lab store at ${this.path}; run an experiment first (typelm run, typelm reproduce) or give one with --store`, { field: "store" });
    }
    const BetterSqlite3 = requireFromHere("better-sqlite3") as typeof import("better-sqlite3");
    try {
      this.#db = new BetterSqlite3(this.path, { readonly: true, fileMustExist: true });
      this.#db.pragma("busy_timeout = 5000");
      this.#db.prepare("SELECT 1 FROM lab_runs LIMIT 1").get();
    } catch (error) {
      throw storeError(this.path, "open", error);
    }
  }

  /** Starts the query thread now rather than at the first slow read (see `QueryThread.start`). */
  startThread(): void {
    this.#thread.start();
  }

  async close(): Promise<void> {
    await this.#thread.close();
    this.#db.close();
  }

  #all<T>(sql: string, params: Record<string, unknown> | unknown[] = {}): T[] {
    try {
      return this.#db.prepare(sql).all(params) as T[];
    } catch (error) {
      throw storeError(this.path, "read", error);
    }
  }

  #get<T>(sql: string, params: Record<string, unknown> | unknown[] = {}): T | undefined {
    try {
      return this.#db.prepare(sql).get(params) as T | undefined;
    } catch (error) {
      throw storeError(this.path, "read", error);
    }
  }

  /**
   * A read of stored JSON: with the columns as they are, and again reading a value that is not valid
   * JSON (changed outside typelm) as missing, as PostgreSQL's reads do, when one made it fail; the
   * file is read that way from then on.
   */
  async #reading<T>(read: (json: Json) => T | Promise<T>): Promise<T> {
    if (this.#safe) return read(SAFE);
    try {
      return await read(PLAIN);
    } catch (error) {
      if (!malformed(error)) throw error;
      this.#safe = true;
      return read(SAFE);
    }
  }

  #hasTable(name: string): boolean {
    return this.#get("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?", [name]) !== undefined;
  }

  /** The runs, newest first, narrowed by `query`, with how many match in all. */
  async runs(query: RunQuery): Promise<{ runs: RunSummary[]; total: number }> {
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    if (query.kind) { where.push("kind = @kind"); params["kind"] = query.kind; }
    if (query.status) { where.push("status = @status"); params["status"] = query.status; }
    if (query.name) { where.push("instr(lower(name), lower(@name)) > 0"); params["name"] = query.name; }
    if (query.model) {
      where.push("EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(config_json) THEN config_json ELSE '{}' END, '$.models') m WHERE instr(lower(m.value), lower(@model)) > 0)");
      params["model"] = query.model;
    }
    const filter = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
    const total = this.#get<{ n: number }>(`SELECT count(*) AS n FROM lab_runs${filter}`, params)!.n;
    const raws = this.#all<RunRaw>(`SELECT * FROM lab_runs${filter} ORDER BY started_at DESC, seq DESC LIMIT @limit OFFSET @offset`, { ...params, limit: query.limit, offset: query.offset });
    return { runs: raws.map(summary), total };
  }

  /** A run's summary (no rows or trials), by its id or the start of it; undefined when none or several match. */
  async run(given: string): Promise<(RunSummary & { bestTrial: number | null }) | undefined> {
    return this.#run(given);
  }

  #run(given: string): (RunSummary & { bestTrial: number | null }) | undefined {
    const raw = this.#get<RunRaw>("SELECT * FROM lab_runs WHERE id = ?", [given]) ??
      onlyOne(this.#all<RunRaw>("SELECT * FROM lab_runs WHERE substr(id, 1, ?) = ? LIMIT 2", [given.length, given]));
    return raw === undefined ? undefined : { ...summary(raw), bestTrial: raw.best_trial };
  }

  /** How many rows a run has recorded, and how many of them failed (two index counts). */
  async rowCounts(runId: string): Promise<{ rows: number; failed: number }> {
    const rows = this.#get<{ n: number }>("SELECT count(*) AS n FROM lab_rows WHERE run_id = ?", [runId])!.n;
    const failed = this.#get<{ n: number }>("SELECT count(*) AS n FROM lab_rows WHERE run_id = ? AND error IS NOT NULL", [runId])!.n;
    return { rows, failed };
  }

  /**
   * For one metric of a run: the rows, the sum of their scores (a missing score counts 0) and how
   * many scores are neither 0 nor 1; in SQL, so a share's interval needs no row in memory.
   */
  async scoreCounts(runId: string, metric: string): Promise<{ n: number; sum: number; other: number }> {
    const c = await this.#reading((json) => this.#get<{ n: number; sum: number | null; other: number | null }>(
      // Each row's score read once (LIMIT -1 keeps the subquery from being flattened into two reads).
      `SELECT count(*) AS n, sum(s) AS sum, sum(s NOT IN (0, 1)) AS other
       FROM (SELECT coalesce(json_extract(${json("scores_json")}, @path), 0) AS s FROM lab_rows WHERE run_id = @run LIMIT -1)`,
      { run: runId, path: `$.${JSON.stringify(metric)}` },
    )!);
    return { n: c.n, sum: c.sum ?? 0, other: c.other ?? 0 };
  }

  /**
   * One page of a run's rows, narrowed and sorted by `query`, with how many match in all. A query that
   * visits every row of the run (text, label or score filters, sorting by score or duration) runs on
   * the query thread, so other pages are answered meanwhile; it is stopped when `query.signal` is
   * aborted or past the time limit (`QueryTimeout`).
   */
  async rows(runId: string, query: RowQuery): Promise<{ rows: ViewRow[]; total: number }> {
    const slow = (query.text !== undefined && query.text !== "") || (query.label !== undefined && query.label !== "") ||
      query.maxScore !== undefined || (query.after === undefined && (query.sort === "score" || query.sort === "duration"));
    return this.#reading(async (json) => {
      const sql = rowsSql(runId, query, json, slow, this.#hasColumn("details_json"));
      if (!slow) return { rows: this.#all<RowRaw>(sql.page, sql.pageParams).map(row), total: this.#get<{ n: number }>(sql.count, sql.params)!.n };
      try {
        const [counted] = await this.#thread.read<{ n: number }>(sql.count, sql.params, true, query.signal);
        const raws = await this.#thread.read<RowRaw>(sql.page, sql.pageParams, false, query.signal);
        return { rows: raws.map(row), total: counted!.n };
      } catch (error) {
        throw error instanceof QueryTimeout || query.signal?.aborted ? error : storeError(this.path, "read", error);
      }
    });
  }

  /** The position of the last row written for a run (0 when none): a live page polls for rows after it. */
  async lastSeq(runId: string): Promise<number> {
    return this.#get<{ seq: number | null }>("SELECT max(rowid) AS seq FROM lab_rows WHERE run_id = ?", [runId])!.seq ?? 0;
  }

  /** One row of a run by its index. */
  async row(runId: string, index: number): Promise<ViewRow | undefined> {
    const raw = this.#get<RowRaw>(`SELECT ${ROW} FROM lab_rows WHERE run_id = ? AND idx = ?`, [runId, index]);
    if (raw === undefined) return undefined;
    const shown = row(raw);
    // What metrics said beyond their scores (a judge's verdict and rationale): a store written before
    // they were kept has no such column.
    if (this.#hasColumn("details_json")) {
      const d = this.#get<{ details_json: string | null }>("SELECT details_json FROM lab_rows WHERE run_id = ? AND idx = ?", [runId, index]);
      if (d?.details_json != null) shown.details = parse(d.details_json, {}) as Record<string, Record<string, unknown>>;
    }
    return shown;
  }

  #hasColumn(name: string): boolean {
    return this.#all<{ name: string }>("SELECT name FROM pragma_table_info('lab_rows')").some((c) => c.name === name);
  }

  /** One metric's score of every row of a run, in index order (a missing score counts 0). */
  async scores(runId: string, metric: string): Promise<Float64Array> {
    // Streamed into one typed array: no row object, no array of numbers on the way.
    const rows = this.#get<{ n: number }>("SELECT count(*) AS n FROM lab_rows WHERE run_id = ?", [runId])!.n;
    return this.#reading((json) => {
      let out = new Float64Array(rows);
      let n = 0;
      try {
        const read = this.#db.prepare(`SELECT json_extract(${json("scores_json")}, @path) FROM lab_rows WHERE run_id = @run ORDER BY idx`).pluck();
        for (const s of read.iterate({ run: runId, path: `$.${JSON.stringify(metric)}` }) as Iterable<unknown>) {
          if (n === out.length) { const larger = new Float64Array(Math.max(16, out.length * 2)); larger.set(out); out = larger; }
          out[n++] = typeof s === "number" ? s : 0;
        }
      } catch (error) {
        throw storeError(this.path, "read", error);
      }
      return n === out.length ? out : out.slice(0, n);
    });
  }

  /** A stored media value by its sha256, or undefined. */
  async media(sha256: string): Promise<MediaBlob | undefined> {
    try {
      return sqliteMedia(this.#db, sha256);
    } catch (error) {
      throw storeError(this.path, "read", error);
    }
  }

  /**
   * The model calls recorded with one example, in order; null when the store cannot hold them (written
   * by a typelm that did not record calls).
   */
  async calls(runId: string, index: number): Promise<ModelCall[] | null> {
    const hasCalls = this.#all<{ name: string }>("SELECT name FROM pragma_table_info('lab_rows')").some((c) => c.name === "calls_json");
    if (!hasCalls) return null;
    const raw = this.#get<{ calls_json: string | null }>("SELECT calls_json FROM lab_rows WHERE run_id = ? AND idx = ?", [runId, index]);
    if (raw?.calls_json == null) return [];
    try {
      return storedCalls(this.#db, raw.calls_json);
    } catch (error) {
      throw storeError(this.path, "read", error);
    }
  }

  /**
   * The values the rows' expected fields take (suggestions for the label filter), the most frequent
   * first, at most `limit`; read from the first 2,000 rows, so a large run costs no more.
   */
  async labels(runId: string, limit = 30): Promise<string[]> {
    return this.#reading((json) => this.#all<{ v: string }>(
      `SELECT CAST(e.value AS TEXT) AS v, count(*) AS n FROM (SELECT ${json("expected_json")} AS expected_json FROM lab_rows WHERE run_id = ? ORDER BY idx LIMIT 2000) r,
       json_each(r.expected_json) e WHERE e.type IN ('text', 'integer', 'true', 'false') AND length(CAST(e.value AS TEXT)) <= 60
       GROUP BY v ORDER BY n DESC, v LIMIT ?`, [runId, limit],
    ).map((r) => r.v));
  }

  /** A whole run with its rows or trials (for the metrics' intervals and comparisons). */
  async fullRun(runId: string): Promise<LabRun | undefined> {
    const base = this.#run(runId);
    if (base === undefined) return undefined;
    const { bestTrial, ...rest } = base;
    if (rest.kind === "evaluation") {
      const rows = this.#all<RowRaw>(`SELECT ${ROW} FROM lab_rows WHERE run_id = ? ORDER BY idx`, [base.id]).map(row);
      return { ...rest, kind: "evaluation", rows } satisfies EvaluationRun;
    }
    return { ...rest, kind: "optimization", trials: this.#trials(base.id), bestTrial };
  }

  /**
   * A run's rows with only what a comparison of mean metrics reads (index, id, scores, error), by
   * index: a large run compared costs its scores, not its texts.
   */
  async scoreRows(runId: string): Promise<EvaluationRow[]> {
    return this.#all<{ idx: number; example_id: string | null; scores_json: string; error: string | null }>(
      "SELECT idx, example_id, scores_json, error FROM lab_rows WHERE run_id = ? ORDER BY idx", [runId],
    ).map(scoreRow);
  }

  async scoreColumns(runId: string, metrics: readonly string[], options: ColumnOptions = {}): Promise<ScoreColumns> {
    const params: Record<string, unknown> = { run: runId };
    metrics.forEach((m, i) => { params[`p${i}`] = `$.${JSON.stringify(m)}`; });
    const fields = options.fields === true;
    const rows = this.#get<{ n: number }>("SELECT count(*) AS n FROM lab_rows WHERE run_id = ?", [runId])!.n;
    return this.#reading((json) => {
      const columns = metrics.map((_, i) => `, json_extract(${json("scores_json")}, @p${i})`).join("");
      const columnsOut = new ColumnsBuilder(metrics, fields, rows, options.sameIdsAs);
      const m = metrics.length;
      // Row by row into typed columns (a large run's rows are never all objects at once).
      try {
        const sql = `SELECT idx, example_id${fields ? ", expected_json, prediction_json, error" : ""}${columns} FROM lab_rows WHERE run_id = @run ORDER BY idx`;
        const first = fields ? 5 : 2;
        for (const r of this.#db.prepare(sql).raw().iterate(params) as Iterable<unknown[]>) {
          const scores = r.slice(first, first + m);
          columnsOut.add(r[0] as number, r[1] as string | null, scores, fields
            ? { expected: parse(r[2] as string, {}), prediction: r[3] === null ? null : parse(r[3] as string, {}), error: r[4] as string | null }
            : undefined);
        }
      } catch (error) {
        throw storeError(this.path, "read", error);
      }
      return columnsOut.done();
    });
  }

  /** The rows of a run with these ids (`#<index>` for a row without one), in one pass over the run. */
  async rowsById(runId: string, ids: readonly string[]): Promise<ViewRow[]> {
    if (ids.length === 0) return [];
    const indices = ids.filter((id) => /^#\d+$/.test(id)).map((id) => Number(id.slice(1)));
    return this.#all<RowRaw>(
      `SELECT ${LISTED} FROM lab_rows WHERE run_id = @run AND (example_id IN (SELECT value FROM json_each(@ids))
       OR (example_id IS NULL AND idx IN (SELECT value FROM json_each(@indices)))) ORDER BY idx`,
      { run: runId, ids: JSON.stringify(ids), indices: JSON.stringify(indices) },
    ).map(row);
  }

  /** Several runs' rows grouped by example id (a matrix's line-up), read on the query thread. */
  async lineUp(runIds: readonly string[], metrics: readonly string[], signal?: AbortSignal): Promise<LineUpRow[]> {
    const params: Record<string, unknown> = { runs: JSON.stringify(runIds), first: runIds[0], k: runIds.length };
    metrics.forEach((m, i) => { params[`p${i}`] = `$.${JSON.stringify(m)}`; });
    runIds.forEach((id, j) => { params[`r${j}`] = id; });
    return this.#reading(async (json) => {
      try {
        // The usual runs (one test set in the same order) are joined by index; others are grouped by example id.
        const counts = runIds.map((id) => this.#get<{ n: number }>("SELECT count(*) AS n FROM lab_rows WHERE run_id = ?", [id])!.n);
        if (counts.every((n) => n === counts[0])) {
          const joined = await this.#thread.read<InOrderRow>(sqliteInOrderSql(runIds.length, metrics.length, json, (idx) => `typelm_live(${idx})`), params, false, signal);
          const inOrder = inOrderLineUp(joined, counts);
          if (inOrder !== undefined) return inOrder;
        }
        return await this.#thread.read<LineUpRow>(sqliteLineUpSql(runIds.length, metrics.length, json, "typelm_live(idx)"), params, false, signal);
      } catch (error) {
        throw error instanceof QueryTimeout || signal?.aborted ? error : storeError(this.path, "read", error);
      }
    });
  }

  /** The rows of a run at these indices, in index order. */
  async rowsByIndex(runId: string, indices: readonly number[]): Promise<ViewRow[]> {
    return this.#all<RowRaw>(`SELECT ${LISTED} FROM lab_rows WHERE run_id = @run AND idx IN (SELECT value FROM json_each(@indices)) ORDER BY idx`,
      { run: runId, indices: JSON.stringify(indices) }).map(row);
  }

  /** The trials of an optimization, by index. */
  async trials(runId: string): Promise<Trial[]> {
    return this.#trials(runId);
  }

  #trials(runId: string): Trial[] {
    return this.#all<TrialRaw>("SELECT * FROM lab_trials WHERE run_id = ? ORDER BY idx", [runId]).map(trial);
  }

  /** Each registry name with its number of versions and its latest version's score. */
  async annotations(runId: string, all = false): Promise<Annotation[]> {
    if (!this.#hasTable("annotations")) return [];
    return this.#all<AnnotationRaw>(annotationsSql(!all, "?"), [runId]).map(annotationFrom);
  }

  async feedback(runId: string): Promise<RowFeedback[]> {
    return this.#hasTable("lab_feedback") ? this.#all<RowFeedback>(runFeedbackSql("?"), [runId]) : [];
  }

  async registryNames(): Promise<RegistryName[]> {
    if (!this.#hasTable("registry_versions")) return [];
    return this.#all(
      `SELECT v.name AS name, c.n AS versions, v.version AS latest, v.score AS score, v.created_at AS createdAt
       FROM registry_versions v JOIN (SELECT name, count(*) AS n, max(version) AS top FROM registry_versions GROUP BY name) c
       ON c.name = v.name AND c.top = v.version ORDER BY v.name`,
    );
  }

  /** Every stored version of `name`, oldest first. */
  async versions(name: string): Promise<ViewVersion[]> {
    if (!this.#hasTable("registry_versions")) return [];
    return this.#all<VersionRaw>("SELECT * FROM registry_versions WHERE name = ? ORDER BY version", [name]).map(version);
  }
}

/**
 * The SQL of one page of a run's rows (for the query thread with `onThread`) (`page`, `pageParams`) and of
 * how many match (`count`, `params`); with `details` (the store keeps them), text search covers the judges' rationales.
 */
function rowsSql(runId: string, query: RowQuery, json: Json, onThread: boolean, details: boolean): { count: string; params: Record<string, unknown>; page: string; pageParams: Record<string, unknown> } {
  // On the query thread each row visited calls typelm_live, which ends the query once it is to stop.
  const where = onThread ? ["run_id = @run", "typelm_live(idx)"] : ["run_id = @run"];
  const params: Record<string, unknown> = { run: runId };
  if (query.failed) where.push("error IS NOT NULL");
  if (query.label !== undefined && query.label !== "") {
    where.push(`EXISTS (SELECT 1 FROM json_each(${json("expected_json")}) e WHERE CAST(e.value AS TEXT) = @label)`);
    params["label"] = query.label;
  }
  if (query.text !== undefined && query.text !== "") {
    where.push("(instr(lower(inputs_json), lower(@text)) > 0 OR instr(lower(expected_json), lower(@text)) > 0 OR " +
      "instr(lower(coalesce(prediction_json, '')), lower(@text)) > 0 OR instr(lower(coalesce(error, '')), lower(@text)) > 0 OR " +
      "instr(lower(coalesce(example_id, '')), lower(@text)) > 0" +
      (details ? ` OR EXISTS (SELECT 1 FROM json_each(${json("details_json")}) d WHERE d.type = 'object' AND instr(lower(coalesce(json_extract(d.value, '$.rationale'), '')), lower(@text)) > 0)` : "") + ")");
    params["text"] = query.text;
  }
  const scorePath = query.metric === undefined ? undefined : `$.${JSON.stringify(query.metric)}`;
  const score = `json_extract(${json("scores_json")}, @scorePath)`;
  if (query.maxScore !== undefined && scorePath !== undefined) {
    where.push(`${score} <= @maxScore`);
    params["maxScore"] = query.maxScore;
  }
  if (scorePath !== undefined) params["scorePath"] = scorePath;
  const count = `SELECT count(*) AS n FROM lab_rows WHERE ${where.join(" AND ")}`;
  const pageParams: Record<string, unknown> = { ...params, limit: query.limit, offset: query.offset };
  if (query.after !== undefined) { where.push("rowid > @after"); pageParams["after"] = query.after; }
  const direction = query.descending ? "DESC" : "ASC";
  const order = query.after !== undefined ? "rowid ASC"
    : query.sort === "score" && scorePath !== undefined ? `${score} ${direction}, idx`
      : query.sort === "duration" ? `duration_ms ${direction}, idx` : `idx ${direction}`;
  return { count, params, page: `SELECT ${LISTED} FROM lab_rows WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT @limit OFFSET @offset`, pageParams };
}
