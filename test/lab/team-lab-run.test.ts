// `typelm run` recording into a team's lab on PostgreSQL (TYPELM_LAB_URL): the runs, rows, calls,
// batches and the response cache go to the database, nothing to the folder's file; an interrupted
// `--batch` run resumes from it. Built CLI (npm run build first), a real PostgreSQL server, the fake provider.
import { afterAll, beforeAll, describe, expect, it, test } from "@jest/globals";
import pg from "pg";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresLabStore } from "../../lib/store/pg-lab-store.js";
import { closePostgresPools } from "../../lib/store/pg.js";
import type { EvaluationRun } from "../../lib/store/records.js";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { BIN, offline, runBuiltCli } from "../helpers/cli.js";
import { POSTGRES_INSTALL_HINT, postgresInstalled, startPostgresServer, type PostgresTestServer } from "../helpers/postgres.js";
import { shoutProject, WORDS, writeShoutData } from "../helpers/shout-project.js";

const installed = postgresInstalled();
if (!installed && process.env.CI === "true") {
  test("the PostgreSQL server binaries are installed (CI installs them)", () => {
    throw new Error(`PostgreSQL is not installed, so typelm run cannot be tested on a team's lab. Install it with: ${POSTGRES_INSTALL_HINT}`);
  });
}
if (!installed) console.warn(`Skipping typelm run on a team's lab: no PostgreSQL server binaries. Install them with: ${POSTGRES_INSTALL_HINT}`);
const suite = installed ? describe : describe.skip;

const dir = mkdtempSync(join(tmpdir(), "typelm-team-run-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function project(name: string, optimizer?: string): string {
  return shoutProject(dir, name, { optimizer });
}

function answer(request: FakeRequest): Record<string, unknown> {
  const last = String(request.messages[request.messages.length - 1]?.content ?? "");
  return { loud: (/"word":\s*"([^"]+)"/.exec(last)?.[1] ?? "").toUpperCase() };
}

/** Starts `typelm run --batch`, waits until its batch is in the team's lab and polled once, and kills it with SIGKILL; returns the run's id. */
async function runAndKill(cwd: string, env: NodeJS.ProcessEnv, lab: PostgresLabStore, fake: FakeProvider): Promise<string> {
  const batches = fake.batches.length;
  const proc = spawn(process.execPath, [BIN, ...BATCH_ARGS], { cwd, env, stdio: "pipe" });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += String(d); });
  const deadline = Date.now() + 30_000;
  let runId: string | undefined;
  for (;;) {
    const batch = fake.batches[batches];
    if (batch !== undefined && batch.polls >= 1 && /waiting/.test(stderr)) {
      const run = (await lab.runs({ kind: "evaluation" }).catch(() => []))[0];
      if (run !== undefined && (await lab.batches(run.id)).length > 0) {
        runId = run.id;
        break;
      }
    }
    if (Date.now() > deadline) throw new Error(`the command never submitted its batch: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const exited = new Promise((r) => proc.on("exit", r));
  proc.kill("SIGKILL");
  await exited;
  return runId;
}

const BATCH_ARGS = ["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini", "--batch"];

suite("typelm run on a team's lab (TYPELM_LAB_URL)", () => {
  let server: PostgresTestServer;
  let fake: FakeProvider;
  let databases = 0;
  const envFor = (url: string): NodeJS.ProcessEnv => ({ ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-team-run", TYPELM_LAB_URL: url });
  beforeAll(async () => {
    server = await startPostgresServer();
    fake = await startFakeProvider({ defaultReply: answer });
  }, 60_000);
  afterAll(async () => {
    await closePostgresPools();
    await fake?.close();
    await server?.stop();
  });

  it("records the run, its rows and each row's model calls in the database, where typelm show --store reads them; nothing in the folder's file", async () => {
    const url = server.createDatabase(`run_${++databases}`);
    const cwd = project("plain");
    const ran = await runBuiltCli(["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini"], cwd, envFor(url));
    expect(ran).toMatchObject({ code: 0, stdout: `${join(cwd, "reports/shout/report.md")}\n` });
    expect(existsSync(join(cwd, ".typelm", "lab.sqlite"))).toBe(false);

    const lab = PostgresLabStore.open(url);
    const runs = await lab.runs();
    expect(runs.map((r) => [r.kind, r.name, r.status])).toEqual([["evaluation", "shout baseline", "completed"]]);
    const run = (await lab.run(runs[0]!.id)) as EvaluationRun;
    expect(run.rows.map((r) => r.exampleId)).toEqual(WORDS.map((_, i) => `w${i}`));
    expect(run.rows.every((r) => r.error === null && r.scores["accuracy"] === 1)).toBe(true);
    for (const [i, word] of WORDS.entries()) {
      const calls = await lab.calls(run.id, i);
      expect(calls).toHaveLength(1);
      // The first example's request was made by the check before the run: answered from the team's response cache.
      expect(calls[0]).toMatchObject({ provider: "openai", model: "gpt-4o-mini", cached: i === 0 });
      expect(calls[0]!.messages.at(-1)!.content).toMatch(new RegExp(`"word":\\s*"${word}"`));
      expect(JSON.parse(calls[0]!.reply)).toEqual({ loud: word.toUpperCase() });
    }
    // Run again: every request is answered from the team's response cache.
    const cached = await runBuiltCli(["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini", "--out", "again"], cwd, envFor(url));
    expect(cached.code).toBe(0);
    const second = (await lab.runs())[0]!;
    expect((await lab.calls(second.id, 3))[0]!.cached).toBe(true);

    const shown = await runBuiltCli(["show", run.id.slice(0, 8), "--store", url], cwd, offline);
    expect(shown.code).toBe(0);
    expect(shown.stdout.split("\n")[0]).toBe(`lab store: ${url.replace("postgres@", "")}`);
    expect(shown.stdout).toContain("shout baseline");
    expect(shown.stdout).toContain(run.id);
    const listed = await runBuiltCli(["runs"], cwd, envFor(url));
    expect(listed.stdout.trimEnd().split("\n").slice(2).map((l) => l.split(/\s{2,}/)[2])).toEqual(["shout baseline", "shout baseline"]);
    // The regression gate takes a run of the team's lab as its baseline. (8 unchanged examples rule out a
    // drop of 0.3 but not the default 0.05: without --tolerance the verdict would be inconclusive.)
    const gated = await runBuiltCli(["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini", "--out", "gated", "--baseline", run.id.slice(0, 8), "--tolerance", "0.3"], cwd, envFor(url));
    expect(gated.code).toBe(0);
    expect(gated.stderr).toContain(`gate against run ${run.id}`);
    expect(gated.stderr).toContain("gate: passed");
  }, 90_000);

  it("typelm rescore reads a run of the team's lab and records the rescored run there (TYPELM_LAB_URL, or --store)", async () => {
    const url = server.createDatabase(`run_${++databases}`);
    const cwd = project("rescored");
    expect((await runBuiltCli(["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini"], cwd, envFor(url))).code).toBe(0);
    // Scores 1 for the first three words only, so the new run's accuracy (3/8) is its own, not the source's (8/8).
    writeFileSync(join(cwd, "first-three.mjs"), `export default (example) => ["ant", "bee", "yak"].includes(example.input.word) ? 1 : 0;\n`);
    const lab = PostgresLabStore.open(url);
    const [source] = await lab.runs();
    for (const [args, env] of [[[], envFor(url)], [["--store", url], offline]] as const) {
      const out = await runBuiltCli(["rescore", source!.id.slice(0, 8), "--metric", "first-three.mjs", ...args], cwd, env);
      expect(out).toMatchObject({ code: 0 });
      expect(out.stdout.split("\n")[0]).toBe(`lab store: ${url.replace("postgres@", "")}`);
      const newest = (await lab.runs())[0]!;
      expect(newest.id).not.toBe(source!.id);
      expect(newest.config).toMatchObject({ rescoredFrom: source!.id });
      const rescored = (await lab.run(newest.id)) as EvaluationRun;
      expect(rescored.rows.map((r) => r.scores["first_three"])).toEqual([1, 1, 1, 0, 0, 0, 0, 0]);
      expect(out.stdout).toContain(newest.id);
    }
    expect(existsSync(join(cwd, ".typelm", "lab.sqlite"))).toBe(false);
  }, 90_000);

  it("an optimizer's run and trials and the registry version go to the database too", async () => {
    const url = server.createDatabase(`run_${++databases}`);
    const cwd = project("tuned", `optimizer: "simple",\n  optimizerOptions: { numTrials: 2, kDemos: 1 },`);
    const ran = await runBuiltCli(["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini"], cwd, envFor(url));
    expect(ran.code).toBe(0);
    expect(ran.stderr).toContain('registry "shout" v1');
    expect(existsSync(join(cwd, ".typelm", "lab.sqlite"))).toBe(false);
    const lab = PostgresLabStore.open(url);
    const runs = await lab.runs();
    expect(runs.map((r) => [r.kind, r.name, r.status]).sort()).toEqual([
      ["evaluation", "shout baseline", "completed"], ["evaluation", "shout optimized", "completed"], ["optimization", "SimpleOptimizer", "completed"],
    ]);
    const optimization = await lab.run(runs.find((r) => r.kind === "optimization")!.id);
    expect(optimization?.kind === "optimization" && optimization.trials.length).toBeGreaterThan(0);
    const optimized = runs.find((r) => r.name === "shout optimized")!;
    expect((await lab.calls(optimized.id, 0)).length).toBe(1);
    const client = new pg.Client(url);
    await client.connect();
    try {
      expect((await client.query("SELECT name, version FROM registry_versions")).rows).toEqual([{ name: "shout", version: 1 }]);
    } finally {
      await client.end();
    }
  }, 90_000);

  it("typelm run --batch killed with SIGKILL after its batch was submitted: the same command resumes the run from the database and pays once", async () => {
    const url = server.createDatabase(`run_${++databases}`);
    const cwd = project("killed");
    const env = envFor(url);
    fake.batch({ polls: 1 });
    const before = { uploads: fake.uploads, batches: fake.batches.length };
    const lab = PostgresLabStore.open(url);
    const runId = await runAndKill(cwd, env, lab, fake);
    expect((await lab.run(runId))!.status).toBe("running");
    expect(readdirSync(join(cwd, ".typelm", "running"))).toEqual([`${runId}.json`]);

    const again = await runBuiltCli(BATCH_ARGS, cwd, env);
    expect(again.stderr).toContain(`shout baseline: resuming run ${runId} (its process (pid `);
    expect(again).toMatchObject({ code: 0, stdout: `${join(cwd, "reports/shout/report.md")}\n` });
    expect([fake.uploads - before.uploads, fake.batches.length - before.batches]).toEqual([1, 1]);
    const runs = await lab.runs({ kind: "evaluation" });
    expect(runs.map((r) => [r.id, r.status])).toEqual([[runId, "completed"]]);
    expect((await lab.run(runId))!.summary).toMatchObject({ metrics: { accuracy: 1 }, failures: 0, total: 8 });
    expect(await lab.batches(runId)).toEqual([expect.objectContaining({ status: "completed" })]);
    expect(readdirSync(join(cwd, ".typelm", "running"))).toEqual([]);
    expect(existsSync(join(cwd, ".typelm", "lab.sqlite"))).toBe(false);
  }, 90_000);

  it("typelm run --batch killed, then run again with other data: the interrupted run is marked failed in the database and a new run starts", async () => {
    const url = server.createDatabase(`run_${++databases}`);
    const cwd = project("changed");
    const env = envFor(url);
    fake.batch({ polls: 1 });
    const lab = PostgresLabStore.open(url);
    const killedId = await runAndKill(cwd, env, lab, fake);
    writeShoutData(cwd, WORDS.map((w) => `${w}s`));

    const again = await runBuiltCli(BATCH_ARGS, cwd, env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`shout baseline: run ${killedId} was interrupted (its process (pid `);
    const runs = await lab.runs({ kind: "evaluation" });
    expect(runs.map((r) => r.status)).toEqual(["completed", "failed"]);
    expect(runs[1]!.id).toBe(killedId);
    expect(runs[1]!.error).toMatch(/^interrupted: its process \(pid \d+ on .+\) ended before it finished$/);
    expect(runs[0]!.summary).toMatchObject({ metrics: { accuracy: 1 }, total: 8 });
    expect(readdirSync(join(cwd, ".typelm", "running"))).toEqual([]);
  }, 90_000);
});
