import { nodeCrypto } from "../load-sync.js";
import { resolve } from "node:path";
import type { Statement } from "better-sqlite3";
import { configuredLabUrl, configuredStorePath, globalConfig } from "../config.js";
import { ConfigurationError, preview, ValidationError } from "../errors.js";
import { isPlainObject } from "../plain-object.js";
import { redactedJson, redactError, shownUrl } from "../instrument/redact.js";
import type { ModelCall } from "../lm/usage-scope.js";
import { encodeCalls, storedCalls } from "./stored-calls.js";
import { openStoreSync, storeError } from "./db.js";
import { isPostgresUrl } from "./pg-url.js";
import { PostgresLabStore } from "./pg-lab-store.js";
import type { Database } from "./db.js";
import type {
  EvaluationRow, ExampleScore, LabRun, RunKind, RunStatus, RunSummary, Trial,
} from "./records.js";

const RUN_KINDS: readonly RunKind[] = ["evaluation", "optimization"];
const RUN_STATUSES: readonly RunStatus[] = ["running", "completed", "failed", "stopped"];

/** Which runs `lab.runs()` lists; every field narrows the list. */
export interface RunFilter {
  kind?: RunKind;
  name?: string;
  status?: RunStatus;
  /** At most this many runs (the newest). */
  limit?: number;
}

/** What `lab.startRun` takes: the run's kind, name and the options it was started with. */
export interface StartRun {
  kind: RunKind;
  name: string;
  /** JSON-ready options the run was started with. */
  config?: Record<string, unknown>;
}

/** What `lab.finishRun` takes: the final status, score, summary, error and (for optimizations) the best trial. */
export interface FinishRun {
  status: Exclude<RunStatus, "running">;
  score?: number | null;
  summary?: Record<string, unknown>;
  error?: string | null;
  /** The index of the trial whose configuration was returned (optimizations). */
  bestTrial?: number | null;
}

/** What `LabStore.open` takes: the file's path, or `{ path }`; without one, the configured store file. */
export type LabStoreOptions = string | { path?: string };

/** A PostgreSQL database's URL, as `LabStore.open` and `c.lab = { url }` take it. */
export type PostgresUrl = `postgres://${string}` | `postgresql://${string}`;

/** A lab store of either engine: the SQLite file or a team's PostgreSQL database. */
export type Lab = LabStore | PostgresLabStore;

/** A provider batch a run submitted (`lab_batches`). */
export interface RunBatch {
  batchId: string;
  provider: string;
  model: string;
  /** The server as messages show it (no credentials). */
  endpoint: string;
  round: number;
  /** The request keys the batch holds. */
  customIds: string[];
  status: "submitted" | "completed" | "failed";
  createdAt: string;
}

export interface BatchRaw {
  batch_id: string; provider: string; model: string; endpoint: string; round: number; custom_ids_json: string;
  status: RunBatch["status"]; created_at: string;
}

export interface RunRaw {
  id: string; kind: RunKind; name: string; status: RunStatus; started_at: string; ended_at: string | null;
  score: number | null; config_json: string; summary_json: string; error: string | null; best_trial: number | null;
}
export interface RowRaw {
  idx: number; example_id: string | null; inputs_json: string; expected_json: string; prediction_json: string | null;
  scores_json: string; error: string | null; duration_ms: number; input_tokens: number; output_tokens: number; cost: number;
  details_json?: string | null;
}
export interface TrialRaw {
  idx: number; kind: string; parents_json: string; choices_json: string; instructions_json: string; demo_ids_json: string;
  score: number | null; example_scores_json: string | null; budget_spent: number; lm_calls: number; input_tokens: number;
  output_tokens: number; cost: number; duration_ms: number; error: string | null; data_json: string; reused: number;
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

  constructor(db: Database) {
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
    const absolute = path === ":memory:" ? path : resolve(path);
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
      const values = rowParams(runId, row);
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
      });
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
    this.#write("record a trial in", () => this.#statements().insertTrial.run(trialParams(runId, trial)), runId, `trial ${trial.index}`);
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

  /** The runs, newest first. */
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
    const sql = `SELECT * FROM lab_runs${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC` +
      (filter.limit !== undefined ? ` LIMIT ${filter.limit}` : "");
    return this.#read(() => this.#database().prepare<[Record<string, unknown>], RunRaw>(sql).all(params)).map(summary);
  }

  /** A run with its rows (evaluation) or trials (optimization), finished or not; undefined when unknown. */
  run(id: string): LabRun | undefined {
    const raw = this.#read(() => this.#statements().run.get(id));
    if (raw === undefined) return undefined;
    const base = summary(raw);
    if (base.kind === "evaluation") return { ...base, kind: "evaluation", rows: this.rows(id) };
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
  const shown = typeof url === "string" ? JSON.stringify(shownUrl(url)) : String(url);
  throw new ConfigurationError(
    `The lab store's url (c.lab = { url } or TYPELM_LAB_URL) must be a PostgreSQL URL such as postgres://user@host:5432/typelm; received ${shown}. ` +
      "For a SQLite file, give c.lab = { path } instead",
  );
}

export function unknownRun(path: string, runId: string): ValidationError {
  return new ValidationError(
    `Unknown run id ${JSON.stringify(runId)} in the lab store at ${path}: start the run with lab.startRun(...) first (lab.runs() lists the known ones)`,
    { field: "runId" },
  );
}

/** Checks what `startRun` takes and returns the config as stored; a bad kind, name or config is a `ValidationError`. */
export function checkStartRun(run: StartRun, where: string): string {
  if (!RUN_KINDS.includes(run.kind)) {
    throw new ValidationError(`${where}: kind must be "evaluation" or "optimization"; received ${shown(run.kind)}`, { field: "kind" });
  }
  if (typeof run.name !== "string") {
    throw new ValidationError(`${where}: name must be a string (the run's name in lab.runs()); received ${shown(run.name)}`, { field: "name" });
  }
  const config = run.config ?? {};
  if (!isPlainObject(config)) {
    throw new ValidationError(
      `${where}: config must be an object of the run's options; received ${Array.isArray(config) ? "an array" : typeof config}`,
      { field: "config" },
    );
  }
  return json(config, where, "config");
}

/** The `lab_rows` columns of one evaluated example, as both engines store them. */
export function rowParams(runId: string, row: EvaluationRow): Record<string, unknown> {
  return {
    run_id: runId, idx: row.index, example_id: row.exampleId, inputs_json: json(row.inputs, EXAMPLE, "inputs"),
    expected_json: json(row.expected, EXAMPLE, "expected"),
    prediction_json: row.prediction === null ? null : json(row.prediction, EXAMPLE, "prediction"),
    scores_json: json(row.scores, EXAMPLE, "scores"), error: text(row.error), duration_ms: row.durationMs, input_tokens: row.inputTokens,
    output_tokens: row.outputTokens, cost: row.cost,
    details_json: row.details === undefined ? null : json(row.details, EXAMPLE, "details"),
  };
}

/** The `lab_trials` columns of one trial, as both engines store them. */
export function trialParams(runId: string, trial: Trial): Record<string, unknown> {
  return {
    run_id: runId, idx: trial.index, kind: trial.kind, parents_json: json(trial.parents, TRIAL, "parents"),
    choices_json: json(trial.choices, TRIAL, "choices"), instructions_json: json(trial.instructions, TRIAL, "instructions"),
    demo_ids_json: json(trial.demoIds, TRIAL, "demoIds"), score: finiteOrNull(trial.score),
    example_scores_json: trial.exampleScores === null ? null : json(trial.exampleScores, TRIAL, "exampleScores"),
    budget_spent: trial.budgetSpent, lm_calls: trial.lmCalls, input_tokens: trial.inputTokens,
    output_tokens: trial.outputTokens, cost: trial.cost, duration_ms: trial.durationMs, error: text(trial.error),
    data_json: json(trial.data, TRIAL, "data"), reused: trial.reused ?? 0,
  };
}

/** The `lab_runs` columns `finishRun` sets. */
export function finishParams(runId: string, end: FinishRun): Record<string, unknown> {
  return {
    id: runId, status: end.status, ended_at: new Date().toISOString(), score: finiteOrNull(end.score ?? null),
    summary_json: json(end.summary ?? {}, "LabStore.finishRun", "summary"), error: text(end.error), best_trial: end.bestTrial ?? null,
  };
}

/** Checks `lab.runs(filter)`'s filter; a misspelt kind or status, or a bad limit, is a `ValidationError`. */
export function checkRunFilter(filter: RunFilter): void {
  // A misspelt kind or status would match nothing and read as "no runs yet".
  for (const [key, known] of [["kind", RUN_KINDS], ["status", RUN_STATUSES]] as const) {
    const value = filter[key];
    if (value !== undefined && !(known as readonly unknown[]).includes(value)) {
      const expected = known.map((k) => JSON.stringify(k));
      throw new ValidationError(
        `runs({ ${key} }) expects ${expected.slice(0, -1).join(", ")} or ${expected[expected.length - 1]}; received ${JSON.stringify(value)}`,
        { field: key },
      );
    }
  }
  if (filter.limit !== undefined && !(Number.isInteger(filter.limit) && filter.limit >= 0)) {
    throw new ValidationError(`runs({ limit }) expects a whole number ≥ 0; received ${String(filter.limit)}`, { field: "limit" });
  }
}

/** One `lab_rows` row as an `EvaluationRow`. */
export function rowFrom(r: RowRaw): EvaluationRow {
  return {
    index: r.idx, exampleId: r.example_id, inputs: parse(r.inputs_json), expected: parse(r.expected_json),
    prediction: r.prediction_json === null ? null : parse(r.prediction_json), scores: parse(r.scores_json),
    error: r.error, durationMs: r.duration_ms, inputTokens: r.input_tokens, outputTokens: r.output_tokens, cost: r.cost,
    // Only rows a metric gave details for carry the field, as in the report (a store without the column has none).
    ...(r.details_json == null ? {} : { details: parse(r.details_json) as Record<string, Record<string, unknown>> }),
  };
}

/** One `lab_trials` row as a `Trial`. */
export function trialFrom(t: TrialRaw): Trial {
  return {
    index: t.idx, kind: t.kind, parents: parse(t.parents_json), choices: parse(t.choices_json),
    instructions: parse(t.instructions_json), demoIds: parse(t.demo_ids_json), score: t.score,
    exampleScores: t.example_scores_json === null ? null : exampleScores(t.example_scores_json), budgetSpent: t.budget_spent,
    lmCalls: t.lm_calls, inputTokens: t.input_tokens, outputTokens: t.output_tokens, cost: t.cost,
    durationMs: t.duration_ms, error: t.error, data: parse(t.data_json), reused: t.reused,
  };
}

export function summary(raw: RunRaw): RunSummary {
  return {
    id: raw.id, kind: raw.kind, name: raw.name, status: raw.status, startedAt: raw.started_at, endedAt: raw.ended_at,
    score: raw.score, config: parse(raw.config_json), summary: parse(raw.summary_json), error: raw.error,
  };
}

const EXAMPLE = "LabStore.recordExample";
const TRIAL = "LabStore.recordTrial";

/**
 * What a row keeps, with registered keys masked (a user's error or input may carry one). Masked in
 * the decoded values, never in the JSON text, so what is stored always parses back. A value JSON
 * cannot hold (a BigInt, a cycle) is a `ValidationError` naming where it is, e.g. `config.seed`.
 */
function json(value: unknown, where: string, field: string): string {
  let text: string | undefined;
  try {
    text = redactedJson(value ?? null) as string | undefined;
  } catch (error) {
    const why = notJson(value, field, []) ?? (error instanceof Error ? error.message : String(error));
    throw new ValidationError(
      `${where}: ${field} cannot be stored as JSON: ${why}. Give plain values: strings, numbers, booleans, null, arrays and objects`,
      { field, cause: error },
    );
  }
  if (text === undefined) {
    throw new ValidationError(`${where}: ${field} cannot be stored as JSON: it is a ${typeof value}`, { field });
  }
  return text;
}

/** Where in `value` JSON gives up (a BigInt, a cycle), as a path from `path`; undefined when nowhere. */
function notJson(value: unknown, path: string, enclosing: [object, string][]): string | undefined {
  if (typeof value === "bigint") return `${path} is a BigInt (${value}n)`;
  if (value === null || typeof value !== "object") return undefined;
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === "function") return notJson(toJson.call(value), path, enclosing);
  const outer = enclosing.find(([o]) => o === value);
  if (outer !== undefined) return `${path} refers back to ${outer[1]} (a cycle)`;
  const inside: [object, string][] = [...enclosing, [value, path]];
  const entries = Array.isArray(value) ? value.map((v, i): [string, unknown] => [`[${i}]`, v])
    : Object.entries(value).map(([k, v]): [string, unknown] => [/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`, v]);
  for (const [step, item] of entries) {
    const found = notJson(item, `${path}${step}`, inside);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A caller's value in a message: strings quoted, objects by kind, anything else as its own text. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "an array" : "an object";
  return String(value);
}

/** An error as a row keeps it: secrets masked, and any URL in it without its credentials. */
function text(value: string | null | undefined): string | null {
  return value == null ? null : redactError(value);
}

const BATCH_STATUSES: readonly unknown[] = ["submitted", "completed", "failed"];

/** One `lab_batches` row as a `RunBatch`; a row that does not read as one is a `ValidationError` naming the store, run and row. */
export function batchFrom(b: BatchRaw & { rowid: number | string }, path: string, runId: string): RunBatch {
  const wrong = batchRowProblem(b);
  if (wrong !== undefined) {
    throw new ValidationError(
      `The lab store at ${path}: run ${runId}, lab_batches row ${b.rowid} (batch ${JSON.stringify(redactError(String(b.batch_id)))}) cannot be read: ${wrong}. ` +
        "The row was changed outside typelm; restore it, or delete it to have its requests sent again",
      { field: "lab_batches" },
    );
  }
  return {
    batchId: b.batch_id, provider: b.provider, model: b.model, endpoint: b.endpoint, round: b.round,
    customIds: parse(b.custom_ids_json), status: b.status, createdAt: b.created_at,
  };
}

/** What is wrong with a `lab_batches` row, or undefined when it reads as a batch. */
export function batchRowProblem(b: BatchRaw): string | undefined {
  for (const column of ["batch_id", "provider", "model", "endpoint"] as const) {
    if (typeof b[column] !== "string" || b[column] === "") return `${column} is ${JSON.stringify(b[column])}; expected a non-empty text`;
  }
  if (!Number.isInteger(b.round) || b.round < 0) return `round is ${JSON.stringify(b.round)}; expected a whole number ≥ 0`;
  if (!BATCH_STATUSES.includes(b.status)) return `status is ${JSON.stringify(b.status)}; expected "submitted", "completed" or "failed"`;
  let ids: unknown;
  try {
    ids = JSON.parse(String(b.custom_ids_json));
  } catch (error) {
    return `custom_ids_json is not JSON (${error instanceof Error ? error.message : String(error)}); expected a JSON array of request keys`;
  }
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) {
    return `custom_ids_json is ${preview(ids)}; expected a JSON array of request keys (strings)`;
  }
  return undefined;
}

function parse<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** Per-example scores; entries written before per-example errors were kept read as `error: null`. */
function exampleScores(text: string): ExampleScore[] {
  return parse<{ exampleId: string; score: number; error?: string | null }[]>(text)
    .map((e) => ({ exampleId: e.exampleId, score: e.score, error: e.error ?? null }));
}

function finiteOrNull(value: number | null): number | null {
  return value === null || !Number.isFinite(value) ? null : value;
}
