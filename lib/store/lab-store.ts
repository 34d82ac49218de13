import { builtin, nodeCrypto } from "../load-sync.js";
import type { Statement } from "better-sqlite3";
import { configuredLabUrl, configuredStorePath, globalConfig } from "../config.js";
import { ConfigurationError, ValidationError } from "../errors.js";
import { shownStore } from "../instrument/redact.js";
import type { ModelCall } from "../lm/usage-scope.js";
import { encodeCalls, storedCalls } from "./stored-calls.js";
import { openStoreSync, storeError } from "./db.js";
import {
  batchFrom, checkRunFilter, checkStartRun, finishParams, rowFrom, rowParams, summary, trialFrom, trialParams, unknownRun,
  type BatchRaw, type FinishRun, type RowRaw, type RunBatch, type RunFilter, type RunRaw, type StartRun, type TrialRaw,
} from "./lab-rows.js";
import { isPostgresUrl } from "./pg-url.js";
import { mediaValueFrom, type KeepMedia } from "./media/refs.js";
import { sqliteKeeper, sqliteMedia } from "./media/tables.js";
import type { MediaValue } from "../media/media.js";
import { PostgresLabStore } from "./pg-lab-store.js";
import type { Database } from "./db.js";
import type { EvaluationRow, LabRun, RunSummary, Trial } from "./records.js";

/** What `LabStore.open` takes: the file's path, or `{ path }`; without one, the configured store file. */
export type LabStoreOptions = string | { path?: string };

/** A PostgreSQL database's URL, as `LabStore.open` and `c.lab = { url }` take it. */
export type PostgresUrl = `postgres://${string}` | `postgresql://${string}`;

/** A lab store of either engine: the SQLite file or a team's PostgreSQL database. */
export type Lab = LabStore | PostgresLabStore;

/** The statements of one connection, prepared once and shared by every `LabStore` on it. */
class Statements {
  readonly insertRun: Statement;
  readonly finishRun: Statement;
  readonly reopenRun: Statement;
  readonly insertRow: Statement;
  readonly insertTrial: Statement;
  readonly run: Statement<[string], RunRaw>;
  readonly rows: Statement<[string], RowRaw>;
  readonly trials: Statement<[string], TrialRaw>;
  readonly insertRowWithCalls: Statement;
  readonly insertText: Statement;
  /** Hashes of texts known to be in lab_texts (written through this connection): not sent to SQLite again. */
  readonly knownTexts = new Set<string>();
  /** Stores each media value this connection has not stored yet (see media/tables.ts). */
  readonly keepMedia: KeepMedia;

  constructor(db: Database) {
    this.keepMedia = sqliteKeeper(db, new Set());
    this.insertRun = db.prepare(
      `INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json)
       VALUES (@id, @kind, @name, 'running', @started_at, @config_json, '{}')`,
    );
    this.finishRun = db.prepare(
      `UPDATE lab_runs SET status = @status, ended_at = @ended_at, score = @score, summary_json = @summary_json,
       error = @error, best_trial = @best_trial WHERE id = @id`,
    );
    this.reopenRun = db.prepare("UPDATE lab_runs SET status = 'running', ended_at = NULL, error = NULL WHERE id = ?");
    this.insertRow = db.prepare(
      `INSERT INTO lab_rows (run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error,
       duration_ms, input_tokens, output_tokens, cost, details_json)
       VALUES (@run_id, @idx, @example_id, @inputs_json, @expected_json, @prediction_json, @scores_json, @error,
       @duration_ms, @input_tokens, @output_tokens, @cost, @details_json)`,
    );
    this.insertTrial = db.prepare(
      `INSERT INTO lab_trials (run_id, idx, kind, parents_json, choices_json, instructions_json, demo_ids_json, score,
       example_scores_json, budget_spent, lm_calls, input_tokens, output_tokens, cost, duration_ms, error, data_json, reused)
       VALUES (@run_id, @idx, @kind, @parents_json, @choices_json, @instructions_json, @demo_ids_json, @score,
       @example_scores_json, @budget_spent, @lm_calls, @input_tokens, @output_tokens, @cost, @duration_ms, @error, @data_json, @reused)`,
    );
    this.insertText = db.prepare("INSERT OR IGNORE INTO lab_texts (hash, text) VALUES (?, ?)");
    this.insertRowWithCalls = db.prepare(
      `INSERT INTO lab_rows (run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error,
       duration_ms, input_tokens, output_tokens, cost, details_json, calls_json)
       VALUES (@run_id, @idx, @example_id, @inputs_json, @expected_json, @prediction_json, @scores_json, @error,
       @duration_ms, @input_tokens, @output_tokens, @cost, @details_json, @calls_json)`,
    );
    this.run = db.prepare<[string], RunRaw>("SELECT * FROM lab_runs WHERE id = ?");
    this.rows = db.prepare<[string], RowRaw>(
      `SELECT idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost,
       details_json FROM lab_rows WHERE run_id = ? ORDER BY idx`,
    );
    this.trials = db.prepare<[string], TrialRaw>("SELECT * FROM lab_trials WHERE run_id = ? ORDER BY idx");
  }
}

const statements = new WeakMap<Database, Statements>();

/**
 * The lab's record of evaluation and optimization runs, in the SQLite file shared with the LM cache
 * and the registry. Every write is one statement committed on its own, so a crash loses nothing
 * already written and another process can read a run while it goes on.
 */
export class LabStore {
  /** Which engine holds the lab: this one is the SQLite file (a team's database is "postgresql"). */
  readonly engine = "sqlite" as const;
  /** The absolute path of the file (or ":memory:"). */
  readonly path: string;
  readonly #db: Database;
  #closed = false;

  private constructor(path: string, db: Database) {
    this.path = path;
    this.#db = db;
  }

  /**
   * Opens the store (synchronously). With no argument: `configure((c) => { c.lab = { path } })`'s
   * path, else `.typelm/lab.sqlite`. Every `LabStore`, registry and LM cache on one file in one
   * process shares one connection.
   */
  static open(options: PostgresUrl | { url: string }): PostgresLabStore;
  static open(options?: LabStoreOptions): LabStore;
  static open(options?: LabStoreOptions | { url: string }): Lab {
    if (typeof options === "object" && options !== null && "url" in options) return PostgresLabStore.open(checkedUrl(options.url));
    if (typeof options === "string" && isPostgresUrl(options)) return PostgresLabStore.open(options);
    const given = typeof options === "string" ? options : options?.path;
    const path = given ?? configuredStorePath();
    const absolute = path === ":memory:" ? path : builtin("node:path").resolve(path);
    return new LabStore(absolute, openStoreSync(absolute));
  }

  /** Stops this handle; later calls raise `ConfigurationError`. The shared connection stays open. */
  close(): void {
    this.#closed = true;
  }

  // ---- writers -------------------------------------------------------------------------------

  /** Records a new run as `running` and returns its id; a bad kind, name or config is a `ValidationError` and writes nothing. */
  startRun(run: StartRun): string {
    const configJson = checkStartRun(run, "LabStore.startRun");
    const id = nodeCrypto().randomUUID();
    this.#write("record a run in", () => this.#statements().insertRun.run({
      id, kind: run.kind, name: run.name, started_at: new Date().toISOString(), config_json: configJson,
    }));
    return id;
  }

  /**
   * Records one evaluated example of `runId` (call it when the example finishes), with the model calls
   * it made when given: in one transaction, each text (message, reply) stored once by its hash.
   */
  recordExample(runId: string, row: EvaluationRow, calls?: readonly ModelCall[]): void {
    this.#write("record an example in", () => {
      const s = this.#statements();
      const values = rowParams(runId, row, s.keepMedia);
      if (calls === undefined || calls.length === 0) {
        s.insertRow.run(values);
        return;
      }
      // One statement, as without calls: the calls go in the row, their texts kept by hash (new ones only) before it.
      // A text whose row then fails to be written is only an unused entry.
      const callsJson = encodeCalls(calls, (hash, text) => {
        if (s.knownTexts.has(hash)) return;
        s.insertText.run(hash, text);
        if (s.knownTexts.size >= 10_000) s.knownTexts.clear();
        s.knownTexts.add(hash);
      }, s.keepMedia);
      s.insertRowWithCalls.run({ ...values, calls_json: callsJson });
    }, runId, `example ${row.index}`);
  }

  /** The model calls recorded with one example of a run, in the order they were answered ([] when none). */
  calls(runId: string, index: number): ModelCall[] {
    return this.#read(() => {
      const db = this.#database();
      const raw = db.prepare<[string, number], { calls_json: string | null }>("SELECT calls_json FROM lab_rows WHERE run_id = ? AND idx = ?").get(runId, index);
      return raw?.calls_json == null ? [] : storedCalls(db, raw.calls_json);
    });
  }

  /** Records one finished optimizer trial of `runId` (a failed trial too, with its error). */
  recordTrial(runId: string, trial: Trial): void {
    this.#write("record a trial in", () => this.#statements().insertTrial.run(trialParams(runId, trial, this.#statements().keepMedia)), runId, `trial ${trial.index}`);
  }

  /** The media value a row or call refers to (`{"$media": sha256, ...}`), as an `Image`, `Audio` or `Document`; undefined when not stored. */
  media(sha256: string): MediaValue | undefined {
    const blob = this.#read(() => sqliteMedia(this.#database(), sha256));
    return blob === undefined ? undefined : mediaValueFrom(blob.kind, blob.bytes, blob.mediaType);
  }

  /** Marks the run completed, failed or stopped (an optimizer's maxCost), with its headline score, totals and error. */
  finishRun(runId: string, end: FinishRun): void {
    const result = this.#write("finish a run in", () => this.#statements().finishRun.run(finishParams(runId, end)));
    if (result.changes === 0) throw unknownRun(this.path, runId);
  }

  /** Sets a finished or interrupted run back to `running` (an optimizer resuming it). */
  reopenRun(runId: string): void {
    const result = this.#write("reopen a run in", () => this.#statements().reopenRun.run(runId));
    if (result.changes === 0) throw unknownRun(this.path, runId);
  }

  /**
   * Records a provider batch `runId` submitted, as soon as the provider accepted it and before the
   * first poll: a run resumed after a crash finds it here and waits for it instead of paying again.
   */
  recordBatch(runId: string, batch: Omit<RunBatch, "status" | "createdAt">): void {
    this.#write("record a batch in", () => this.#database().prepare(
      `INSERT OR REPLACE INTO lab_batches (run_id, batch_id, provider, model, endpoint, round, custom_ids_json, status, created_at)
       VALUES (@run_id, @batch_id, @provider, @model, @endpoint, @round, @custom_ids_json, 'submitted', @created_at)`,
    ).run({
      run_id: runId, batch_id: batch.batchId, provider: batch.provider, model: batch.model, endpoint: batch.endpoint, round: batch.round,
      custom_ids_json: JSON.stringify(batch.customIds), created_at: new Date().toISOString(),
    }), runId, `batch ${batch.batchId}`);
  }

  /** Marks a recorded batch as done with (its results were read) or failed as a whole. */
  finishBatch(runId: string, batchId: string, status: "completed" | "failed"): void {
    this.#write("finish a batch in", () => this.#database().prepare("UPDATE lab_batches SET status = ? WHERE run_id = ? AND batch_id = ?").run(status, runId, batchId), runId);
  }

  /**
   * The batches a run submitted, oldest first ([] for an unknown run). A row that does not read as
   * one (changed outside typelm) is a `ValidationError` naming the store, the run and the row.
   */
  batches(runId: string): RunBatch[] {
    const raw = this.#read(() => this.#database().prepare<[string], BatchRaw & { rowid: number }>(
      "SELECT rowid, batch_id, provider, model, endpoint, round, custom_ids_json, status, created_at FROM lab_batches WHERE run_id = ? ORDER BY created_at, rowid",
    ).all(runId));
    return raw.map((b) => batchFrom(b, this.path, runId));
  }

  // ---- readers -------------------------------------------------------------------------------

  /** The runs, newest first (by start time: a run copied in later from another lab takes its place by when it started). */
  runs(filter: RunFilter = {}): RunSummary[] {
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    checkRunFilter(filter);
    for (const key of ["kind", "name", "status"] as const) {
      if (filter[key] !== undefined) {
        where.push(`${key} = @${key}`);
        params[key] = filter[key];
      }
    }
    const sql = `SELECT * FROM lab_runs${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY started_at DESC, seq DESC` +
      (filter.limit !== undefined ? ` LIMIT ${filter.limit}` : "");
    return this.#read(() => this.#database().prepare<[Record<string, unknown>], RunRaw>(sql).all(params)).map(summary);
  }

  /** A run with its rows (evaluation) or trials (optimization), finished or not; undefined when unknown. */
  run(id: string): LabRun | undefined {
    const raw = this.#read(() => this.#statements().run.get(id));
    if (raw === undefined) return undefined;
    const base = summary(raw);
    if (base.kind !== "optimization") return { ...base, kind: base.kind, rows: this.rows(id) };
    return { ...base, kind: "optimization", trials: this.trials(id), bestTrial: raw.best_trial };
  }

  /** The evaluated examples of a run recorded so far, by index ([] for an unknown run). */
  rows(runId: string): EvaluationRow[] {
    return this.#read(() => this.#statements().rows.all(runId)).map(rowFrom);
  }

  /** The trials of a run recorded so far, by index ([] for an unknown run). */
  trials(runId: string): Trial[] {
    return this.#read(() => this.#statements().trials.all(runId)).map(trialFrom);
  }

  // ---- internals -----------------------------------------------------------------------------

  #database(): Database {
    if (this.#closed || !this.#db.open) {
      throw new ConfigurationError(
        `The lab store at ${this.path} is closed: open it again with LabStore.open(${JSON.stringify(this.path)}) before reading or recording runs`,
      );
    }
    return this.#db;
  }

  #statements(): Statements {
    const db = this.#database();
    let found = statements.get(db);
    if (found === undefined) {
      found = new Statements(db);
      statements.set(db, found);
    }
    return found;
  }

  #read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw storeError(this.path, "read", error);
    }
  }

  #write<T>(action: string, fn: () => T, runId?: string, what?: string): T {
    try {
      return fn();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (runId !== undefined && code === "SQLITE_CONSTRAINT_FOREIGNKEY") throw unknownRun(this.path, runId);
      if (runId !== undefined && code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw new ValidationError(`Run ${runId} already has ${what ?? "this record"} in ${this.path}: each index is recorded once`, { cause: error });
      }
      throw storeError(this.path, action, error);
    }
  }
}

/**
 * The store runs are recorded in, per the global configuration: null when `c.lab === false`
 * (recording off), the PostgreSQL database of `c.lab = { url }` or `TYPELM_LAB_URL`, else the
 * configured or default file.
 */
export function labFromConfig(): Lab | null {
  if (globalConfig.lab === false) return null;
  const url = configuredLabUrl();
  if (url !== undefined) return PostgresLabStore.open(checkedUrl(url));
  return LabStore.open();
}

/** A URL that names a PostgreSQL database, else a `ConfigurationError` saying what is accepted. */
function checkedUrl(url: unknown): string {
  if (typeof url === "string" && isPostgresUrl(url)) return url;
  const shown = typeof url === "string" ? JSON.stringify(shownStore(url)) : String(url);
  throw new ConfigurationError(
    `The lab store's url (c.lab = { url } or TYPELM_LAB_URL) must be a PostgreSQL URL such as postgres://user@host:5432/typelm; received ${shown}. ` +
      "For a SQLite file, give c.lab = { path } instead",
  );
}
