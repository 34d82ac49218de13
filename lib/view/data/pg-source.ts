// The viewer's reads of a team's lab on PostgreSQL: the same answers as the file's (queries.ts), with
// filters, sorting, paging and counts in SQL. Its connections are read-only sessions
// (default_transaction_read_only, set when each connects), and it applies no migration: a lab written
// by an older typelm is shown as it is. Stored JSON is kept as text; the queries read it with
// `::jsonb`, and a value that does not parse (changed outside typelm) is read as missing instead of
// failing the page (a query that meets one is asked again through a temporary function that returns
// NULL for it).
import type { Pool, PoolClient } from "pg";
import { ValidationError } from "../../errors.js";
import { shownUrl } from "../../instrument/redact.js";
import type { ModelCall } from "../../lm/usage-scope.js";
import { requireOptional } from "../../optional.js";
import { postgresError } from "../../store/pg.js";
import type { EvaluationRow, EvaluationRun, LabRun, RunSummary, Trial } from "../../store/records.js";
import { callTextHashes } from "../../store/call-texts.js";
import { decodeCalls } from "../../store/stored-calls.js";
import { annotationFrom, annotationsSql, type Annotation, type AnnotationRaw } from "../../store/annotations/annotations.js";
import { runFeedbackSql, type RowFeedback } from "../review/feedback.js";
import { blobFrom, type RawMedia } from "../../store/media/tables.js";
import type { MediaBlob } from "../../store/media/refs.js";
import { postgresLineUpSql, type LineUpRow } from "../matrix/sql.js";
import {
  ColumnsBuilder, LISTED_COLUMNS, listedColumn, onlyOne, QUERY_TIMEOUT_MS, QueryTimeout, parse, row, scoreRow, summary, trial, version,
  type ColumnOptions, type RegistryName, type ScoreColumns, type RowQuery, type RowRaw, type RunQuery, type RunRaw, type TrialRaw, type VersionRaw, type ViewRow, type ViewSource, type ViewVersion,
} from "./source.js";

/** A row's columns as lists and pages read them; `seq` (the write order) is the column or, in a lab without it, the index. */
const rowColumns = (seq: string) =>
  `${seq} AS seq, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost`;

/** A row's columns as a page of rows reads them: long values cut (see `LISTED_CHARS`). */
const listedColumns = (seq: string) =>
  `${seq} AS seq, idx, example_id, ${LISTED_COLUMNS.map((c) => listedColumn(c, (col, n) => `left(${col}, ${n})`)).join(", ")}, scores_json, duration_ms, input_tokens, output_tokens, cost`;

/** How a query reads a JSON text column as jsonb: a plain cast, or one that gives NULL for text that does not parse. */
type Json = (column: string) => string;
const PLAIN: Json = (column) => `(${column})::jsonb`;
const SAFE: Json = (column) => `pg_temp.typelm_view_json(${column})`;
const SAFE_FUNCTION = `CREATE OR REPLACE FUNCTION pg_temp.typelm_view_json(t text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RETURN t::jsonb; EXCEPTION WHEN others THEN RETURN NULL; END $$`;

/** One metric's score of a row (its JSON number; NULL when missing or not a number), with the JSON read once per row. */
const scoreOf = (json: Json, metricParam: string) =>
  `(SELECT CASE WHEN jsonb_typeof(v) = 'number' THEN v::float8 END FROM (SELECT ${json("scores_json")} -> ${metricParam} AS v OFFSET 0) s)`;

/**
 * A pool of read-only sessions on the database at `url`: every transaction on them is read-only
 * (`default_transaction_read_only`, given when each connects), so a write fails with SQLSTATE 25006.
 * Loads `pg` (an optional peer dependency). The viewer reads through it; the tests try to write through it.
 * `limits`: how many sessions (default 4), and how long one statement may run (PostgreSQL's `statement_timeout`).
 */
export function readOnlyPool(url: string, limits: { max?: number; statementTimeoutMs?: number } = {}): Pool {
  const pg = requireOptional<typeof import("pg")>("pg", "The run viewer on a PostgreSQL lab (typelm view --store postgres://...)");
  const PoolClass = pg.Pool ?? (pg as unknown as { default: typeof import("pg") }).default.Pool;
  const pool = new PoolClass({
    connectionString: url, max: limits.max ?? 4, allowExitOnIdle: true, options: "-c default_transaction_read_only=on", application_name: "typelm view",
    // Each statement's time is bounded by the server (it cancels one past it: SQLSTATE 57014).
    ...(limits.statementTimeoutMs === undefined ? {} : { statement_timeout: limits.statementTimeoutMs }),
  });
  // An idle client losing its connection (the server restarted) is an event, not a crash.
  pool.on("error", () => undefined);
  // Set again as the session's first statement: `options=` in the URL replaces the startup options
  // above (a `-c default_transaction_read_only=off` there would leave the session writable). A
  // session where it cannot be set is closed, so no query runs on it.
  pool.on("connect", (client) => {
    client.query("SET SESSION default_transaction_read_only = on").catch(() => void client.end().catch(() => undefined));
  });
  return pool;
}

/** A read-only view of a team's lab on PostgreSQL. */
export class PostgresViewSource implements ViewSource {
  /** The database without its credentials. */
  readonly path: string;
  readonly #url: string;
  readonly #pool: Pool;
  /** The sessions of the slow reads (filters over every row of a run): a few, so the others stay free for the rest. */
  readonly #slowPool: Pool;
  readonly #timeoutMs: number;
  /** Whether lab_rows has `seq` (the write order; a lab migrated by an older typelm has not). */
  #hasSeq = false;
  /** The sessions that have the temporary function SAFE uses. */
  readonly #safe = new WeakSet<PoolClient>();

  private constructor(url: string, timeoutMs: number) {
    this.#url = url;
    this.path = shownUrl(url);
    this.#timeoutMs = timeoutMs;
    this.#pool = readOnlyPool(url, { statementTimeoutMs: timeoutMs });
    this.#slowPool = readOnlyPool(url, { max: 2, statementTimeoutMs: timeoutMs });
  }

  /**
   * Connects to the lab at `url` and checks that it holds one (a database without lab_runs is refused).
   * `timeoutMs`: how long one statement may run before PostgreSQL stops it (default `QUERY_TIMEOUT_MS`).
   */
  static async open(url: string, options: { timeoutMs?: number } = {}): Promise<PostgresViewSource> {
    const source = new PostgresViewSource(url, options.timeoutMs ?? QUERY_TIMEOUT_MS);
    try {
      const columns = await source.#columns("lab_rows");
      if (!(await source.#hasTable("lab_runs")) || columns.size === 0) {
        throw new ValidationError(`no lab at ${source.path}: the database has no lab_runs table; record a run there first (c.lab = { url } or TYPELM_LAB_URL) or copy a lab into it (typelm lab copy)`, { field: "store" });
      }
      source.#hasSeq = columns.has("seq");
    } catch (error) {
      await source.close();
      throw error instanceof ValidationError ? error : postgresError(url, "open", error);
    }
    return source;
  }

  async close(): Promise<void> {
    await Promise.all([this.#pool.end().catch(() => undefined), this.#slowPool.end().catch(() => undefined)]);
  }

  /**
   * One statement on a read-only session; `slow` on the sessions of slow reads, stopped on the server
   * (pg_cancel_backend) when `signal` is aborted. One past the time limit fails with `QueryTimeout`.
   */
  async #query<T>(sql: string, params: unknown[] = [], safe = false, slow?: { signal?: AbortSignal }): Promise<T[]> {
    let client: PoolClient;
    slow?.signal?.throwIfAborted();
    try {
      client = await (slow === undefined ? this.#pool : this.#slowPool).connect();
    } catch (error) {
      throw postgresError(this.#url, "read", error);
    }
    const pid = (client as unknown as { processID?: number }).processID;
    const cancel = () => { if (pid !== undefined) this.#pool.query("SELECT pg_cancel_backend($1)", [pid]).catch(() => undefined); };
    slow?.signal?.addEventListener("abort", cancel, { once: true });
    try {
      if (safe && !this.#safe.has(client)) {
        // A temporary function (this session's only, gone when it closes), defined in a transaction of its own.
        try {
          await client.query(`BEGIN READ WRITE; ${SAFE_FUNCTION}; COMMIT`);
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw new ValidationError(
            `a value stored in ${this.path} is not valid JSON (changed outside typelm), and the viewer could not define the temporary function that skips such values: ${error instanceof Error ? error.message : String(error)}`,
            { field: "store", cause: error },
          );
        }
        this.#safe.add(client);
      }
      slow?.signal?.throwIfAborted();
      return (await client.query(sql, params)).rows as T[];
    } catch (error) {
      if (slow?.signal?.aborted) throw error;
      if ((error as { code?: unknown }).code === "57014") throw new QueryTimeout(this.#timeoutMs);
      throw error instanceof ValidationError ? error : postgresError(this.#url, "read", error);
    } finally {
      slow?.signal?.removeEventListener("abort", cancel);
      client.release();
    }
  }

  /** A query that reads stored JSON: with plain casts, and again with the safe one when a stored value does not parse. */
  async #json<T>(build: (json: Json) => string, params: unknown[], slow?: { signal?: AbortSignal }): Promise<T[]> {
    try {
      return await this.#query<T>(build(PLAIN), params, false, slow);
    } catch (error) {
      if (!badJson(error)) throw error;
      return await this.#query<T>(build(SAFE), params, true, slow);
    }
  }

  async #one<T>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    return (await this.#query<T>(sql, params))[0];
  }

  async #hasTable(name: string): Promise<boolean> {
    return (await this.#one<{ ok: boolean }>("SELECT to_regclass($1) IS NOT NULL AS ok", [name]))!.ok;
  }

  async #columns(table: string): Promise<Set<string>> {
    const found = await this.#query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1", [table],
    );
    return new Set(found.map((c) => c.column_name));
  }

  get #seq(): string {
    return this.#hasSeq ? "seq" : "(idx + 1)";
  }

  async runs(query: RunQuery): Promise<{ runs: RunSummary[]; total: number }> {
    const params: unknown[] = [];
    const build = (json: Json) => {
      params.length = 0;
      const where: string[] = [];
      if (query.kind) { params.push(query.kind); where.push(`kind = $${params.length}`); }
      if (query.status) { params.push(query.status); where.push(`status = $${params.length}`); }
      if (query.name) { params.push(query.name); where.push(`strpos(lower(name), lower($${params.length})) > 0`); }
      if (query.model) {
        params.push(query.model);
        where.push(`EXISTS (SELECT 1 FROM (SELECT ${json("config_json")} -> 'models' AS m OFFSET 0) x,
          jsonb_array_elements_text(CASE jsonb_typeof(x.m) WHEN 'array' THEN x.m WHEN 'string' THEN jsonb_build_array(x.m) ELSE '[]'::jsonb END) mm(value)
          WHERE strpos(lower(mm.value), lower($${params.length})) > 0)`);
      }
      return where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
    };
    const [counted] = await this.#json<{ n: number }>((json) => `SELECT count(*)::int AS n FROM lab_runs${build(json)}`, params);
    const raws = await this.#json<RunRaw>((json) => {
      const filter = build(json);
      params.push(query.limit, query.offset);
      return `SELECT * FROM lab_runs${filter} ORDER BY started_at DESC, seq DESC LIMIT $${params.length - 1} OFFSET $${params.length}`;
    }, params);
    return { runs: raws.map(summary), total: counted!.n };
  }

  async run(given: string): Promise<(RunSummary & { bestTrial: number | null }) | undefined> {
    const raw = (await this.#one<RunRaw>("SELECT * FROM lab_runs WHERE id = $1", [given])) ??
      onlyOne(await this.#query<RunRaw>("SELECT * FROM lab_runs WHERE left(id, $1) = $2 LIMIT 2", [given.length, given]));
    return raw === undefined ? undefined : { ...summary(raw), bestTrial: raw.best_trial };
  }

  async rowCounts(runId: string): Promise<{ rows: number; failed: number }> {
    return (await this.#one<{ rows: number; failed: number }>(
      "SELECT count(*)::int AS rows, (count(*) FILTER (WHERE error IS NOT NULL))::int AS failed FROM lab_rows WHERE run_id = $1", [runId],
    ))!;
  }

  async scoreCounts(runId: string, metric: string): Promise<{ n: number; sum: number; other: number }> {
    const [c] = await this.#json<{ n: number; sum: number | null; other: number }>((json) =>
      `SELECT count(*)::int AS n, sum(coalesce(s, 0)) AS sum, (count(*) FILTER (WHERE coalesce(s, 0) NOT IN (0, 1)))::int AS other
       FROM (SELECT ${scoreOf(json, "$2")} AS s FROM lab_rows WHERE run_id = $1) r`, [runId, metric]);
    return { n: c!.n, sum: c!.sum ?? 0, other: c!.other };
  }

  async rows(runId: string, query: RowQuery): Promise<{ rows: ViewRow[]; total: number }> {
    const params: unknown[] = [];
    const byScore = query.metric !== undefined && (query.maxScore !== undefined || (query.sort === "score" && query.after === undefined));
    const details = query.text !== undefined && query.text !== "" && (await this.#columns("lab_rows")).has("details_json");
    const build = (json: Json, page: boolean) => {
      params.length = 0;
      params.push(runId);
      const where = ["run_id = $1"];
      let from = "lab_rows";
      if (byScore) {
        params.push(query.metric);
        from = `lab_rows CROSS JOIN LATERAL (SELECT ${scoreOf(json, `$${params.length}`)} AS score) sc`;
      }
      if (query.failed) where.push("error IS NOT NULL");
      if (query.label !== undefined && query.label !== "") {
        params.push(query.label);
        where.push(`EXISTS (SELECT 1 FROM (SELECT ${json("expected_json")} AS e OFFSET 0) x,
          jsonb_each_text(CASE WHEN jsonb_typeof(x.e) = 'object' THEN x.e ELSE '{}'::jsonb END) kv WHERE kv.value = $${params.length})`);
      }
      if (query.text !== undefined && query.text !== "") {
        params.push(query.text);
        const t = `lower($${params.length})`;
        // A judge's rationale too (`details_json`, where the lab keeps it): the text of each metric's `rationale`.
        const rationale = details ? ` OR EXISTS (SELECT 1 FROM (SELECT ${json("details_json")} AS d OFFSET 0) x, ` +
          `jsonb_each(CASE WHEN jsonb_typeof(x.d) = 'object' THEN x.d ELSE '{}'::jsonb END) kv WHERE strpos(lower(kv.value ->> 'rationale'), ${t}) > 0)` : "";
        where.push(`(strpos(lower(inputs_json), ${t}) > 0 OR strpos(lower(expected_json), ${t}) > 0 OR ` +
          `strpos(lower(coalesce(prediction_json, '')), ${t}) > 0 OR strpos(lower(coalesce(error, '')), ${t}) > 0 OR ` +
          `strpos(lower(coalesce(example_id, '')), ${t}) > 0${rationale})`);
      }
      if (query.maxScore !== undefined && query.metric !== undefined) {
        params.push(query.maxScore);
        where.push(`sc.score <= $${params.length}`);
      }
      if (!page) return `SELECT count(*)::int AS n FROM ${from} WHERE ${where.join(" AND ")}`;
      if (query.after !== undefined) {
        params.push(query.after);
        where.push(`${this.#seq} > $${params.length}`);
      }
      // As SQLite orders: a missing score sorts first going up, last going down.
      const order = query.after !== undefined ? `${this.#seq} ASC`
        : query.sort === "score" && byScore ? (query.descending ? "sc.score DESC NULLS LAST, idx" : "sc.score ASC NULLS FIRST, idx")
          : query.sort === "duration" ? `duration_ms ${query.descending ? "DESC" : "ASC"}, idx` : `idx ${query.descending ? "DESC" : "ASC"}`;
      params.push(query.limit, query.offset);
      return `SELECT ${listedColumns(this.#seq)} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}`;
    };
    // A filter over every row of the run (text, label, score; sorting by score or duration) is a slow read.
    const slow = (query.text !== undefined && query.text !== "") || (query.label !== undefined && query.label !== "") ||
      query.maxScore !== undefined || (query.after === undefined && (query.sort === "score" || query.sort === "duration"))
      ? { signal: query.signal } : undefined;
    const [counted] = await this.#json<{ n: number }>((json) => build(json, false), params, slow);
    const raws = await this.#json<RowRaw>((json) => build(json, true), params, slow);
    return { rows: raws.map(row), total: counted!.n };
  }

  async lastSeq(runId: string): Promise<number> {
    const found = await this.#one<{ seq: string | number | null }>(`SELECT max(${this.#seq}) AS seq FROM lab_rows WHERE run_id = $1`, [runId]);
    return Number(found?.seq ?? 0);
  }

  async row(runId: string, index: number): Promise<ViewRow | undefined> {
    // What metrics said beyond their scores (a judge's verdict and rationale): a lab written before they were kept has no such column.
    const details = (await this.#columns("lab_rows")).has("details_json");
    const raw = await this.#one<RowRaw & { details_json?: string | null }>(
      `SELECT ${rowColumns(this.#seq)}${details ? ", details_json" : ""} FROM lab_rows WHERE run_id = $1 AND idx = $2`, [runId, index],
    );
    if (raw === undefined) return undefined;
    const shown = row(raw);
    if (raw.details_json != null) shown.details = parse(raw.details_json, {}) as Record<string, Record<string, unknown>>;
    return shown;
  }

  async scores(runId: string, metric: string): Promise<Float64Array> {
    const raws = await this.#json<{ s: number | null }>((json) => `SELECT ${scoreOf(json, "$2")} AS s FROM lab_rows WHERE run_id = $1 ORDER BY idx`, [runId, metric]);
    return Float64Array.from(raws, (r) => (typeof r.s === "number" ? r.s : 0));
  }

  async media(sha256: string): Promise<MediaBlob | undefined> {
    if (!(await this.#hasTable("media"))) return undefined;
    const found = await this.#one<RawMedia>("SELECT sha256, media_type, kind, bytes FROM media WHERE sha256 = $1", [sha256]);
    return found === undefined ? undefined : blobFrom(found);
  }

  async calls(runId: string, index: number): Promise<ModelCall[] | null> {
    if (!(await this.#columns("lab_rows")).has("calls_json")) return null;
    const raw = await this.#one<{ calls_json: string | null }>("SELECT calls_json FROM lab_rows WHERE run_id = $1 AND idx = $2", [runId, index]);
    if (raw?.calls_json == null) return [];
    let hashes: string[];
    try {
      hashes = callTextHashes(raw.calls_json);
    } catch (error) {
      throw new Error(`the model calls of example ${index} of run ${runId} in ${this.path} do not parse (changed outside typelm): ${(error as Error).message}`);
    }
    // Texts kept once, by their hash, in lab_texts: one query for all of this example's.
    const texts = new Map<string, string>();
    if (hashes.length > 0 && (await this.#hasTable("lab_texts"))) {
      for (const t of await this.#query<{ hash: string; text: string }>("SELECT hash, text FROM lab_texts WHERE hash = ANY($1::text[])", [hashes])) texts.set(t.hash, t.text);
    }
    return decodeCalls(raw.calls_json, (hash) => texts.get(hash));
  }

  async labels(runId: string, limit = 30): Promise<string[]> {
    // As the file's: scalar values (text, whole numbers, true/false) of at most 60 characters, from the first 2,000 rows.
    const found = await this.#json<{ v: string }>((json) =>
      `SELECT kv.value #>> '{}' AS v, count(*) AS n
       FROM (SELECT ${json("expected_json")} AS e FROM lab_rows WHERE run_id = $1 ORDER BY idx LIMIT 2000) r,
       jsonb_each(CASE WHEN jsonb_typeof(r.e) = 'object' THEN r.e ELSE '{}'::jsonb END) kv
       WHERE (jsonb_typeof(kv.value) IN ('string', 'boolean') OR (jsonb_typeof(kv.value) = 'number' AND kv.value::text ~ '^-?[0-9]+$'))
       AND length(kv.value #>> '{}') <= 60
       GROUP BY 1 ORDER BY n DESC, (kv.value #>> '{}') COLLATE "C" LIMIT $2`, [runId, limit]);
    return found.map((r) => r.v);
  }

  async fullRun(runId: string): Promise<LabRun | undefined> {
    const base = await this.run(runId);
    if (base === undefined) return undefined;
    const { bestTrial, ...rest } = base;
    if (rest.kind === "evaluation") {
      const rows = (await this.#query<RowRaw>(`SELECT ${rowColumns(this.#seq)} FROM lab_rows WHERE run_id = $1 ORDER BY idx`, [base.id])).map(row);
      return { ...rest, kind: "evaluation", rows } satisfies EvaluationRun;
    }
    return { ...rest, kind: "optimization", trials: await this.trials(base.id), bestTrial };
  }

  async scoreRows(runId: string): Promise<EvaluationRow[]> {
    return (await this.#query<{ idx: number; example_id: string | null; scores_json: string; error: string | null }>(
      "SELECT idx, example_id, scores_json, error FROM lab_rows WHERE run_id = $1 ORDER BY idx", [runId],
    )).map(scoreRow);
  }

  async scoreColumns(runId: string, metrics: readonly string[], options: ColumnOptions = {}): Promise<ScoreColumns> {
    const fields = options.fields === true;
    const raws = await this.#json<Record<string, unknown>>((json) =>
      `SELECT idx, example_id${fields ? ", expected_json, prediction_json, error" : ""}${metrics.map((_, i) => `, ${scoreOf(json, `$${i + 2}`)} AS s${i}`).join("")} FROM lab_rows WHERE run_id = $1 ORDER BY idx`,
    [runId, ...metrics]);
    const out = new ColumnsBuilder(metrics, fields, raws.length, options.sameIdsAs);
    for (const r of raws) {
      out.add(r["idx"] as number, r["example_id"] as string | null, metrics.map((_, i) => r[`s${i}`]), fields
        ? { expected: parse(r["expected_json"] as string, {}), prediction: r["prediction_json"] === null ? null : parse(r["prediction_json"] as string, {}), error: r["error"] as string | null }
        : undefined);
    }
    return out.done();
  }

  async rowsById(runId: string, ids: readonly string[]): Promise<ViewRow[]> {
    if (ids.length === 0) return [];
    const indices = ids.filter((id) => /^#\d+$/.test(id)).map((id) => Number(id.slice(1)));
    return (await this.#query<RowRaw>(
      `SELECT ${listedColumns(this.#seq)} FROM lab_rows WHERE run_id = $1 AND (example_id = ANY($2::text[]) OR (example_id IS NULL AND idx = ANY($3::int[]))) ORDER BY idx`,
      [runId, [...ids], indices],
    )).map(row);
  }

  async rowsByIndex(runId: string, indices: readonly number[]): Promise<ViewRow[]> {
    return (await this.#query<RowRaw>(`SELECT ${listedColumns(this.#seq)} FROM lab_rows WHERE run_id = $1 AND idx = ANY($2::int[]) ORDER BY idx`, [runId, [...indices]])).map(row);
  }

  async lineUp(runIds: readonly string[], metrics: readonly string[], signal?: AbortSignal): Promise<LineUpRow[]> {
    const raws = await this.#json<LineUpRow>((json) => postgresLineUpSql(runIds.length, metrics.length, (param) => scoreOf(json, param)), [[...runIds], runIds[0], runIds.length, ...metrics], { signal });
    return raws.map((r) => ({ ...r, pos: r.pos === null ? null : Number(r.pos) }));
  }

  async trials(runId: string): Promise<Trial[]> {
    return (await this.#query<TrialRaw>("SELECT * FROM lab_trials WHERE run_id = $1 ORDER BY idx", [runId])).map(trial);
  }

  async annotations(runId: string, all = false): Promise<Annotation[]> {
    if (!(await this.#hasTable("annotations"))) return [];
    return (await this.#query<AnnotationRaw>(annotationsSql(!all, "$1"), [runId])).map(annotationFrom);
  }

  async feedback(runId: string): Promise<RowFeedback[]> {
    return (await this.#hasTable("lab_feedback")) ? this.#query<RowFeedback>(runFeedbackSql("$1"), [runId]) : [];
  }

  async registryNames(): Promise<RegistryName[]> {
    if (!(await this.#hasTable("registry_versions"))) return [];
    return this.#query<RegistryName>(
      `SELECT v.name AS name, c.n AS versions, v.version AS latest, v.score AS score, v.created_at AS "createdAt"
       FROM registry_versions v JOIN (SELECT name, count(*)::int AS n, max(version) AS top FROM registry_versions GROUP BY name) c
       ON c.name = v.name AND c.top = v.version ORDER BY v.name COLLATE "C"`,
    );
  }

  async versions(name: string): Promise<ViewVersion[]> {
    if (!(await this.#hasTable("registry_versions"))) return [];
    return (await this.#query<VersionRaw>("SELECT * FROM registry_versions WHERE name = $1 ORDER BY version", [name])).map(version);
  }
}

/** Whether a query failed on stored text that is not valid JSON (PostgreSQL's invalid_text_representation for json). */
function badJson(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return e?.code === "22P02" && typeof e.message === "string" && /json/i.test(e.message);
}
