/**
 * Rows per second into one lab with 1, 2, 4 and 8 writer processes: a team's lab on PostgreSQL
 * (`PostgresLabStore`, a real server started on a free loopback port as the tests do, or the one at
 * BENCH_PG_URL) and, for comparison, one SQLite file. Each writer is a process recording the rows of
 * its own evaluation run as an evaluation does (a few finished examples per turn of the event loop),
 * then finishing the run and waiting for its writes; every writer starts at the same moment. After
 * each round the rows are counted: a lost or duplicated row fails the bench.
 *
 * Run with `npm run bench:pg-writers` (builds to dist/, then runs dist/bench/pg-writers.js).
 * Options (environment variables): BENCH_WRITER_ROWS (rows per writer, 5000), BENCH_WRITERS
 * ("1,2,4,8"), BENCH_BURST (rows recorded per event-loop turn, 8), BENCH_PG_URL (an existing
 * database to use instead of starting a server; each round creates and drops a database beside it).
 * Without PostgreSQL's server binaries and without BENCH_PG_URL it says how to install them and exits 0.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { LabStore } from "../lib/index.js";
import type { EvaluationRow } from "../lib/index.js";
import { closeStoreSync, openStoreSync } from "../lib/store/db.js";
import { closePostgresPools } from "../lib/store/pg.js";
import { POSTGRES_INSTALL_HINT, postgresBinDir, startPostgresServer, type PostgresTestServer } from "../test/helpers/postgres.js";
import { intFromEnv } from "./env.js";

const ROWS = intFromEnv("BENCH_WRITER_ROWS", 5000);
const BURST = intFromEnv("BENCH_BURST", 8);
const WRITERS = (process.env["BENCH_WRITERS"] || "1,2,4,8").split(",").map((w) => {
  const n = Number.parseInt(w, 10);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_WRITERS must be a comma-separated list of positive integers, got ${JSON.stringify(process.env["BENCH_WRITERS"])}`);
  return n;
});

type Engine = "postgresql" | "sqlite";

/** A typical classification row (the shape bench:evaluate's (c) records). */
function row(writer: number, index: number): EvaluationRow {
  return {
    index, exampleId: `w${writer}-${index}`, inputs: { review: `Review #${index}: the product arrived on time and works as described.` },
    expected: { sentiment: "positive" }, prediction: { sentiment: index % 3 === 0 ? "negative" : "positive" },
    scores: { accuracy: index % 3 === 0 ? 0 : 1 }, error: null, durationMs: 412.5, inputTokens: 83, outputTokens: 6, cost: 0.0000161,
  };
}

// ---------------------------------------------------------------------------------------------
// A writer process: `node dist/bench/pg-writers.js --writer <engine> <location> <writer>`

async function writerProcess(engine: Engine, location: string, writer: number): Promise<void> {
  const lab = engine === "postgresql" ? LabStore.open({ url: location }) : LabStore.open(location);
  await lab.runs(); // connected (and the schema made) before the clock starts
  process.stdout.write("ready\n");
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) if (line.trim() === "go") break;
  lines.close();
  const started = Date.now();
  const id = lab.startRun({ kind: "evaluation", name: `bench writer ${writer}`, config: { writer } });
  for (let i = 0; i < ROWS; i++) {
    lab.recordExample(id, row(writer, i));
    if (i % BURST === BURST - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  lab.finishRun(id, { status: "completed", score: 2 / 3 });
  if (lab.engine === "postgresql") await lab.flush();
  const ended = Date.now();
  process.stdout.write(`${JSON.stringify({ started, ended })}\n`);
  await closePostgresPools();
  if (lab.engine === "sqlite") closeStoreSync(location);
}

// ---------------------------------------------------------------------------------------------
// The bench

interface Round { engine: Engine; writers: number; rows: number; wallMs: number; slowestMs: number }

async function round(engine: Engine, location: string, writers: number): Promise<Round> {
  const script = fileURLToPath(import.meta.url);
  const procs = Array.from({ length: writers }, (_, w) => {
    const proc = spawn(process.execPath, [script, "--writer", engine, location, String(w)], { stdio: "pipe" });
    let stdout = "", stderr = "";
    let ready: () => void = () => undefined;
    const isReady = new Promise<void>((resolve) => { ready = resolve; });
    proc.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (stdout.startsWith("ready\n")) ready();
    });
    proc.stderr.on("data", (d: Buffer) => { stderr += d.toString(); });
    const done = new Promise<{ started: number; ended: number }>((resolve, reject) => proc.on("exit", (code) => {
      if (code === 0) resolve(JSON.parse(stdout.trim().split("\n").pop()!) as { started: number; ended: number });
      else reject(new Error(`${engine} writer ${w} exited with ${code}:\n${stderr}`));
    }));
    done.catch(() => ready());
    return { proc, isReady, done };
  });
  await Promise.all(procs.map((p) => p.isReady));
  const go = Date.now();
  for (const p of procs) p.proc.stdin.write("go\n");
  const times = await Promise.all(procs.map((p) => p.done));
  const end = Math.max(...times.map((t) => t.ended));
  const rows = await countRows(engine, location);
  if (rows !== writers * ROWS) throw new Error(`${engine}, ${writers} writers: ${rows} rows in the lab, expected ${writers * ROWS} (lost or duplicated)`);
  return { engine, writers, rows, wallMs: end - go, slowestMs: Math.max(...times.map((t) => t.ended - t.started)) };
}

async function countRows(engine: Engine, location: string): Promise<number> {
  if (engine === "sqlite") {
    const n = (openStoreSync(location).prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT run_id || ':' || idx) AS d FROM lab_rows").get() as { n: number; d: number });
    closeStoreSync(location);
    return n.n === n.d ? n.n : -1;
  }
  const pg = (await import("pg")).default;
  const client = new pg.Client(location);
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number; d: number }>("SELECT COUNT(*)::int AS n, COUNT(DISTINCT (run_id, idx))::int AS d FROM lab_rows");
    return rows[0]!.n === rows[0]!.d ? rows[0]!.n : -1;
  } finally {
    await client.end();
  }
}

/** A new empty database per round: on the started server, or beside BENCH_PG_URL's. */
async function databases(): Promise<{ fresh(name: string): Promise<string>; stop(): Promise<void>; where: string }> {
  const given = process.env["BENCH_PG_URL"];
  if (given !== undefined && given !== "") {
    const pg = (await import("pg")).default;
    const made: string[] = [];
    const admin = async (sql: string) => {
      const client = new pg.Client(given);
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    };
    return {
      where: "the server at BENCH_PG_URL",
      async fresh(name) {
        await admin(`CREATE DATABASE "${name}"`);
        made.push(name);
        const url = new URL(given);
        url.pathname = `/${name}`;
        return url.toString();
      },
      async stop() {
        for (const name of made) await admin(`DROP DATABASE IF EXISTS "${name}"`).catch(() => undefined);
      },
    };
  }
  const server: PostgresTestServer = await startPostgresServer();
  return {
    where: `PostgreSQL ${postgresBinDir()!.split("/").at(-2)} on 127.0.0.1:${server.port} (fsync=off, synchronous_commit=off, as the tests start it)`,
    fresh: async (name) => server.createDatabase(name),
    stop: () => server.stop(),
  };
}

async function main(): Promise<void> {
  if (postgresBinDir() === undefined && !process.env["BENCH_PG_URL"]) {
    console.log(`bench:pg-writers skipped: no PostgreSQL server binaries. Install them with: ${POSTGRES_INSTALL_HINT}`);
    console.log("(or point BENCH_PG_URL at a database whose user may create databases)");
    return;
  }
  const dbs = await databases();
  const dir = mkdtempSync(join(tmpdir(), "typelm-bench-writers-"));
  const results: Round[] = [];
  console.log(`${ROWS} rows per writer, ${BURST} rows recorded per event-loop turn; PostgreSQL: ${dbs.where}; SQLite: a WAL file in ${tmpdir()}`);
  try {
    for (const writers of WRITERS) {
      for (const engine of ["postgresql", "sqlite"] as const) {
        const location = engine === "postgresql" ? await dbs.fresh(`bench_writers_${process.pid}_${writers}`) : join(dir, `lab-${writers}.sqlite`);
        const r = await round(engine, location, writers);
        results.push(r);
        console.log(`${engine}, ${writers} writer(s): ${r.rows} rows in ${r.wallMs} ms`);
      }
    }
  } finally {
    await dbs.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log("");
  console.log("engine      writers    rows   wall ms    rows/s   rows/s per writer   µs per row (slowest writer)");
  for (const r of results) {
    const perSecond = (r.rows / r.wallMs) * 1000;
    console.log(
      `${r.engine.padEnd(10)}  ${String(r.writers).padStart(7)}  ${String(r.rows).padStart(6)}  ${String(r.wallMs).padStart(8)}  ${perSecond.toFixed(0).padStart(8)}  ` +
        `${(perSecond / r.writers).toFixed(0).padStart(18)}  ${((r.slowestMs * 1000) / ROWS).toFixed(1).padStart(27)}`,
    );
  }
}

if (process.argv[2] === "--writer") {
  await writerProcess(process.argv[3] as Engine, process.argv[4]!, Number(process.argv[5]));
} else {
  await main();
}
