import { builtin, loadOnFirstUse } from "../load-sync.js";
import type { Database } from "better-sqlite3";
import { ConfigurationError } from "../errors.js";
import { STORE_MIGRATIONS } from "./migrations.js";
import type { Migration } from "./migrations.js";

export type { Database } from "better-sqlite3";
export type { Migration } from "./migrations.js";
export { STORE_MIGRATIONS } from "./migrations.js";

/** How long a write waits for another process's lock before it fails (ms). */
const BUSY_TIMEOUT_MS = 5000;

/** One connection per file per process, shared by the LM cache, the lab store and the registry. */
const open = new Map<string, Database>();

/**
 * Opens (creating when missing) the SQLite file at `path` in WAL mode and applies the store's
 * migrations, synchronously. better-sqlite3 is loaded on first use, so importing typelm never loads
 * a native module. `":memory:"` gives a private in-memory database (not shared between calls).
 */
export function openStoreSync(path: string): Database {
  if (path === ":memory:") return connect(path);
  const absolute = builtin("node:path").resolve(path);
  let db = open.get(absolute);
  if (db !== undefined && db.open) return db;
  db = connect(absolute);
  open.set(absolute, db);
  return db;
}

/** `openStoreSync` for asynchronous callers (the LM cache): a failure is a rejected promise. */
export function openStore(path: string): Promise<Database> {
  return new Promise((done) => done(openStoreSync(path)));
}

const betterSqlite3 = loadOnFirstUse<typeof import("better-sqlite3")>("better-sqlite3");

function connect(path: string): Database {
  const BetterSqlite3 = betterSqlite3();
  let db: Database | undefined;
  try {
    if (path !== ":memory:") builtin("node:fs").mkdirSync(builtin("node:path").dirname(path), { recursive: true });
    db = new BetterSqlite3(path);
    // Several processes (notebook, optimizer run) may share the file: wait for a lock instead of failing.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    migrate(db, STORE_MIGRATIONS);
    return db;
  } catch (error) {
    db?.close();
    throw storeError(path, "open", error);
  }
}

/** Applies the migrations not yet recorded in `schema_migrations`, each in its own transaction. */
export function migrate(db: Database, migrations: readonly Migration[]): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const applied = db.prepare("SELECT 1 FROM schema_migrations WHERE name = ?");
  const record = db.prepare("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)");
  for (const migration of migrations) {
    if (applied.get(migration.name) !== undefined) continue;
    // A table rebuilt under its children: foreign keys off (outside the transaction, as SQLite needs), checked before commit.
    if (migration.foreignKeysOff === true) db.pragma("foreign_keys = OFF");
    try {
      db.transaction(() => {
        // Another process may have applied it between our check and our write lock.
        if (applied.get(migration.name) !== undefined) return;
        db.exec(migration.sql);
        if (migration.foreignKeysOff === true && (db.pragma("foreign_key_check") as unknown[]).length > 0) throw new Error(`migration ${migration.name} broke a foreign key`);
        record.run(migration.name, new Date().toISOString());
      }).immediate();
    } finally {
      if (migration.foreignKeysOff === true) db.pragma("foreign_keys = ON");
    }
  }
}

/**
 * Turns a SQLite failure on `path` into a `ConfigurationError` that says what to do. Errors that
 * are not about the file (a constraint, a bug) are returned unchanged.
 */
export function storeError(path: string, action: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const hint = typeof code === "string" ? HINTS.find(([prefix]) => code.startsWith(prefix))?.[1] : undefined;
  if (action !== "open" && hint === undefined) return error;
  return new ConfigurationError(
    `Cannot ${action} the SQLite store at ${path}: ${message}${code === undefined ? "" : ` (${String(code)})`}. ` +
      (hint ?? "Expected a writable file path: give another path with configure((c) => { c.lab = { path } }) or the `path` option."),
    { cause: error },
  );
}

const HINTS: [string, string][] = [
  ["SQLITE_BUSY", `Another process held a lock on the file for more than ${BUSY_TIMEOUT_MS} ms: let it finish (or stop it) and try again, or give this process another file with configure((c) => { c.lab = { path } }).`],
  ["SQLITE_LOCKED", "The file is locked by another connection: let it finish and try again."],
  ["SQLITE_READONLY", "The file or its folder is read-only: make both writable (the store also writes -wal and -shm files beside it) or give another path with configure((c) => { c.lab = { path } })."],
  ["SQLITE_CANTOPEN", "The file or its folder cannot be opened for writing: check that the folder exists and is writable, or give another path with configure((c) => { c.lab = { path } })."],
  ["SQLITE_PERM", "The operating system denied access: make the file and its folder writable, or give another path."],
  ["SQLITE_NOTADB", "The file is not a SQLite database: give another path, or move the file away."],
  ["SQLITE_CORRUPT", "The file is damaged: move it away (a new one is created) or restore a copy."],
  ["SQLITE_FULL", "The disk is full: free space and try again."],
  ["SQLITE_IOERR", "The operating system failed to read or write the file: check the disk and the folder's permissions."],
];

/** Closes the connection to `path` (for tests and clean shutdown); every user of the file loses it. */
export function closeStoreSync(path: string): void {
  const absolute = builtin("node:path").resolve(path);
  const db = open.get(absolute);
  if (db === undefined) return;
  open.delete(absolute);
  db.close();
}

export async function closeStore(path: string): Promise<void> {
  closeStoreSync(path);
}
