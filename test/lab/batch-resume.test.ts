// `typelm run --batch` killed with SIGKILL while its batch runs, then the same command again: it
// resumes the interrupted run and waits for the batch already submitted (built CLI, fake provider).
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/index.js";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { BIN, offline, runBuiltCli } from "../helpers/cli.js";
import { shoutProject, WORDS, writeShoutData } from "../helpers/shout-project.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-batch-resume-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function project(name: string, words: readonly string[]): string {
  return shoutProject(dir, name, { words });
}

function answer(request: FakeRequest): Record<string, unknown> {
  const last = String(request.messages[request.messages.length - 1]?.content ?? "");
  return { loud: (/"word":\s*"([^"]+)"/.exec(last)?.[1] ?? "").toUpperCase() };
}

const ARGS = ["run", "experiments/shout.mjs", "--lm", "openai/gpt-4o-mini", "--batch"];

/** Starts the command, waits until its batch is recorded and polled once, and kills it with SIGKILL. */
async function runAndKill(cwd: string, env: NodeJS.ProcessEnv, fake: FakeProvider): Promise<string> {
  const batchesBefore = fake.batches.length;
  const proc = spawn(process.execPath, [BIN, ...ARGS], { cwd, env, stdio: "pipe" });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += String(d); });
  const lab = join(cwd, ".typelm", "lab.sqlite");
  const deadline = Date.now() + 30_000;
  for (;;) {
    const batch = fake.batches[batchesBefore];
    if (batch !== undefined && batch.polls >= 1 && existsSync(lab)) {
      const store = LabStore.open(lab);
      const run = store.runs({ kind: "evaluation" })[0];
      if (run !== undefined && store.batches(run.id).length > 0 && /waiting/.test(stderr)) break;
    }
    if (Date.now() > deadline) throw new Error(`the command never submitted its batch: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const exited = new Promise((r) => proc.on("exit", r));
  proc.kill("SIGKILL");
  await exited;
  return stderr;
}

describe("typelm run --batch, killed after the batch was submitted, then run again", () => {
  let fake: FakeProvider;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    fake = await startFakeProvider({ defaultReply: answer });
    env = { ...offline, OPENAI_BASE_URL: fake.openaiBaseURL, OPENAI_API_KEY: "sk-fake-batch-resume" };
  });
  afterAll(() => fake.close());

  it("the same command resumes the interrupted run: one upload and one batch in all, the report written, the run completed under its id", async () => {
    const cwd = project("same", WORDS);
    // The batch reports in progress at its first poll and ends at the second, which the killed
    // process would only have made after its 5 s poll interval.
    fake.batch({ polls: 1 });
    const before = { uploads: fake.uploads, batches: fake.batches.length };
    const killed = await runAndKill(cwd, env, fake);
    // A progress line while waiting, though standard error is not a terminal.
    expect(killed).toMatch(/shout baseline: batch \S+ \(round 0\) (validating|in_progress): \d of 7 answered, 0 failed; waiting \d+ s/);
    const store = LabStore.open(join(cwd, ".typelm", "lab.sqlite"));
    const runId = store.runs({ kind: "evaluation" })[0]!.id;
    expect(store.run(runId)!.status).toBe("running");
    expect(readdirSync(join(cwd, ".typelm", "running"))).toEqual([`${runId}.json`]);

    const again = await runBuiltCli(ARGS, cwd, env);
    expect(again.stderr).toContain(`shout baseline: resuming run ${runId} (its process (pid `);
    expect(again).toMatchObject({ code: 0, stdout: `${join(cwd, "reports/shout/report.md")}\n` });
    expect(existsSync(join(cwd, "reports/shout/report.md"))).toBe(true);
    expect([fake.uploads - before.uploads, fake.batches.length - before.batches]).toEqual([1, 1]);
    const runs = store.runs({ kind: "evaluation" });
    expect(runs.map((r) => [r.id, r.status])).toEqual([[runId, "completed"]]);
    expect(store.run(runId)!.summary).toMatchObject({ metrics: { accuracy: 1 }, failures: 0, total: 8 });
    expect(readdirSync(join(cwd, ".typelm", "running"))).toEqual([]);
  }, 90_000);

  it("run again with other data: the interrupted run is marked failed, saying it was interrupted, and a new run starts", async () => {
    const cwd = project("changed", WORDS);
    fake.batch({ polls: 1 });
    await runAndKill(cwd, env, fake);
    const store = LabStore.open(join(cwd, ".typelm", "lab.sqlite"));
    const killedId = store.runs({ kind: "evaluation" })[0]!.id;
    writeShoutData(cwd, WORDS.map((w) => `${w}s`));

    const again = await runBuiltCli(ARGS, cwd, env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`shout baseline: run ${killedId} was interrupted (its process (pid `);
    const runs = store.runs({ kind: "evaluation" });
    expect(runs.map((r) => r.status)).toEqual(["completed", "failed"]);
    expect(runs[1]!.id).toBe(killedId);
    expect(runs[1]!.error).toMatch(/^interrupted: its process \(pid \d+ on .+\) ended before it finished$/);
    expect(runs[0]!.summary).toMatchObject({ metrics: { accuracy: 1 }, total: 8 });
    expect(readdirSync(join(cwd, ".typelm", "running"))).toEqual([]);
  }, 90_000);
});
