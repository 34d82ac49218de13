// Several processes writing to one team's lab on PostgreSQL at once, against a real server this suite
// starts (test/helpers/postgres.ts). The writers are child processes running the built package
// (test/store/pg-writer-child.mjs imports dist/): `npm run build` first.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { configure, resetConfiguration } from "../../lib/config.js";
import { PostgresLabStore } from "../../lib/store/pg-lab-store.js";
import { closePostgresPools } from "../../lib/store/pg.js";
import type { OptimizationRun, Trial } from "../../lib/store/records.js";
import { startFakeProvider } from "../../lib/testing/fake-provider.js";
import { answerFor } from "../evaluate/batch-task.js";
import { runOptimization } from "../optimize/resume-setup.js";
import { startPostgresServer, type PostgresTestServer } from "../helpers/postgres.js";
import { requirePostgres, row, sqlOn } from "./lab-engines.js";

const root = process.cwd();
const childScript = join(root, "test/store/pg-writer-child.mjs");
const suite = requirePostgres("the several-writers suite") ? describe : describe.skip;

interface Writer {
  proc: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  /** The child's last output line, parsed, once it exited with 0. */
  done: Promise<unknown>;
}

/** Starts one writer process; it waits for `go` (see `startTogether`). */
function writer(args: string[]): Writer {
  const proc = spawn(process.execPath, [childScript, ...args], { cwd: root, stdio: "pipe" });
  let stdout = "", stderr = "";
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => { markReady = resolve; });
  proc.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    if (stdout.startsWith("ready\n")) markReady();
  });
  proc.stderr.on("data", (d: Buffer) => { stderr += d.toString(); });
  const done = new Promise<unknown>((resolve, reject) => proc.on("exit", (code, signal) => {
    const last = stdout.trim().split("\n").pop() ?? "";
    if (code === 0) resolve(JSON.parse(last));
    else reject(new Error(`writer ${args.join(" ")} exited with ${signal ?? code}:\n${stderr}${stdout}`));
  }));
  // A writer that dies before it is ready fails the test instead of hanging it.
  done.catch(() => markReady());
  return { proc, ready, done };
}

/** Waits until every writer is connected and ready, then lets them all go at once; resolves with their results. */
async function startTogether(writers: Writer[]): Promise<unknown[]> {
  await Promise.all(writers.map((w) => w.ready));
  for (const w of writers) w.proc.stdin.write("go\n");
  return Promise.all(writers.map((w) => w.done));
}

suite("several processes writing to one team's lab on PostgreSQL", () => {
  let server: PostgresTestServer;
  let databases = 0;
  const fresh = () => server.createDatabase(`writers_${++databases}`);
  const sql = sqlOn as (url: string, text: string, params?: unknown[]) => Promise<any[]>; // rows as the tests read them

  beforeAll(async () => {
    if (!existsSync(join(root, "dist/pkg/index.js"))) throw new Error("dist/pkg/index.js is missing: the writer processes run the built package; run npm run build first");
    server = await startPostgresServer();
  }, 60_000);
  afterEach(() => resetConfiguration());
  afterAll(async () => {
    await closePostgresPools();
    await server?.stop();
  });

  it("registry versions stored by six processes at once are 1..K for the name: no gap, no duplicate", async () => {
    const url = fresh();
    const processes = 6, each = 8;
    const results = (await startTogether(Array.from({ length: processes }, () => writer(["registry", url, "sentiment", String(each)])))) as number[][];
    const all = results.flat().sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: processes * each }, (_, i) => i + 1));
    // What the database holds: one row per version, each process's stores all there.
    const stored = await sql(url, "SELECT version, metadata_json FROM registry_versions WHERE name = 'sentiment' ORDER BY version");
    expect(stored.map((r) => r.version)).toEqual(all);
    const byProcess = new Map<number, number>();
    for (const r of stored) {
      const pid = (JSON.parse(r.metadata_json as string) as { pid: number }).pid;
      byProcess.set(pid, (byProcess.get(pid) ?? 0) + 1);
    }
    expect([...byProcess.values()]).toEqual(Array(processes).fill(each));
    // The processes' stores interleaved: the versions each got are not one block per process.
    expect(results.some((versions) => Math.max(...versions) - Math.min(...versions) >= each)).toBe(true);
  }, 60_000);

  it("eight processes writing rows of their own runs at once: every row is there once", async () => {
    const url = fresh();
    const processes = 8, runs = 2, rows = 250;
    const results = (await startTogether(Array.from({ length: processes }, (_, w) => writer(["rows", url, String(w), String(runs), String(rows)])))) as string[][];
    const ids = results.flat();
    expect(new Set(ids).size).toBe(processes * runs);
    const counts = await sql(url, `SELECT r.id, r.status, r.name, COUNT(x.idx)::int AS n, COUNT(DISTINCT x.idx)::int AS distinct_idx,
      MIN(x.idx) AS lo, MAX(x.idx) AS hi, COUNT(DISTINCT x.example_id)::int AS examples
      FROM lab_runs r LEFT JOIN lab_rows x ON x.run_id = r.id GROUP BY r.id, r.status, r.name ORDER BY r.id`);
    expect(counts).toEqual(results.flatMap((writerIds, w) => writerIds.map((id) => ({
      id, status: "completed", name: `writer ${w}`, n: rows, distinct_idx: rows, lo: 0, hi: rows - 1, examples: rows,
    }))).sort((a, b) => (a.id < b.id ? -1 : 1)));
    // Each row is its own writer's: no row went into another process's run.
    expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lab_rows x JOIN lab_runs r ON r.id = x.run_id WHERE x.example_id NOT LIKE 'w' || (r.config_json::json->>'writer') || '-%'"))
      .toEqual([{ n: 0 }]);
    expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lab_rows")).toEqual([{ n: processes * runs * rows }]);
  }, 90_000);

  it("the shared LM cache: what one process was answered answers another process's identical requests, with no provider request", async () => {
    const url = fresh();
    const fake = await startFakeProvider({ defaultReply: (request) => answerFor(String(request.messages[request.messages.length - 1]?.content ?? "")) });
    try {
      const first = (await startTogether([writer(["cache", url, fake.openaiBaseURL])]))[0] as { accuracy: number; predictions: unknown[]; runId: string };
      expect(first.accuracy).toBe(1);
      expect(fake.requests).toHaveLength(5);
      expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lm_cache")).toEqual([{ n: 5 }]);
      // A colleague's machine: another process, the same requests.
      const second = (await startTogether([writer(["cache", url, fake.openaiBaseURL])]))[0] as typeof first;
      expect(fake.requests).toHaveLength(5);
      expect(second.predictions).toEqual(first.predictions);
      expect(second.accuracy).toBe(1);
      expect(second.runId).not.toBe(first.runId);
      // The key never reaches the lab.
      expect(JSON.stringify(await sql(url, "SELECT * FROM lm_cache"))).not.toContain("sk-cache-test-key");
    } finally {
      await fake.close();
    }
  }, 60_000);

  it("a connection the server drops between writes is replaced: nothing queued is lost", async () => {
    const url = fresh();
    const lab = PostgresLabStore.open(url);
    const id = lab.startRun({ kind: "evaluation", name: "through a restart of its connections" });
    for (let i = 0; i < 10; i++) lab.recordExample(id, row(i));
    await lab.flush();
    const [{ n: dropped }] = await sql(url, "SELECT COUNT(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
    expect(dropped).toBeGreaterThanOrEqual(1);
    for (let i = 10; i < 20; i++) lab.recordExample(id, row(i));
    lab.finishRun(id, { status: "completed", score: 1 });
    await lab.flush();
    expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lab_rows")).toEqual([{ n: 20 }]);
    expect((await lab.run(id))?.status).toBe("completed");
  });

  it("an optimization killed with SIGKILL resumes from the team's lab: kept trials are replayed, none is recorded twice, and it ends as an uninterrupted run", async () => {
    /** A trial without what legitimately differs between two runs of the same trial (wall time). */
    const same = (t: Trial): Omit<Trial, "durationMs"> => {
      const { durationMs: _d, ...rest } = t;
      return rest;
    };
    configure((c) => { c.lab = { url: fresh() }; });
    const reference = await runOptimization();
    const refTrials = reference.run.trials;
    resetConfiguration();

    const url = fresh();
    const child = spawn(process.execPath, [join(root, "node_modules/jest/bin/jest.js"), "--ci", "--runInBand", "--testMatch", "**/test/store/pg-mipro-child.ts", "--", "test/store/pg-mipro-child.ts"], {
      cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "--experimental-vm-modules", TYPELM_CHILD_LAB_URL: url, TYPELM_CHILD_LATENCY: "25" },
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
    const lab = PostgresLabStore.open(url);
    let runId: string | undefined;
    let seen = 0;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 15));
      runId ??= (await lab.runs({ kind: "optimization" }))[0]?.id;
      if (runId !== undefined) seen = (await lab.trials(runId)).length;
      if (seen >= 6) break; // bootstrap, propose, baseline and three search trials are in the database
    }
    const alive = child.exitCode === null;
    if (alive) process.kill(-child.pid!, "SIGKILL");
    expect({ seen, alive, output: seen >= 6 ? "" : output }).toMatchObject({ alive: true, output: "" });
    expect(await exited).toBe("SIGKILL");

    const killed = (await lab.run(runId!)) as OptimizationRun;
    expect(killed.status).toBe("running");
    const n = killed.trials.length;
    expect(n).toBeGreaterThanOrEqual(6);
    expect(n).toBeLessThan(refTrials.length);
    expect(killed.trials.map((t) => t.index)).toEqual([...Array(n).keys()]);
    expect(killed.trials.map(same)).toEqual(refTrials.slice(0, n).map(same));

    configure((c) => { c.lab = { url }; });
    const resumed = await runOptimization({ resume: runId });
    expect(resumed.run.id).toBe(runId);
    expect(resumed.tuned.instruction).toBe(reference.tuned.instruction);
    expect(resumed.run.trials.map(same)).toEqual(refTrials.map(same));
    expect({ score: resumed.run.score, bestTrial: resumed.run.bestTrial, status: resumed.run.status }).toEqual({
      score: reference.run.score, bestTrial: reference.run.bestTrial, status: "completed",
    });
    // Replayed, not run again: the kept trials' wall times, and only the others cost calls.
    expect(resumed.run.trials.slice(0, n).map((t) => t.durationMs)).toEqual(killed.trials.map((t) => t.durationMs));
    const replayedCalls = killed.trials.reduce((s, t) => s + t.lmCalls, 0);
    expect(resumed.taskCalls + resumed.promptCalls).toBe(reference.taskCalls + reference.promptCalls - replayedCalls);
    expect(await sql(url, "SELECT COUNT(*)::int AS n, COUNT(DISTINCT idx)::int AS distinct_idx, MAX(idx) AS hi FROM lab_trials WHERE run_id = $1", [runId]))
      .toEqual([{ n: refTrials.length, distinct_idx: refTrials.length, hi: refTrials.length - 1 }]);
    expect(await sql(url, "SELECT status FROM lab_runs")).toEqual([{ status: "completed" }]);
  }, 120_000);
});
