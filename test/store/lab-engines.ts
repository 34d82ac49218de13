// What the store suites that run on both engines share: sample records, and a factory per engine that
// opens a lab store on a fresh temporary SQLite file or a fresh database of the test PostgreSQL server.
import { afterAll, beforeAll, test } from "@jest/globals";
import pg from "pg";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeStoreSync, openStore, openStoreSync } from "../../lib/store/db.js";
import { LabStore, type Lab } from "../../lib/store/lab-store.js";
import { LMCacheTable, type LMCacheRow } from "../../lib/store/lm-cache.js";
import { PostgresLabStore } from "../../lib/store/pg-lab-store.js";
import { PostgresLMCacheTable } from "../../lib/store/pg-lm-cache.js";
import { closePostgresPools } from "../../lib/store/pg.js";
import type { EvaluationRow, Trial } from "../../lib/store/records.js";
import { POSTGRES_INSTALL_HINT, postgresInstalled, startPostgresServer, type PostgresTestServer } from "../helpers/postgres.js";

export function row(index: number, overrides: Partial<EvaluationRow> = {}): EvaluationRow {
  return {
    index, exampleId: `test-${index}`, inputs: { sentence: `s${index}` }, expected: { label: "positive" },
    prediction: { label: index % 2 === 0 ? "positive" : "negative" }, scores: { accuracy: index % 2 === 0 ? 1 : 0 },
    error: null, durationMs: 12.5, inputTokens: 10 + index, outputTokens: 2, cost: 0.001, ...overrides,
  };
}

export function trial(index: number, overrides: Partial<Trial> = {}): Trial {
  return {
    index, kind: "minibatch", parents: [], choices: { self: { instruction: index, demos: 1 } },
    instructions: { self: `Instruction ${index}` }, demoIds: { self: ["train-1", "train-7"] }, score: 0.5 + index / 10,
    exampleScores: null, budgetSpent: 3 * (index + 1), lmCalls: 3, inputTokens: 100, outputTokens: 20, cost: 0.01,
    durationMs: 40, error: null, data: { minibatch: [1, 2, 3] }, reused: 0, ...overrides,
  };
}

export type EngineName = "sqlite" | "postgresql";

/** The LM cache table of either engine, behind one awaited interface. */
export interface CacheTable {
  get(key: string): Promise<LMCacheRow | undefined>;
  put(row: LMCacheRow): Promise<void>;
}

/** One engine under test: fresh empty labs and the engine's own classes on them. */
export interface Engine {
  name: EngineName;
  /** A new empty lab: a file path (SQLite) or a database URL (PostgreSQL). */
  fresh(): string;
  open(location: string): Lab;
  cache(location: string): Promise<CacheTable>;
  /** Starts the server (PostgreSQL) before the suite. */
  setup(): Promise<void>;
  teardown(): Promise<void>;
}

/** Waits for a store's queued writes (PostgreSQL) and rejects with the first that failed; nothing to wait for on SQLite. */
export async function settle(lab: Lab): Promise<void> {
  if (lab.engine === "postgresql") await lab.flush();
}

export function sqliteEngine(): Engine {
  let dir = "";
  let n = 0;
  const files: string[] = [];
  return {
    name: "sqlite",
    fresh() {
      dir ||= mkdtempSync(join(tmpdir(), "typelm-contract-"));
      const path = join(dir, `lab-${++n}.sqlite`);
      files.push(path);
      return path;
    },
    open: (path) => LabStore.open(path),
    async cache(path) {
      const table = new LMCacheTable(await openStore(path));
      return { get: async (key) => table.get(key), put: async (r) => table.put(r) };
    },
    async setup() { /* nothing to start */ },
    async teardown() {
      for (const path of files) closeStoreSync(path);
      if (dir !== "") rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function postgresEngine(): Engine & { server(): PostgresTestServer } {
  let server: PostgresTestServer | undefined;
  let n = 0;
  return {
    name: "postgresql",
    server: () => server!,
    fresh: () => server!.createDatabase(`contract_${process.pid}_${++n}`),
    open: (url) => PostgresLabStore.open(url),
    async cache(url) {
      const table = new PostgresLMCacheTable(url);
      return { get: (key) => table.get(key), put: (r) => table.put(r) };
    },
    async setup() { server = await startPostgresServer(); },
    async teardown() {
      await closePostgresPools();
      await server?.stop();
    },
  };
}

export const postgresAvailable = postgresInstalled();

/**
 * Whether the PostgreSQL half of a suite runs: without the server binaries it is skipped with the
 * install line, except under CI=true, where a test that fails says what is missing.
 */
export function requirePostgres(suite: string): boolean {
  if (postgresAvailable) return true;
  if (process.env.CI === "true") {
    test(`the PostgreSQL server binaries are installed (CI installs them): ${suite}`, () => {
      throw new Error(`PostgreSQL is not installed, so ${suite} cannot run on it. Install it with: ${POSTGRES_INSTALL_HINT}`);
    });
  } else {
    console.warn(`Skipping ${suite} on PostgreSQL: no server binaries. Install them with: ${POSTGRES_INSTALL_HINT}`);
  }
  return false;
}

/** Runs one statement on the database at `url` with a plain client (not through the store) and returns its rows. */
export async function sqlOn(url: string, text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query(text, params)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/**
 * The engines a suite runs on: SQLite always, PostgreSQL where its server binaries are (see
 * `requirePostgres`), with the hooks that start the server before the suite and stop both after it.
 */
export function bothEngines(suite: string): {
  sqlite: Engine;
  postgres: ReturnType<typeof postgresEngine>;
  withPostgres: boolean;
  engines: [string, Engine][];
} {
  const sqlite = sqliteEngine();
  const postgres = postgresEngine();
  const withPostgres = requirePostgres(suite);
  beforeAll(async () => {
    if (withPostgres) await postgres.setup();
  }, 60_000);
  afterAll(async () => {
    await sqlite.teardown();
    if (postgresAvailable) await postgres.teardown();
  }, 30_000);
  return { sqlite, postgres, withPostgres, engines: [["sqlite", sqlite], ...(withPostgres ? [["postgresql", postgres] as [string, Engine]] : [])] };
}

/** Plain SQL on an engine's database (the SQLite file or the PostgreSQL URL `location`), not through the store. */
export async function sqlIn(engine: Engine, location: string, text: string): Promise<Record<string, unknown>[]> {
  if (engine.name === "postgresql") return sqlOn(location, text);
  return openStoreSync(location).prepare(text).all() as Record<string, unknown>[];
}

