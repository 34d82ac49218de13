// The viewer's slow reads of a lab store file, off the server's event loop: better-sqlite3 is
// synchronous, so a filter over a large run (text searched in every row) would stop every other page
// until it ended. This worker thread holds its own read-only connection to the file and runs one
// query at a time; the server stops one (its client went away, or it ran past its time) by writing
// the job's id into a shared flag, which the query reads through `typelm_live(...)` on every row it
// visits. Loaded only by lib/view/query-thread.ts, as a file of its own.
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type { Database } from "better-sqlite3";

/** A query to run: all rows, or the first. */
export interface QueryJob {
  id: number;
  sql: string;
  params: Record<string, unknown>;
  first: boolean;
}

/** The rows, or why there are none (`stopped`: the server asked it to stop). */
export type QueryAnswer = { id: number; rows: unknown[] } | { id: number; error: string; code?: string; stopped: boolean };

/** What the worker is started with: the file, and the flag the server writes a job's id into to stop it. */
export interface QueryWorkerData {
  path: string;
  stop: SharedArrayBuffer;
}

const STOPPED = "typelm: the query was stopped";

const data = workerData as QueryWorkerData;
const stop = new Int32Array(data.stop);
let current = 0;
let db: Database | undefined;

function open(): Database {
  if (db !== undefined) return db;
  const BetterSqlite3 = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
  const opened = new BetterSqlite3(data.path, { readonly: true, fileMustExist: true });
  opened.pragma("busy_timeout = 5000");
  // Called for every row a slow query visits: throws once the server has asked this job to stop.
  opened.function("typelm_live", { deterministic: false, varargs: true }, () => {
    if (Atomics.load(stop, 0) === current) throw new Error(STOPPED);
    return 1;
  });
  return (db = opened);
}

parentPort!.on("message", (job: QueryJob) => {
  current = job.id;
  let answer: QueryAnswer;
  try {
    if (Atomics.load(stop, 0) === job.id) throw new Error(STOPPED);
    const statement = open().prepare(job.sql);
    answer = { id: job.id, rows: job.first ? [statement.get(job.params)] : statement.all(job.params) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown }).code;
    answer = { id: job.id, error: message, code: typeof code === "string" ? code : undefined, stopped: message.includes(STOPPED) };
  }
  current = 0;
  parentPort!.postMessage(answer);
});
