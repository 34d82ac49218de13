import { nodeCrypto } from "../load-sync.js";
import { ValidationError } from "../errors.js";
import { shownUrl } from "../instrument/redact.js";
import {
  batchFrom, checkRunFilter, checkStartRun, type BatchRaw, type RunBatch, finishParams, rowFrom, rowParams, summary, trialFrom, trialParams, unknownRun,
  type FinishRun, type RowRaw, type RunFilter, type RunRaw, type StartRun, type TrialRaw,
} from "./lab-store.js";
import { postgresError, postgresPool } from "./pg.js";
import type { EvaluationRow, LabRun, RunSummary, Trial } from "./records.js";
import { callTextHashes, decodeCalls, encodeCalls } from "./stored-calls.js";
import type { ModelCall } from "../lm/usage-scope.js";

/** Per database URL: hashes of texts known to be in lab_texts (written from this process), not sent again. */
const knownTexts = new Map<string, Set<string>>();

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

type Write =
  | { op: "run"; params: Record<string, unknown> }
  | { op: "row"; runId: string; what: string; params: Record<string, unknown>; texts?: [hash: string, text: string][] }
  | { op: "trial"; runId: string; what: string; params: Record<string, unknown>; texts?: undefined }
  | { op: "finish"; runId: string; params: Record<string, unknown> }
  | { op: "reopen"; runId: string }
  | { op: "batch"; runId: string; what: string; params: unknown[] }
  | { op: "finishBatch"; runId: string; params: unknown[] };

/**
 * The lab store on a team's PostgreSQL database. Writers keep the SQLite store's synchronous
 * signatures: what they are given is checked at once (a bad value is a `ValidationError`, as on
 * SQLite), then queued and sent in batches (one INSERT per batch of rows), in order, so a remote
 * database does not slow an evaluation. `flush()` waits for everything queued and rejects with the
 * first write that failed since the last flush. Readers return promises and see this handle's
 * queued writes (they flush first).
 */
export class PostgresLabStore {
  readonly engine = "postgresql" as const;
  /** The database's URL as given (may carry a password: never shown; see `path`). */
  readonly url: string;
  /** The database as messages show it: the URL without credentials. */
  readonly path: string;
  #queue: Write[] = [];
  #draining: Promise<void> | null = null;
  #failures: unknown[] = [];
  #closed = false;

  private constructor(url: string) {
    this.url = url;
    this.path = shownUrl(url);
  }

  /** A store on the database at `url` (`postgres://...`); loads `pg`, connects (and migrates) at first use. */
  static open(url: string): PostgresLabStore {
    const store = new PostgresLabStore(url);
    postgresPool(url);
    return store;
  }

  // ---- writers (queued) ----------------------------------------------------------------------

  /** Records a new run as `running` and returns its id (the write is queued). */
  startRun(run: StartRun): string {
    const configJson = checkStartRun(run, "LabStore.startRun");
    const id = nodeCrypto().randomUUID();
    this.#enqueue({ op: "run", params: { id, kind: run.kind, name: run.name, started_at: new Date().toISOString(), config_json: configJson } });
    return id;
  }

  /**
   * Records one evaluated example of `runId`, with the model calls it made when given (queued; a
   * duplicate index makes the next `flush()` reject). The calls are kept as on SQLite: in the row,
   * each text a later call may send again once in lab_texts, written in the same burst as the row.
   */
  recordExample(runId: string, row: EvaluationRow, calls?: readonly ModelCall[]): void {
    const params = rowParams(runId, row);
    const texts: [string, string][] = [];
    if (calls !== undefined && calls.length > 0) {
      const known = this.#knownTexts();
      params.calls_json = encodeCalls(calls, (hash, text) => {
        if (!known.has(hash)) texts.push([hash, text]);
      });
    } else {
      params.calls_json = null;
    }
    this.#enqueue({ op: "row", runId, what: `example ${row.index}`, params, ...(texts.length > 0 ? { texts } : {}) });
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

  /** Records one finished optimizer trial of `runId` (queued, as `recordExample`). */
  recordTrial(runId: string, trial: Trial): void {
    this.#enqueue({ op: "trial", runId, what: `trial ${trial.index}`, params: trialParams(runId, trial) });
  }

  /** Marks the run completed, failed or stopped; an unknown run makes the next `flush()` reject. */
  finishRun(runId: string, end: FinishRun): void {
    this.#enqueue({ op: "finish", runId, params: finishParams(runId, end) });
  }

  /** Sets a finished or interrupted run back to `running` (queued; an unknown run makes the next `flush()` reject). */
  reopenRun(runId: string): void {
    this.#enqueue({ op: "reopen", runId });
  }

  /**
   * Records a provider batch `runId` submitted (queued; evaluations flush it before the first poll,
   * so a run resumed after a crash finds it and waits for it instead of paying again).
   */
  recordBatch(runId: string, batch: Omit<RunBatch, "status" | "createdAt">): void {
    this.#enqueue({
      op: "batch", runId, what: `batch ${batch.batchId}`,
      params: [runId, batch.batchId, batch.provider, batch.model, batch.endpoint, batch.round, JSON.stringify(batch.customIds), new Date().toISOString()],
    });
  }

  /** Marks a recorded batch as done with (its results were read) or failed as a whole (queued). */
  finishBatch(runId: string, batchId: string, status: "completed" | "failed"): void {
    this.#enqueue({ op: "finishBatch", runId, params: [status, runId, batchId] });
  }

  /** The batches a run submitted, oldest first ([] for an unknown run). */
  async batches(runId: string): Promise<RunBatch[]> {
    const raw = await this.#query<BatchRaw & { rowid: string }>(
      "SELECT seq AS rowid, batch_id, provider, model, endpoint, round, custom_ids_json, status, created_at FROM lab_batches WHERE run_id = $1 ORDER BY created_at, seq",
      [runId],
    );
    return raw.map((b) => batchFrom(b, this.path, runId));
  }

  /** Waits until every queued write is in the database; rejects with the first that failed since the last flush. */
  async flush(): Promise<void> {
    while (this.#draining !== null || this.#queue.length > 0) {
      await (this.#draining ?? this.#drain());
    }
    const failures = this.#failures;
    this.#failures = [];
    if (failures.length > 0) throw failures[0];
  }

  /** Flushes, then stops this handle (later writes and reads raise an error). The shared pool stays open. */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.#closed = true;
    }
  }

  // ---- readers -------------------------------------------------------------------------------

  /** The runs, newest first. */
  async runs(filter: RunFilter = {}): Promise<RunSummary[]> {
    checkRunFilter(filter);
    const where: string[] = [];
    const params: unknown[] = [];
    for (const key of ["kind", "name", "status"] as const) {
      if (filter[key] !== undefined) {
        params.push(filter[key]);
        where.push(`${key} = $${params.length}`);
      }
    }
    const sql = `SELECT * FROM lab_runs${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC` +
      (filter.limit !== undefined ? ` LIMIT ${filter.limit}` : "");
    return (await this.#query<RunRaw>(sql, params)).map(summary);
  }

  /** A run with its rows or trials, finished or not; undefined when unknown. */
  async run(id: string): Promise<LabRun | undefined> {
    const [raw] = await this.#query<RunRaw>("SELECT * FROM lab_runs WHERE id = $1", [id]);
    if (raw === undefined) return undefined;
    const base = summary(raw);
    if (base.kind === "evaluation") return { ...base, kind: "evaluation", rows: await this.rows(id) };
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

  // ---- internals -----------------------------------------------------------------------------

  #open(): void {
    if (this.#closed) {
      throw new ValidationError(`The lab store at ${this.path} is closed: open it again with LabStore.open(url) before reading or recording runs`);
    }
  }

  async #query<T>(sql: string, params: unknown[]): Promise<T[]> {
    this.#open();
    // Read this handle's own writes.
    await this.#settle();
    const { pool, ready } = postgresPool(this.url);
    await ready;
    try {
      return (await pool.query(sql, params)).rows as T[];
    } catch (error) {
      throw postgresError(this.url, "read", error);
    }
  }

  #knownTexts(): Set<string> {
    let known = knownTexts.get(this.url);
    if (known === undefined) {
      known = new Set();
      knownTexts.set(this.url, known);
    }
    return known;
  }

  /** Waits for queued writes without taking their failures (those stay for `flush()`). */
  async #settle(): Promise<void> {
    while (this.#draining !== null || this.#queue.length > 0) await (this.#draining ?? this.#drain());
  }

  #enqueue(write: Write): void {
    this.#open();
    this.#queue.push(write);
    // Writes made in one turn (a burst of finished examples) go out together.
    if (this.#draining === null && this.#queue.length === 1) setImmediate(() => void this.#drain());
  }

  #drain(): Promise<void> {
    if (this.#draining !== null) return this.#draining;
    this.#draining = (async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        await this.#send(batch);
      }
    })().finally(() => {
      this.#draining = null;
    });
    return this.#draining;
  }

  /** Sends writes in order: consecutive rows (or trials) as one multi-row INSERT. */
  async #send(writes: Write[]): Promise<void> {
    let connection: ReturnType<typeof postgresPool>;
    try {
      connection = postgresPool(this.url);
      await connection.ready;
    } catch (error) {
      this.#failures.push(error);
      return;
    }
    const { pool } = connection;
    for (let i = 0; i < writes.length;) {
      const write = writes[i]!;
      if (write.op === "row" || write.op === "trial") {
        let j = i;
        while (j < writes.length && writes[j]!.op === write.op && j - i < BATCH_ROWS) j++;
        await this.#insertMany(pool, write.op, writes.slice(i, j) as Extract<Write, { op: "row" | "trial" }>[]);
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
          if (result.rowCount === 0) this.#failures.push(unknownRun(this.path, write.runId));
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
          if (result.rowCount === 0) this.#failures.push(unknownRun(this.path, write.runId));
        }
      } catch (error) {
        this.#failures.push(postgresError(this.url, "write to", error));
      }
    }
  }

  /**
   * One INSERT for many rows; when it fails (one duplicate index, one unknown run), the rows are
   * sent one by one so every other row is still written and each failure is named.
   */
  async #insertMany(pool: import("pg").Pool, op: "row" | "trial", writes: Extract<Write, { op: "row" | "trial" }>[]): Promise<void> {
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
        const known = this.#knownTexts();
        if (known.size + texts.size > 10_000) known.clear();
        for (const hash of texts.keys()) known.add(hash);
      } catch (error) {
        this.#failures.push(postgresError(this.url, "record the calls' texts in", error));
      }
    }
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
        this.#failures.push(this.#writeError(writes[0]!, error));
        return;
      }
    }
    for (const w of writes) {
      try {
        await insert([w]);
      } catch (error) {
        this.#failures.push(this.#writeError(w, error));
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
