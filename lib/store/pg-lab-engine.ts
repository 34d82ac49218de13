// The PostgreSQL lab store's work with the database: its queries and the batched writes. Loaded by
// `PostgresLabStore` (lib/store/pg-lab-store.ts) at its first read or write, with `pg` and the schema's
// migrations, so `import "typelm"` loads none of it.
import { ValidationError } from "../errors.js";
import {
  batchFrom, type BatchRaw, type RunBatch, rowFrom, summary, trialFrom, unknownRun,
  type RowRaw, type RunFilter, type RunRaw, type TrialRaw,
} from "./lab-rows.js";
import { postgresError, postgresPool } from "./pg.js";
import type { EvaluationRow, LabRun, RunSummary, Trial } from "./records.js";
import { callTextHashes } from "./call-texts.js";
import { decodeCalls } from "./stored-calls.js";
import type { ModelCall } from "../lm/usage-scope.js";
import type { MediaValue } from "../media/media.js";
import { mediaValueFrom, type MediaBlob } from "./media/refs.js";
import { pgWriteMedia } from "./media/pg-media.js";
import type { RawMedia } from "./media/tables.js";

const ROW_COLUMNS = [
  "run_id", "idx", "example_id", "inputs_json", "expected_json", "prediction_json", "scores_json", "error",
  "duration_ms", "input_tokens", "output_tokens", "cost", "details_json", "calls_json",
] as const;
const TRIAL_COLUMNS = [
  "run_id", "idx", "kind", "parents_json", "choices_json", "instructions_json", "demo_ids_json", "score",
  "example_scores_json", "budget_spent", "lm_calls", "input_tokens", "output_tokens", "cost", "duration_ms", "error", "data_json", "reused",
] as const;

/** At most this many rows go in one INSERT (PostgreSQL takes at most 65535 parameters per statement). */
const BATCH_ROWS = 500;

/** A write queued by `PostgresLabStore`, sent by `PostgresLabEngine.send`. */
export type Write =
  | { op: "run"; params: Record<string, unknown> }
  | { op: "row"; runId: string; what: string; params: Record<string, unknown>; texts?: [hash: string, text: string][]; media?: MediaBlob[] }
  | { op: "trial"; runId: string; what: string; params: Record<string, unknown>; texts?: undefined; media?: MediaBlob[] }
  | { op: "finish"; runId: string; params: Record<string, unknown> }
  | { op: "reopen"; runId: string }
  | { op: "batch"; runId: string; what: string; params: unknown[] }
  | { op: "finishBatch"; runId: string; params: unknown[] };

/** The queries of one PostgreSQL lab store handle (its checks stay in `PostgresLabStore`, its queue in `PostgresLabRun`). */
export class PostgresLabEngine {
  constructor(readonly url: string, readonly path: string) {}

  /** Loads `pg` and starts connecting (and migrating) in the background. */
  connect(): void {
    postgresPool(this.url);
  }

  /** The batches a run submitted, oldest first ([] for an unknown run). */
  async batches(runId: string): Promise<RunBatch[]> {
    const raw = await this.#query<BatchRaw & { rowid: string }>(
      "SELECT seq AS rowid, batch_id, provider, model, endpoint, round, custom_ids_json, status, created_at FROM lab_batches WHERE run_id = $1 ORDER BY created_at, seq",
      [runId],
    );
    return raw.map((b) => batchFrom(b, this.path, runId));
  }

  /** The runs, newest first (by start time: a run copied in later from another lab takes its place by when it started). */
  async runs(filter: RunFilter = {}): Promise<RunSummary[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const key of ["kind", "name", "status"] as const) {
      if (filter[key] !== undefined) {
        params.push(filter[key]);
        where.push(`${key} = $${params.length}`);
      }
    }
    const sql = `SELECT * FROM lab_runs${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY started_at DESC, seq DESC` +
      (filter.limit !== undefined ? ` LIMIT ${filter.limit}` : "");
    return (await this.#query<RunRaw>(sql, params)).map(summary);
  }

  /** A run with its rows or trials, finished or not; undefined when unknown. */
  async run(id: string): Promise<LabRun | undefined> {
    const [raw] = await this.#query<RunRaw>("SELECT * FROM lab_runs WHERE id = $1", [id]);
    if (raw === undefined) return undefined;
    const base = summary(raw);
    if (base.kind !== "optimization") return { ...base, kind: base.kind, rows: await this.rows(id) };
    return { ...base, kind: "optimization", trials: await this.trials(id), bestTrial: raw.best_trial };
  }

  /** The evaluated examples of a run recorded so far, by index ([] for an unknown run). */
  async rows(runId: string): Promise<EvaluationRow[]> {
    return (await this.#query<RowRaw>("SELECT * FROM lab_rows WHERE run_id = $1 ORDER BY idx", [runId])).map(rowFrom);
  }

  /** The trials of a run recorded so far, by index ([] for an unknown run). */
  async trials(runId: string): Promise<Trial[]> {
    return (await this.#query<TrialRaw>("SELECT * FROM lab_trials WHERE run_id = $1 ORDER BY idx", [runId])).map(trialFrom);
  }

  /** A stored media value by its sha256, as an `Image`, `Audio` or `Document`; undefined when not stored. */
  async media(sha256: string): Promise<MediaValue | undefined> {
    const [b] = await this.#query<RawMedia>("SELECT sha256, media_type, kind, bytes FROM media WHERE sha256 = $1", [sha256]);
    return b === undefined ? undefined : mediaValueFrom(b.kind, b.bytes, b.media_type);
  }

  /** The model calls recorded with one example of a run, in the order they were answered ([] when none). */
  async calls(runId: string, index: number): Promise<ModelCall[]> {
    const [raw] = await this.#query<{ calls_json: string | null }>("SELECT calls_json FROM lab_rows WHERE run_id = $1 AND idx = $2", [runId, index]);
    if (raw?.calls_json == null) return [];
    const hashes = callTextHashes(raw.calls_json);
    const texts = new Map<string, string>();
    if (hashes.length > 0) {
      for (const t of await this.#query<{ hash: string; text: string }>("SELECT hash, text FROM lab_texts WHERE hash = ANY($1)", [hashes])) {
        texts.set(t.hash, t.text);
      }
    }
    return decodeCalls(raw.calls_json, (hash) => texts.get(hash));
  }

  async #query<T>(sql: string, params: unknown[]): Promise<T[]> {
    const { pool, ready } = postgresPool(this.url);
    await ready;
    try {
      return (await pool.query(sql, params)).rows as T[];
    } catch (error) {
      throw postgresError(this.url, "read", error);
    }
  }

  /** Sends writes in order: consecutive rows (or trials) as one multi-row INSERT; each failure is given to `fail`. */
  async send(writes: Write[], fail: (error: unknown) => void, knownTexts: Set<string> = new Set(), knownMedia: Set<string> = new Set()): Promise<void> {
    let connection: ReturnType<typeof postgresPool>;
    try {
      connection = postgresPool(this.url);
      await connection.ready;
    } catch (error) {
      fail(error);
      return;
    }
    const { pool } = connection;
    for (let i = 0; i < writes.length;) {
      const write = writes[i]!;
      if (write.op === "row" || write.op === "trial") {
        let j = i;
        while (j < writes.length && writes[j]!.op === write.op && j - i < BATCH_ROWS) j++;
        await this.#insertMany(pool, write.op, writes.slice(i, j) as Extract<Write, { op: "row" | "trial" }>[], fail, knownTexts, knownMedia);
        i = j;
        continue;
      }
      i++;
      try {
        if (write.op === "run") {
          const p = write.params;
          await pool.query(
            "INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ($1, $2, $3, 'running', $4, $5, '{}')",
            [p.id, p.kind, p.name, p.started_at, p.config_json],
          );
        } else if (write.op === "finish") {
          const p = write.params;
          const result = await pool.query(
            "UPDATE lab_runs SET status = $2, ended_at = $3, score = $4, summary_json = $5, error = $6, best_trial = $7 WHERE id = $1",
            [p.id, p.status, p.ended_at, p.score, p.summary_json, p.error, p.best_trial],
          );
          if (result.rowCount === 0) fail(unknownRun(this.path, write.runId));
        } else if (write.op === "batch") {
          await pool.query(
            `INSERT INTO lab_batches (run_id, batch_id, provider, model, endpoint, round, custom_ids_json, status, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'submitted', $8)
             ON CONFLICT (run_id, batch_id) DO UPDATE SET provider = EXCLUDED.provider, model = EXCLUDED.model, endpoint = EXCLUDED.endpoint,
               round = EXCLUDED.round, custom_ids_json = EXCLUDED.custom_ids_json, status = 'submitted', created_at = EXCLUDED.created_at`,
            write.params,
          );
        } else if (write.op === "finishBatch") {
          await pool.query("UPDATE lab_batches SET status = $1 WHERE run_id = $2 AND batch_id = $3", write.params);
        } else {
          const result = await pool.query("UPDATE lab_runs SET status = 'running', ended_at = NULL, error = NULL WHERE id = $1", [write.runId]);
          if (result.rowCount === 0) fail(unknownRun(this.path, write.runId));
        }
      } catch (error) {
        fail(postgresError(this.url, "write to", error));
      }
    }
  }

  /**
   * One INSERT for many rows; when it fails (one duplicate index, one unknown run), the rows are
   * sent one by one so every other row is still written and each failure is named.
   */
  async #insertMany(
    pool: import("pg").Pool, op: "row" | "trial", writes: Extract<Write, { op: "row" | "trial" }>[], fail: (error: unknown) => void,
    knownTexts: Set<string>, knownMedia: Set<string>,
  ): Promise<void> {
    const columns = op === "row" ? ROW_COLUMNS : TRIAL_COLUMNS;
    const table = op === "row" ? "lab_rows" : "lab_trials";
    // The texts the rows' calls refer to go first, once each (another writer may have stored one already).
    const texts = new Map<string, string>();
    for (const w of writes) for (const [hash, text] of w.texts ?? []) texts.set(hash, text);
    if (texts.size > 0) {
      try {
        await pool.query(
          "INSERT INTO lab_texts (hash, text) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (hash) DO NOTHING",
          [[...texts.keys()], [...texts.values()]],
        );
        if (knownTexts.size + texts.size > 10_000) knownTexts.clear();
        for (const hash of texts.keys()) knownTexts.add(hash);
      } catch (error) {
        fail(postgresError(this.url, "record the calls' texts in", error));
      }
    }
    // The media values they refer to too, each once.
    const media = new Map<string, MediaBlob>();
    for (const w of writes) for (const b of w.media ?? []) if (!knownMedia.has(b.sha256)) media.set(b.sha256, b);
    await pgWriteMedia(pool, media.values(), knownMedia).catch((error: unknown) => fail(postgresError(this.url, "record the rows' media in", error)));
    const insert = (batch: typeof writes) => {
      const values: unknown[] = [];
      const tuples = batch.map((w) => `(${columns.map((c) => {
        values.push(w.params[c]);
        return `$${values.length}`;
      }).join(", ")})`);
      return pool.query(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")}`, values);
    };
    try {
      await insert(writes);
      return;
    } catch (error) {
      if (writes.length === 1) {
        fail(this.#writeError(writes[0]!, error));
        return;
      }
    }
    for (const w of writes) {
      try {
        await insert([w]);
      } catch (error) {
        fail(this.#writeError(w, error));
      }
    }
  }

  #writeError(write: Extract<Write, { op: "row" | "trial" }>, error: unknown): unknown {
    const code = (error as { code?: unknown }).code;
    if (code === "23503") return unknownRun(this.path, write.runId);
    if (code === "23505") {
      return new ValidationError(`Run ${write.runId} already has ${write.what} in ${this.path}: each index is recorded once`, { cause: error });
    }
    return postgresError(this.url, `record ${write.what} in`, error);
  }
}
