// The work behind `LabStore` (lib/store/lab-store.ts), which keeps only its fields and one-line methods:
// opening a store, the prepared statements of a connection, and each writer's and reader's body. The
// bundle loads this module at the first open, read or write (scripts/deferred-modules.mjs). The facade
// reaches them all through `labWork()`: one import, so the bundle stands in for one function, not sixteen.
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
import { openPostgresLabStore } from "./pg-lab-store.js";
import type { Database } from "./db.js";
import type { EvaluationRow, LabRun, RunSummary, Trial } from "./records.js";
import { LabStore, type Lab, type LabStoreOptions } from "./lab-store.js";

/** What one `LabStore` handle holds: its file, the shared connection, and whether `close()` was called. */
export interface LabHandle {
  readonly path: string;
  readonly db: Database;
  closed: boolean;
}

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
 * `LabStore.open(options)`: a team's PostgreSQL lab for a URL, else the SQLite file (`make` builds the
 * `LabStore` on its absolute path and the shared connection).
 */
function openLab(options: LabStoreOptions | { url: string } | undefined, make: (path: string, db: Database) => LabStore): Lab {
  if (typeof options === "object" && options !== null && "url" in options) return openPostgresLabStore(checkedUrl(options.url));
  if (typeof options === "string" && isPostgresUrl(options)) return openPostgresLabStore(options);
  const given = typeof options === "string" ? options : options?.path;
  const path = given ?? configuredStorePath();
  const absolute = path === ":memory:" ? path : builtin("node:path").resolve(path);
  return make(absolute, openStoreSync(absolute));
}

// ---- writers -------------------------------------------------------------------------------

/** `LabStore.startRun`: records a new run as `running` and returns its id. */
function labStartRun(lab: LabHandle, run: StartRun): string {
  const configJson = checkStartRun(run, "LabStore.startRun");
  const id = nodeCrypto().randomUUID();
  write(lab, "record a run in", () => statementsOf(lab).insertRun.run({
    id, kind: run.kind, name: run.name, started_at: new Date().toISOString(), config_json: configJson,
  }));
  return id;
}

/** `LabStore.recordExample`: one evaluated example, with the model calls it made when given. */
function labRecordExample(lab: LabHandle, runId: string, row: EvaluationRow, calls?: readonly ModelCall[]): void {
  write(lab, "record an example in", () => {
    const s = statementsOf(lab);
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

/** `LabStore.calls`: the model calls recorded with one example of a run ([] when none). */
function labCalls(lab: LabHandle, runId: string, index: number): ModelCall[] {
  return read(lab, () => {
    const db = database(lab);
    const raw = db.prepare<[string, number], { calls_json: string | null }>("SELECT calls_json FROM lab_rows WHERE run_id = ? AND idx = ?").get(runId, index);
    return raw?.calls_json == null ? [] : storedCalls(db, raw.calls_json);
  });
}

/** `LabStore.recordTrial`: one finished optimizer trial (a failed one too). */
function labRecordTrial(lab: LabHandle, runId: string, trial: Trial): void {
  write(lab, "record a trial in", () => statementsOf(lab).insertTrial.run(trialParams(runId, trial, statementsOf(lab).keepMedia)), runId, `trial ${trial.index}`);
}

/** `LabStore.media`: the media value stored under `sha256`, or undefined. */
function labMedia(lab: LabHandle, sha256: string): MediaValue | undefined {
  const blob = read(lab, () => sqliteMedia(database(lab), sha256));
  return blob === undefined ? undefined : mediaValueFrom(blob.kind, blob.bytes, blob.mediaType);
}

/** `LabStore.finishRun`: marks the run completed, failed or stopped. */
function labFinishRun(lab: LabHandle, runId: string, end: FinishRun): void {
  const result = write(lab, "finish a run in", () => statementsOf(lab).finishRun.run(finishParams(runId, end)));
  if (result.changes === 0) throw unknownRun(lab.path, runId);
}

/** `LabStore.reopenRun`: sets a run back to `running`. */
function labReopenRun(lab: LabHandle, runId: string): void {
  const result = write(lab, "reopen a run in", () => statementsOf(lab).reopenRun.run(runId));
  if (result.changes === 0) throw unknownRun(lab.path, runId);
}

/** `LabStore.recordBatch`: a provider batch the run submitted. */
function labRecordBatch(lab: LabHandle, runId: string, batch: Omit<RunBatch, "status" | "createdAt">): void {
  write(lab, "record a batch in", () => database(lab).prepare(
    `INSERT OR REPLACE INTO lab_batches (run_id, batch_id, provider, model, endpoint, round, custom_ids_json, status, created_at)
     VALUES (@run_id, @batch_id, @provider, @model, @endpoint, @round, @custom_ids_json, 'submitted', @created_at)`,
  ).run({
    run_id: runId, batch_id: batch.batchId, provider: batch.provider, model: batch.model, endpoint: batch.endpoint, round: batch.round,
    custom_ids_json: JSON.stringify(batch.customIds), created_at: new Date().toISOString(),
  }), runId, `batch ${batch.batchId}`);
}

/** `LabStore.finishBatch`: marks a recorded batch completed or failed. */
function labFinishBatch(lab: LabHandle, runId: string, batchId: string, status: "completed" | "failed"): void {
  write(lab, "finish a batch in", () => database(lab).prepare("UPDATE lab_batches SET status = ? WHERE run_id = ? AND batch_id = ?").run(status, runId, batchId), runId);
}

/** `LabStore.batches`: the batches a run submitted, oldest first. */
function labBatches(lab: LabHandle, runId: string): RunBatch[] {
  const raw = read(lab, () => database(lab).prepare<[string], BatchRaw & { rowid: number }>(
    "SELECT rowid, batch_id, provider, model, endpoint, round, custom_ids_json, status, created_at FROM lab_batches WHERE run_id = ? ORDER BY created_at, rowid",
  ).all(runId));
  return raw.map((b) => batchFrom(b, lab.path, runId));
}

// ---- readers -------------------------------------------------------------------------------

/** `LabStore.runs`: the runs, newest first. */
function labRuns(lab: LabHandle, filter: RunFilter): RunSummary[] {
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
  return read(lab, () => database(lab).prepare<[Record<string, unknown>], RunRaw>(sql).all(params)).map(summary);
}

/** `LabStore.run`: a run with its rows or trials; undefined when unknown. */
function labRun(lab: LabHandle, id: string): LabRun | undefined {
  const raw = read(lab, () => statementsOf(lab).run.get(id));
  if (raw === undefined) return undefined;
  const base = summary(raw);
  if (base.kind !== "optimization") return { ...base, kind: base.kind, rows: labRows(lab, id) };
  return { ...base, kind: "optimization", trials: labTrials(lab, id), bestTrial: raw.best_trial };
}

/** `LabStore.rows`: the evaluated examples of a run recorded so far, by index. */
function labRows(lab: LabHandle, runId: string): EvaluationRow[] {
  return read(lab, () => statementsOf(lab).rows.all(runId)).map(rowFrom);
}

/** `LabStore.trials`: the trials of a run recorded so far, by index. */
function labTrials(lab: LabHandle, runId: string): Trial[] {
  return read(lab, () => statementsOf(lab).trials.all(runId)).map(trialFrom);
}

// ---- internals -----------------------------------------------------------------------------

function database(lab: LabHandle): Database {
  if (lab.closed || !lab.db.open) {
    throw new ConfigurationError(
      `The lab store at ${lab.path} is closed: open it again with LabStore.open(${JSON.stringify(lab.path)}) before reading or recording runs`,
    );
  }
  return lab.db;
}

function statementsOf(lab: LabHandle): Statements {
  const db = database(lab);
  let found = statements.get(db);
  if (found === undefined) {
    found = new Statements(db);
    statements.set(db, found);
  }
  return found;
}

function read<T>(lab: LabHandle, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw storeError(lab.path, "read", error);
  }
}

function write<T>(lab: LabHandle, action: string, fn: () => T, runId?: string, what?: string): T {
  try {
    return fn();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (runId !== undefined && code === "SQLITE_CONSTRAINT_FOREIGNKEY") throw unknownRun(lab.path, runId);
    if (runId !== undefined && code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
      throw new ValidationError(`Run ${runId} already has ${what ?? "this record"} in ${lab.path}: each index is recorded once`, { cause: error });
    }
    throw storeError(lab.path, action, error);
  }
}

/** `labFromConfig()` (lib/store/lab-store.ts): the configured store, or null when recording is off. */
function labFromConfiguration(): Lab | null {
  if (globalConfig.lab === false) return null;
  const url = configuredLabUrl();
  if (url !== undefined) return openPostgresLabStore(checkedUrl(url));
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

/** The functions behind `LabStore`'s methods and `labFromConfig`, by name. */
const work = {
  open: openLab,
  startRun: labStartRun,
  recordExample: labRecordExample,
  calls: labCalls,
  recordTrial: labRecordTrial,
  media: labMedia,
  finishRun: labFinishRun,
  reopenRun: labReopenRun,
  recordBatch: labRecordBatch,
  finishBatch: labFinishBatch,
  batches: labBatches,
  runs: labRuns,
  run: labRun,
  rows: labRows,
  trials: labTrials,
  fromConfig: labFromConfiguration,
};

/** What `labWork()` returns: the functions behind `LabStore`. */
export type LabWork = typeof work;

/** The functions behind `LabStore` and `labFromConfig` (lib/store/lab-store.ts). */
export function labWork(): LabWork {
  return work;
}
