/**
 * The PostgreSQL engine of the lab store: one connection pool per database URL per process, and the
 * schema as the same named migrations as the SQLite file (the names match, the SQL is PostgreSQL's).
 * `pg` is an optional peer dependency, loaded when a PostgreSQL store is first opened.
 */
import type { Pool, PoolClient } from "pg";
import { ConfigurationError } from "../errors.js";
import { redactError, shownUrl } from "../instrument/redact.js";
import { requireOptional } from "../optional.js";
import type { Migration } from "./migrations.js";
import { PG_FEATURE } from "./pg-url.js";
import { PG_ANNOTATIONS } from "./annotations/pg-schema.js";
import { PG_MEDIA_MIGRATION } from "./media/pg-media.js";

export { isPostgresUrl } from "./pg-url.js";

/**
 * The lab's tables on PostgreSQL, the state SQLite's migrations 001-005 reach: the same tables and
 * columns (JSON kept as text, so both engines read it back the same way); `seq` orders runs (and
 * batches) newest first as SQLite's rowid does.
 */
export const PG_MIGRATIONS: readonly Migration[] = [
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
      seq BIGSERIAL PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL CHECK (kind IN ('evaluation', 'optimization')),
      name TEXT NOT NULL,
      status TEXT NOT NULL CONSTRAINT lab_runs_status CHECK (status IN ('running', 'completed', 'failed')),
      started_at TEXT NOT NULL,
      ended_at TEXT,
      score DOUBLE PRECISION,
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
      duration_ms DOUBLE PRECISION NOT NULL,
      input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL,
      cost DOUBLE PRECISION NOT NULL,
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
      score DOUBLE PRECISION,
      example_scores_json TEXT,
      budget_spent DOUBLE PRECISION NOT NULL,
      lm_calls INTEGER NOT NULL,
      input_tokens INTEGER NOT NULL,
      output_tokens INTEGER NOT NULL,
      cost DOUBLE PRECISION NOT NULL,
      duration_ms DOUBLE PRECISION NOT NULL,
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
      score DOUBLE PRECISION,
      metadata_json TEXT NOT NULL,
      state_json TEXT NOT NULL,
      module_class TEXT NOT NULL,
      PRIMARY KEY (name, version)
    )`,
  },
  {
    name: "004_lab_stopped_reused",
    sql: `ALTER TABLE lab_runs DROP CONSTRAINT lab_runs_status,
      ADD CONSTRAINT lab_runs_status CHECK (status IN ('running', 'completed', 'failed', 'stopped'));
    ALTER TABLE lab_trials ADD COLUMN reused INTEGER NOT NULL DEFAULT 0`,
  },
  {
    name: "005_lab_batches",
    sql: `CREATE TABLE IF NOT EXISTS lab_batches (
      seq BIGSERIAL,
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
    // The column and the text table the file's model-call recording uses; this engine does not record calls yet.
    name: "006_lab_row_calls",
    sql: `ALTER TABLE lab_rows ADD COLUMN IF NOT EXISTS calls_json TEXT;
    CREATE TABLE IF NOT EXISTS lab_texts (hash TEXT PRIMARY KEY, text TEXT NOT NULL)`,
  },
  {
    name: "007_lab_rows_failed",
    sql: "CREATE INDEX IF NOT EXISTS lab_rows_failed ON lab_rows (run_id, idx) WHERE error IS NOT NULL",
  },
  {
    // What a metric said of an example beyond its score (a judge's verdict and rationale).
    name: "008_lab_row_details",
    sql: "ALTER TABLE lab_rows ADD COLUMN IF NOT EXISTS details_json TEXT",
  },
  {
    // The order rows were written in, as SQLite's rowid: the viewer's live page asks for the rows after the last it saw.
    name: "009_lab_rows_seq_pg",
    sql: `ALTER TABLE lab_rows ADD COLUMN IF NOT EXISTS seq BIGSERIAL;
    CREATE INDEX IF NOT EXISTS lab_rows_seq ON lab_rows (run_id, seq)`,
  },
  PG_ANNOTATIONS,
  PG_MEDIA_MIGRATION,
  {
    // Runs of production traces (kind 'traces') and users' feedback on traces, as the file's 011.
    name: "011_lab_traces",
    sql: `ALTER TABLE lab_runs DROP CONSTRAINT IF EXISTS lab_runs_kind_check,
      ADD CONSTRAINT lab_runs_kind_check CHECK (kind IN ('evaluation', 'optimization', 'traces'));
    CREATE TABLE IF NOT EXISTS lab_feedback (seq BIGSERIAL PRIMARY KEY, trace_id TEXT NOT NULL, score DOUBLE PRECISION NOT NULL, comment TEXT, created_at TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS lab_feedback_trace ON lab_feedback (trace_id)`,
  },
];

/** A key for `pg_advisory_xact_lock`: one process at a time migrates a database. */
const MIGRATION_LOCK = 7_402_118_311;

interface Connection {
  pool: Pool;
  /** Settles once the schema is up to date (migrations run on the first use of the database). */
  ready: Promise<void>;
}

const pools = new Map<string, Connection>();

/**
 * The pool for `url`, shared by every store on it in this process; the schema is brought up to
 * date before the first query. Loads `pg` (a missing package is a `ConfigurationError` with the
 * install line). Idle connections do not keep the process alive.
 */
export function postgresPool(url: string): Connection {
  let found = pools.get(url);
  if (found !== undefined) return found;
  const pg = requireOptional<typeof import("pg")>("pg", PG_FEATURE);
  const Pool = pg.Pool ?? (pg as unknown as { default: typeof import("pg") }).default.Pool;
  const pool = new Pool({ connectionString: url, max: 4, allowExitOnIdle: true });
  // An idle client losing its connection (the server restarted) is an event, not a crash.
  pool.on("error", () => undefined);
  const ready = withClient(pool, (client) => migratePostgres(client, PG_MIGRATIONS)).catch((error: unknown) => {
    pools.delete(url);
    void pool.end().catch(() => undefined);
    throw postgresError(url, "open", error);
  });
  ready.catch(() => undefined);
  found = { pool, ready };
  pools.set(url, found);
  return found;
}

async function withClient<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await fn(client);
  } finally {
    client.release();
  }
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, in one transaction holding an
 * advisory lock, so processes opening a new database at once apply each migration once.
 */
export async function migratePostgres(client: PoolClient, migrations: readonly Migration[]): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    // Only when missing: CREATE ... IF NOT EXISTS needs CREATE on the schema even when the table is there,
    // and a role that only reads and writes the lab's tables has no such right.
    const { rows: [found] } = await client.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
    if (found?.t == null) await client.query("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
    const applied = new Set((await client.query<{ name: string }>("SELECT name FROM schema_migrations")).rows.map((r) => r.name));
    for (const migration of migrations) {
      if (applied.has(migration.name)) continue;
      await client.query(migration.sql);
      await client.query("INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)", [migration.name, new Date().toISOString()]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** Ends the pools of every PostgreSQL store opened in this process (tests, clean shutdown). */
export async function closePostgresPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map(async (c) => {
    await c.ready.catch(() => undefined);
    await c.pool.end();
  }));
}

/**
 * A failure to reach or use the database as a `ConfigurationError` that says what to check, with
 * the URL shown without its credentials. Errors that are not about the connection are returned unchanged.
 */
export function postgresError(url: string, action: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = redactError(error instanceof Error ? error.message : String(error));
  const connection = typeof code === "string" && (/^(08|28|3D|53|57P)/.test(code) || /^E[A-Z]+/.test(code));
  if (action !== "open" && !connection) return error;
  if (error instanceof ConfigurationError) return error;
  if (code === "ERR_INVALID_URL") {
    return new ConfigurationError(
      `Cannot ${action} the PostgreSQL lab store at ${shownUrl(url)}: the URL does not parse. A password holding / ? # @ or % must be ` +
        "percent-encoded (/ as %2F, ? as %3F, # as %23, @ as %40, % as %25), e.g. postgres://user:pa%2Fss@host:5432/typelm.",
      { cause: error },
    );
  }
  return new ConfigurationError(
    `Cannot ${action} the PostgreSQL lab store at ${shownUrl(url)}: ${message}${code === undefined ? "" : ` (${String(code)})`}. ` +
      "Check that the server is running and reachable, that the database exists and that the user may create tables in it " +
      "(c.lab = { url } or TYPELM_LAB_URL, e.g. postgres://user:password@host:5432/typelm).",
    { cause: error },
  );
}
