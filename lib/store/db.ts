import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Database } from "better-sqlite3";
import { ConfigurationError } from "../errors.js";

export type { Database } from "better-sqlite3";

/** Where the lab's SQLite file lives unless a path is given (relative to the working directory). */
export const DEFAULT_STORE_PATH = ".typelm/lab.sqlite";

/** A named, idempotent schema step. Applied once per file, in the order given, and recorded. */
export interface Migration {
  name: string;
  sql: string;
}

/** Tables the store always has. Other parts (registry, optimizer runs) pass their own to `migrate`. */
export const CORE_MIGRATIONS: readonly Migration[] = [
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
];

/** One connection per file per process: better-sqlite3 is synchronous, and WAL lets other processes read. */
const open = new Map<string, Promise<Database>>();

/**
 * Opens (creating when missing) the SQLite file at `path` in WAL mode and applies the core
 * migrations. better-sqlite3 is loaded on first use, so importing typelm never loads a native module.
 * `":memory:"` gives a private in-memory database (not shared between calls).
 */
export function openStore(path: string = DEFAULT_STORE_PATH): Promise<Database> {
  if (path === ":memory:") return connect(path);
  const absolute = resolve(path);
  let db = open.get(absolute);
  if (db === undefined) {
    db = connect(absolute);
    open.set(absolute, db);
    db.catch(() => open.delete(absolute));
  }
  return db;
}

async function connect(path: string): Promise<Database> {
  const { default: BetterSqlite3 } = await import("better-sqlite3");
  let db: Database;
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    db = new BetterSqlite3(path);
    db.pragma("journal_mode = WAL");
    // Several processes (notebook, optimizer run) may share the file: wait for a lock instead of failing.
    db.pragma("busy_timeout = 5000");
    db.pragma("synchronous = NORMAL");
  } catch (error) {
    throw new ConfigurationError(
      `Cannot open the SQLite store at ${path}: expected a writable file path; received error: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  migrate(db, CORE_MIGRATIONS);
  return db;
}

/** Applies the migrations not yet recorded in `schema_migrations`, each in its own transaction. */
export function migrate(db: Database, migrations: readonly Migration[]): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const applied = db.prepare("SELECT 1 FROM schema_migrations WHERE name = ?");
  const record = db.prepare("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)");
  for (const migration of migrations) {
    if (applied.get(migration.name) !== undefined) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.name, new Date().toISOString());
    })();
  }
}

/** Closes the connection to `path` opened by `openStore` (for tests and clean shutdown). */
export async function closeStore(path: string = DEFAULT_STORE_PATH): Promise<void> {
  const absolute = resolve(path);
  const db = open.get(absolute);
  if (db === undefined) return;
  open.delete(absolute);
  (await db).close();
}
