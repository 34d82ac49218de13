/**
 * The schema of the lab's SQLite file, as one ordered list of migrations shared by every user of the
 * file (LM cache, lab store, registry). A migration is applied once per file and recorded in
 * `schema_migrations`; never edit one that has shipped, add a new one.
 *
 * Tables (JSON columns hold the `records.ts` shapes; numbers are REAL unless said):
 * - `lm_cache`          one cached model reply per request key (see lm-cache.ts).
 * - `lab_runs`          one row per evaluation or optimization run. `seq` (INTEGER, autoincrement)
 *                       gives "newest first"; `id` is the public run id; `status` running|completed|failed|stopped
 *                       (stopped: an optimizer's maxCost ended it, from 004);
 *                       `config_json`, `summary_json` objects; `score`, `error`, `best_trial` nullable;
 *                       `started_at`, `ended_at` ISO 8601.
 * - `lab_rows`          one row per evaluated example, keyed (run_id, idx), written when it finishes:
 *                       example_id, inputs/expected/prediction/scores JSON, error, duration_ms,
 *                       input_tokens, output_tokens (INTEGER), cost.
 * - `lab_trials`        one row per optimizer trial or candidate, keyed (run_id, idx), written when it
 *                       finishes: kind, parents_json (GEPA's parent candidates), choices/instructions/
 *                       demo_ids JSON, score, example_scores_json (per-example scores for a Pareto
 *                       front; entries { exampleId, score, error }), budget_spent, lm_calls, tokens, cost,
 *                       duration_ms, error, data_json, reused (INTEGER, from 004: examples whose score
 *                       came from an earlier trial of the run).
 * - `lab_batches`       (from 005) one row per provider batch a run submitted, keyed (run_id, batch_id),
 *                       written as soon as the provider accepted it (before the first poll): provider,
 *                       model, endpoint (shown form), round, custom_ids_json (the request keys it holds),
 *                       status (submitted|completed|failed), created_at; a resumed run re-attaches to it.
 *                       From 006: calls_json, the model calls the example made (recordCalls), an array of
 *                       { provider, model, messages, reply | replyHash, inputTokens, outputTokens, cost,
 *                       latencyMs, cached }; each message { role, content } (short) or { role, text } (the
 *                       hash of a long content in lab_texts); null when none were recorded. Rows written
 *                       since keep a shorter form (see stored-calls.ts); both read back.
 * - `lab_texts`         (from 006) each long text a recorded call sent or received, once: hash (the first
 *                       128 bits of its sha256, hex), text. A system prompt repeated in every call is stored once.
 *                       (from 007) index lab_rows_failed: a run's failed rows (error IS NOT NULL).
 * - `annotations`       (from 010) people's reviews of runs' rows: see annotations/schema.ts.
 * - `media`             (from 010_media_values) each media value a row or recorded call holds, once by the
 *                       sha256 of its bytes: media_type, kind, size, bytes (see media/refs.ts).
 * - `registry_versions` one stored module per (name, version): created_at, score, metadata_json,
 *                       state_json (per predictor: instruction, demos, signature fingerprint) and
 *                       module_class (the class name `load` rebuilds).
 * - (from 011) `lab_runs.kind` may be `traces` (production traces, one run per module and UTC day);
 *   `lab_feedback`: a user's feedback on a trace (trace_id = the trace row's example_id), score, comment, created_at.
 */

import { SQLITE_ANNOTATIONS } from "./annotations/schema.js";
import { MEDIA_MIGRATION } from "./media/tables.js";

/** A named, idempotent schema step. Applied once per file, in the order given, and recorded. */
export interface Migration {
  name: string;
  sql: string;
  /** SQLite: run with foreign keys off (a parent table rebuilt under its children), checked before it commits. */
  foreignKeysOff?: boolean;
}

export const STORE_MIGRATIONS: readonly Migration[] = [
  {
    name: "001_lm_cache",
    sql: `CREATE TABLE IF NOT EXISTS lm_cache (
      key TEXT PRIMARY KEY,
      provider TEXT NOT NULL,
      model TEXT NOT NULL,
      request_json TEXT NOT NULL,
      content TEXT NOT NULL,
      input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL,
      finish_reason TEXT,
      created_at TEXT NOT NULL
    )`,
  },
  {
    name: "002_lab_runs",
    sql: `CREATE TABLE IF NOT EXISTS lab_runs (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL CHECK (kind IN ('evaluation', 'optimization')),
      name TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
      started_at TEXT NOT NULL,
      ended_at TEXT,
      score REAL,
      config_json TEXT NOT NULL,
      summary_json TEXT NOT NULL,
      error TEXT,
      best_trial INTEGER
    );
    CREATE INDEX IF NOT EXISTS lab_runs_kind ON lab_runs (kind, seq);
    CREATE TABLE IF NOT EXISTS lab_rows (
      run_id TEXT NOT NULL REFERENCES lab_runs (id) ON DELETE CASCADE,
      idx INTEGER NOT NULL,
      example_id TEXT,
      inputs_json TEXT NOT NULL,
      expected_json TEXT NOT NULL,
      prediction_json TEXT,
      scores_json TEXT NOT NULL,
      error TEXT,
      duration_ms REAL NOT NULL,
      input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL,
      cost REAL NOT NULL,
      PRIMARY KEY (run_id, idx)
    );
    CREATE TABLE IF NOT EXISTS lab_trials (
      run_id TEXT NOT NULL REFERENCES lab_runs (id) ON DELETE CASCADE,
      idx INTEGER NOT NULL,
      kind TEXT NOT NULL,
      parents_json TEXT NOT NULL,
      choices_json TEXT NOT NULL,
      instructions_json TEXT NOT NULL,
      demo_ids_json TEXT NOT NULL,
      score REAL,
      example_scores_json TEXT,
      budget_spent REAL NOT NULL,
      lm_calls INTEGER NOT NULL,
      input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL,
      cost REAL NOT NULL,
      duration_ms REAL NOT NULL,
      error TEXT,
      data_json TEXT NOT NULL,
      PRIMARY KEY (run_id, idx)
    )`,
  },
  {
    name: "003_registry",
    sql: `CREATE TABLE IF NOT EXISTS registry_versions (
      name TEXT NOT NULL,
      version INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      score REAL,
      metadata_json TEXT NOT NULL,
      state_json TEXT NOT NULL,
      module_class TEXT NOT NULL,
      PRIMARY KEY (name, version)
    )`,
  },
  {
    // SQLite cannot change a CHECK constraint in place, so lab_runs is rebuilt to accept 'stopped'
    // (and lab_trials gains `reused`). Dropping lab_runs while its children still point at it would
    // cascade-delete their rows (foreign_keys is on and cannot be switched off inside the
    // migration's transaction), so all three tables are copied to new ones, the old children are
    // dropped before the old parent, and the copies take the old names (renaming a parent rewrites
    // its children's REFERENCES, so they end up pointing at lab_runs again).
    name: "004_lab_stopped_reused",
    sql: `CREATE TABLE lab_runs_004 (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL CHECK (kind IN ('evaluation', 'optimization')),
      name TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'stopped')),
      started_at TEXT NOT NULL,
      ended_at TEXT,
      score REAL,
      config_json TEXT NOT NULL,
      summary_json TEXT NOT NULL,
      error TEXT,
      best_trial INTEGER
    );
    INSERT INTO lab_runs_004 (seq, id, kind, name, status, started_at, ended_at, score, config_json, summary_json, error, best_trial)
      SELECT seq, id, kind, name, status, started_at, ended_at, score, config_json, summary_json, error, best_trial FROM lab_runs;
    CREATE TABLE lab_rows_004 (
      run_id TEXT NOT NULL REFERENCES lab_runs_004 (id) ON DELETE CASCADE,
      idx INTEGER NOT NULL,
      example_id TEXT,
      inputs_json TEXT NOT NULL,
      expected_json TEXT NOT NULL,
      prediction_json TEXT,
      scores_json TEXT NOT NULL,
      error TEXT,
      duration_ms REAL NOT NULL,
      input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL,
      cost REAL NOT NULL,
      PRIMARY KEY (run_id, idx)
    );
    INSERT INTO lab_rows_004 SELECT run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error,
      duration_ms, input_tokens, output_tokens, cost FROM lab_rows;
    CREATE TABLE lab_trials_004 (
      run_id TEXT NOT NULL REFERENCES lab_runs_004 (id) ON DELETE CASCADE,
      idx INTEGER NOT NULL,
      kind TEXT NOT NULL,
      parents_json TEXT NOT NULL,
      choices_json TEXT NOT NULL,
      instructions_json TEXT NOT NULL,
      demo_ids_json TEXT NOT NULL,
      score REAL,
      example_scores_json TEXT,
      budget_spent REAL NOT NULL,
      lm_calls INTEGER NOT NULL,
      input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL,
      cost REAL NOT NULL,
      duration_ms REAL NOT NULL,
      error TEXT,
      data_json TEXT NOT NULL,
      reused INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (run_id, idx)
    );
    INSERT INTO lab_trials_004 (run_id, idx, kind, parents_json, choices_json, instructions_json, demo_ids_json, score,
      example_scores_json, budget_spent, lm_calls, input_tokens, output_tokens, cost, duration_ms, error, data_json)
      SELECT run_id, idx, kind, parents_json, choices_json, instructions_json, demo_ids_json, score,
      example_scores_json, budget_spent, lm_calls, input_tokens, output_tokens, cost, duration_ms, error, data_json FROM lab_trials;
    DROP TABLE lab_rows;
    DROP TABLE lab_trials;
    DROP TABLE lab_runs;
    ALTER TABLE lab_runs_004 RENAME TO lab_runs;
    ALTER TABLE lab_rows_004 RENAME TO lab_rows;
    ALTER TABLE lab_trials_004 RENAME TO lab_trials;
    CREATE INDEX IF NOT EXISTS lab_runs_kind ON lab_runs (kind, seq)`,
  },
  {
    name: "005_lab_batches",
    sql: `CREATE TABLE IF NOT EXISTS lab_batches (
      run_id TEXT NOT NULL REFERENCES lab_runs (id) ON DELETE CASCADE,
      batch_id TEXT NOT NULL,
      provider TEXT NOT NULL,
      model TEXT NOT NULL,
      endpoint TEXT NOT NULL,
      round INTEGER NOT NULL,
      custom_ids_json TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('submitted', 'completed', 'failed')),
      created_at TEXT NOT NULL,
      PRIMARY KEY (run_id, batch_id)
    )`,
  },
  {
    name: "006_lab_row_calls",
    sql: `ALTER TABLE lab_rows ADD COLUMN calls_json TEXT;
    CREATE TABLE IF NOT EXISTS lab_texts (
      hash TEXT PRIMARY KEY,
      text TEXT NOT NULL
    )`,
  },
  {
    // The failed rows of a run, for the viewer's "failed only" and its count (a partial index: only
    // failed rows are in it).
    name: "007_lab_rows_failed",
    sql: "CREATE INDEX IF NOT EXISTS lab_rows_failed ON lab_rows (run_id, idx) WHERE error IS NOT NULL",
  },
  {
    // What a metric said of an example beyond its score (a judge's verdict and rationale), by metric name.
    name: "008_lab_row_details",
    sql: "ALTER TABLE lab_rows ADD COLUMN details_json TEXT",
  },
  SQLITE_ANNOTATIONS,
  MEDIA_MIGRATION,
  {
    // Runs of production traces (kind 'traces') and users' feedback on traces. The CHECK on kind can
    // only change by rebuilding lab_runs, done with foreign keys off so its children keep their rows.
    name: "011_lab_traces",
    foreignKeysOff: true,
    sql: `CREATE TABLE lab_runs_011 (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL CHECK (kind IN ('evaluation', 'optimization', 'traces')), name TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'stopped')), started_at TEXT NOT NULL,
      ended_at TEXT, score REAL, config_json TEXT NOT NULL, summary_json TEXT NOT NULL, error TEXT, best_trial INTEGER
    );
    INSERT INTO lab_runs_011 SELECT seq, id, kind, name, status, started_at, ended_at, score, config_json, summary_json, error, best_trial FROM lab_runs;
    DROP TABLE lab_runs;
    ALTER TABLE lab_runs_011 RENAME TO lab_runs;
    CREATE INDEX IF NOT EXISTS lab_runs_kind ON lab_runs (kind, seq);
    CREATE TABLE IF NOT EXISTS lab_feedback (trace_id TEXT NOT NULL, score REAL NOT NULL, comment TEXT, created_at TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS lab_feedback_trace ON lab_feedback (trace_id)`,
  },
];
