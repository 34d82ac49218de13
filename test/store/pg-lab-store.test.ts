// The lab store on PostgreSQL, against a real server this suite starts (test/helpers/postgres.ts).
// The SIGKILL test runs the built package in a child process: `npm run build` first.
import { afterAll, afterEach, beforeAll, describe, expect, it, test } from "@jest/globals";
import { z } from "zod";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, resetConfiguration } from "../../lib/config.js";
import { runCli } from "../../lib/lab/cli/index.js";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";
import { ConfigurationError, ValidationError } from "../../lib/errors.js";
import { Evaluation, FewShotExample, Predict, Signature } from "../../lib/index.js";
import { LabStore, labFromConfig } from "../../lib/store/lab-store.js";
import { PostgresLabStore } from "../../lib/store/pg-lab-store.js";
import { registerSecret } from "../../lib/instrument/redact.js";
import { closePostgresPools, PG_MIGRATIONS } from "../../lib/store/pg.js";
import { STORE_MIGRATIONS } from "../../lib/store/migrations.js";
import type { EvaluationRow, EvaluationRun, Trial } from "../../lib/store/records.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { RunRecorder } from "../../lib/optimize/recorder.js";
import { startFakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor } from "../lm/helpers.js";
import { Registry } from "../../lib/store/registry/registry.js";
import { displayRuns } from "../../lib/notebook/runs.js";
import { LM } from "../../lib/lm/lm.js";
import { Upper, answerFor } from "../evaluate/batch-task.js";
import { prompts, SentimentProgram, tunedProgram } from "./registry-fixture.js";
import { POSTGRES_INSTALL_HINT, postgresInstalled, startPostgresServer, type PostgresTestServer } from "../helpers/postgres.js";
import { queryRows } from "../helpers/postgres.js";

const installed = postgresInstalled();
if (!installed && process.env.CI === "true") {
  test("the PostgreSQL server binaries are installed (CI installs them)", () => {
    throw new Error(`PostgreSQL is not installed, so the team lab's store suite cannot run. Install it with: ${POSTGRES_INSTALL_HINT}`);
  });
}
if (!installed) console.warn(`Skipping the PostgreSQL lab store suite: no server binaries. Install them with: ${POSTGRES_INSTALL_HINT}`);
const suite = installed ? describe : describe.skip;

function row(index: number, overrides: Partial<EvaluationRow> = {}): EvaluationRow {
  return {
    index, exampleId: `test-${index}`, inputs: { sentence: `s${index}` }, expected: { label: "positive" },
    prediction: { label: index % 2 === 0 ? "positive" : "negative" }, scores: { accuracy: index % 2 === 0 ? 1 : 0 },
    error: null, durationMs: 12.5, inputTokens: 10 + index, outputTokens: 2, cost: 0.001, ...overrides,
  };
}

function trial(index: number, overrides: Partial<Trial> = {}): Trial {
  return {
    index, kind: "minibatch", parents: [], choices: { self: { instruction: index, demos: 1 } },
    instructions: { self: `Instruction ${index}` }, demoIds: { self: ["train-1", "train-7"] }, score: 0.5 + index / 10,
    exampleScores: null, budgetSpent: 3 * (index + 1), lmCalls: 3, inputTokens: 100, outputTokens: 20, cost: 0.01,
    durationMs: 40, error: null, data: { minibatch: [1, 2, 3] }, reused: 0, ...overrides,
  };
}

suite("the lab store on PostgreSQL", () => {
  let server: PostgresTestServer;
  let databases = 0;
  /** A fresh empty database on the test server. */
  const fresh = () => server.createDatabase(`lab_${++databases}`);
  const sql = queryRows;

  beforeAll(async () => { server = await startPostgresServer(); }, 60_000);
  afterEach(() => resetConfiguration());
  afterAll(async () => {
    await closePostgresPools();
    await server?.stop();
  });

  it("creates the schema on first use: the same migrations, by name, as the SQLite file", async () => {
    const url = fresh();
    const lab = LabStore.open({ url });
    expect(lab).toBeInstanceOf(PostgresLabStore);
    expect(LabStore.open(url as `postgres://${string}`)).toBeInstanceOf(PostgresLabStore);
    expect(await lab.runs()).toEqual([]);
    const names = (await sql(url, "SELECT name FROM schema_migrations ORDER BY name")).map((r) => r.name);
    expect(names).toEqual([
      "001_lm_cache", "002_lab_runs", "003_registry", "004_lab_stopped_reused", "005_lab_batches", "006_lab_row_calls", "007_lab_rows_failed",
      "008_lab_row_details", "009_lab_rows_seq_pg", "010_annotations", "010_media_values", "011_lab_traces",
    ]);
    // The same by name, but for what only PostgreSQL needs (named *_pg: lab_rows.seq, which SQLite has as rowid).
    expect(PG_MIGRATIONS.map((m) => m.name).filter((n) => !n.endsWith("_pg"))).toEqual(STORE_MIGRATIONS.map((m) => m.name));
    const tables = (await sql(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name")).map((r) => r.table_name);
    expect(tables).toEqual(["annotations", "lab_batches", "lab_feedback", "lab_rows", "lab_runs", "lab_texts", "lab_trials", "lm_cache", "media", "registry_versions", "schema_migrations"]);
    // 004 let a run be stopped; a status outside the list is refused by the database itself.
    await sql(url, "INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ('s', 'optimization', 'x', 'stopped', 't', '{}', '{}')");
    await expect(sql(url, "INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ('b', 'optimization', 'x', 'paused', 't', '{}', '{}')"))
      .rejects.toThrow(/lab_runs_status/);
  });

  it("a write that fails is named by flush(), and the rest of its batch is still written", async () => {
    const url = fresh();
    const lab = PostgresLabStore.open(url);
    const id = lab.startRun({ kind: "evaluation", name: "e" });
    for (const i of [0, 1, 1, 2]) lab.recordExample(id, row(i));
    await expect(lab.flush()).rejects.toThrow(`Run ${id} already has example 1`);
    expect((await lab.rows(id)).map((r) => r.index)).toEqual([0, 1, 2]);
    lab.finishRun("no-such-run", { status: "completed" });
    await expect(lab.flush()).rejects.toThrow(/Unknown run id "no-such-run"/);
    lab.recordExample("no-such-run", row(0));
    await expect(lab.flush()).rejects.toThrow(/Unknown run id "no-such-run"/);
    await lab.flush(); // the failures were reported once
    // What JSON cannot hold is refused at once, as on SQLite, and nothing is queued.
    expect(() => lab.recordExample(id, row(5, { inputs: { n: 1n } as never }))).toThrow(ValidationError);
  });

  it("two writers at once on a new database: the schema is made once, nothing is lost or duplicated", async () => {
    const url = fresh();
    // Two pools (two URLs for the same database), as two processes would have.
    const a = PostgresLabStore.open(url);
    const b = PostgresLabStore.open(url.replace("127.0.0.1", "localhost"));
    const write = async (lab: PostgresLabStore, name: string) => {
      const ids = [lab.startRun({ kind: "evaluation", name }), lab.startRun({ kind: "evaluation", name })];
      for (let i = 0; i < 150; i++) {
        for (const id of ids) lab.recordExample(id, row(i));
        if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      for (const id of ids) lab.finishRun(id, { status: "completed", score: 1 });
      await lab.flush();
      return ids;
    };
    const ids = (await Promise.all([write(a, "a"), write(b, "b")])).flat();
    const counts = await sql(url, "SELECT run_id, COUNT(*)::int AS n, COUNT(DISTINCT idx)::int AS distinct_idx, MIN(idx) AS lo, MAX(idx) AS hi FROM lab_rows GROUP BY run_id ORDER BY run_id");
    expect(counts).toEqual([...ids].sort().map((run_id) => ({ run_id, n: 150, distinct_idx: 150, lo: 0, hi: 149 })));
    expect((await sql(url, "SELECT COUNT(*)::int AS n FROM schema_migrations"))[0].n).toBe(PG_MIGRATIONS.length);
    expect((await a.runs()).map((r) => r.status)).toEqual(["completed", "completed", "completed", "completed"]);
  });

  it("an Evaluation records into the database of c.lab = { url }; its rows are there when evaluate() returns", async () => {
    const url = fresh();
    configure((c) => { c.lab = { url }; });
    class Classify extends Signature {
      static override input = { sentence: z.string() };
      static override output = { sentiment: z.enum(["positive", "negative"]) };
    }
    const lm = new ScriptedLM((req) => ({ sentiment: Number(String(req.inputs?.["sentence"]).slice(1)) % 2 === 0 ? "positive" : "negative" }));
    const predict = new Predict(Classify).configure((c) => { c.lm = lm; });
    const examples = Array.from({ length: 12 }, (_, i) => new FewShotExample({ input: { sentence: `s${i}` }, output: { sentiment: i < 6 ? "positive" : "negative" }, id: `ex-${i}` }));
    const report = await new Evaluation({ progress: false, concurrency: 4 }).evaluate({ moduleInstance: predict, testExamples: examples });
    // Read with a plain client, not through the store.
    const [stored] = await sql(url, "SELECT status, score FROM lab_runs WHERE id = $1", [report.runId]);
    expect(stored).toEqual({ status: "completed", score: 0.5 });
    const rows = await sql(url, "SELECT idx, example_id, scores_json FROM lab_rows WHERE run_id = $1 ORDER BY idx", [report.runId]);
    expect(rows.map((r) => r.example_id)).toEqual(examples.map((e) => e.id));
    expect(rows.map((r) => JSON.parse(r.scores_json).accuracy)).toEqual([1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1]);
    // labFromConfig (what Evaluation and the optimizers use) is the PostgreSQL store; resume works there too.
    const lab = labFromConfig() as PostgresLabStore;
    expect(lab.engine).toBe("postgresql");
    await sql(url, "DELETE FROM lab_rows WHERE run_id = $1 AND idx >= 9", [report.runId]);
    const asked: string[] = [];
    const counting = new ScriptedLM((req) => {
      asked.push(String(req.inputs?.["sentence"]));
      return { sentiment: Number(String(req.inputs?.["sentence"]).slice(1)) % 2 === 0 ? "positive" : "negative" };
    });
    const resumed = await new Evaluation({ progress: false }).evaluate({
      moduleInstance: new Predict(Classify).configure((c) => { c.lm = counting; }), testExamples: examples, resume: report.runId!,
    });
    expect(asked.sort()).toEqual(["s10", "s11", "s9"]);
    expect(resumed.metrics).toEqual(report.metrics);
    expect(((await lab.run(report.runId!)) as EvaluationRun).rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("an Evaluation records each row's model calls in the team's lab as on SQLite: messages, raw reply, model, usage; texts sent again stored once; keys masked", async () => {
    const url = fresh();
    const key = "sk-pg-recorded-call-secret-0123456789";
    registerSecret(key);
    class Classify extends Signature {
      static override description = `Classify the sentence. ${"Read it closely and answer with one label. ".repeat(4)}`;
      static override input = { sentence: z.string() };
      static override output = { sentiment: z.enum(["positive", "negative"]) };
    }
    const lm = new ScriptedLM((req) => ({ sentiment: String(req.inputs?.["sentence"]).endsWith("3") ? "negative" : "positive" }));
    const predict = new Predict(Classify).configure((c) => { c.lm = lm; });
    const long = `s9 ${"a sentence long enough to go past the inline limit ".repeat(4)}`;
    const examples = [...Array.from({ length: 8 }, (_, i) => new FewShotExample({ input: { sentence: `s${i} ${key}` }, output: { sentiment: "positive" }, id: `ex-${i}` })),
      new FewShotExample({ input: { sentence: long }, output: { sentiment: "positive" }, id: "ex-long" })];
    const lab = PostgresLabStore.open(url);
    const report = await new Evaluation({ lab, progress: false, concurrency: 3 }).evaluate({ moduleInstance: predict, testExamples: examples });
    const runId = report.runId!;
    expect(lm.requests).toHaveLength(9);
    const system = lm.requests[0]!.messages.find((m) => m.role === "system")!.content;
    expect(system.length).toBeGreaterThan(128);
    for (const row of report.results) {
      const calls = await lab.calls(runId, row.index);
      expect(calls).toHaveLength(1);
      const sent = lm.requests.find((r) => String(r.inputs?.["sentence"]) === String(examples[row.index]!.input["sentence"]))!;
      expect(calls[0]!.messages).toEqual(sent.messages.map((m) => ({ role: m.role, content: m.content.split(key).join("[REDACTED]") })));
      expect(calls[0]).toMatchObject({ provider: "scripted", cached: false, inputTokens: row.inputTokens, outputTokens: row.outputTokens });
      expect(calls[0]!.reply).toMatch(/^```json\n\{\s*"sentiment":\s*"(positive|negative)"\s*\}\n```$/);
    }
    // The system prompt is one row of lab_texts; the long user message stays in its row.
    expect(await sql(url, "SELECT text FROM lab_texts")).toEqual([{ text: system }]);
    expect(JSON.stringify(await sql(url, "SELECT * FROM lab_rows")) + JSON.stringify(await sql(url, "SELECT * FROM lab_texts"))).not.toContain(key);
    expect(await lab.calls(runId, 99)).toEqual([]);
    // A second run adds no text; recordCalls: false keeps rows without calls.
    const again = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: predict, testExamples: examples });
    expect((await sql(url, "SELECT COUNT(*)::int AS n FROM lab_texts"))[0].n).toBe(1);
    expect((await lab.calls(again.runId!, 8))[0]!.messages.at(-1)!.content).toContain(long);
    const off = await new Evaluation({ lab, progress: false, recordCalls: false }).evaluate({ moduleInstance: predict, testExamples: examples });
    expect(await sql(url, "SELECT COUNT(*)::int AS n, COUNT(calls_json)::int AS calls FROM lab_rows WHERE run_id = $1", [off.runId])).toEqual([{ n: 9, calls: 0 }]);
    expect(await lab.calls(off.runId!, 0)).toEqual([]);
  });

  it("an Evaluation whose rows the database refuses still returns its report, and the run is marked failed with the reason", async () => {
    const url = fresh();
    const lab = PostgresLabStore.open(url);
    await lab.runs(); // creates the tables
    await sql(url, "ALTER TABLE lab_rows ADD CONSTRAINT only_three CHECK (idx < 3)");
    class Classify extends Signature {
      static override input = { sentence: z.string() };
      static override output = { sentiment: z.enum(["positive", "negative"]) };
    }
    const predict = new Predict(Classify).configure((c) => { c.lm = new ScriptedLM(() => ({ sentiment: "positive" })); });
    const examples = Array.from({ length: 5 }, (_, i) => new FewShotExample({ input: { sentence: `s${i}` }, output: { sentiment: "positive" }, id: `ex-${i}` }));
    const report = await new Evaluation({ lab, progress: false, concurrency: 1 }).evaluate({ moduleInstance: predict, testExamples: examples });
    expect(report.metrics.accuracy).toBe(1);
    const [run] = await sql(url, "SELECT status, error FROM lab_runs WHERE id = $1", [report.runId]);
    expect(run.status).toBe("failed");
    expect(run.error).toMatch(/^recording stopped: .*only_three/);
    expect((await sql(url, "SELECT idx FROM lab_rows ORDER BY idx")).map((r) => r.idx)).toEqual([0, 1, 2]);
  });

  it("an evaluation killed with SIGKILL resumes from the team's lab: the recorded rows are kept, only the others run again", async () => {
    const url = fresh();
    const fake = await startFakeProvider({ defaultReply: (request) => answerFor(String(request.messages[request.messages.length - 1]?.content ?? "")) });
    const folder = mkdtempSync(join(tmpdir(), "typelm-pg-kill-"));
    try {
      const words = Array.from({ length: 12 }, (_, i) => `w${String.fromCharCode(97 + i)}x`);
      const child = join(folder, "child.mjs");
      writeFileSync(child, `
import { Evaluation, FewShotExample, LM, Predict, Signature, configure } from ${JSON.stringify(join(process.cwd(), "dist/pkg/index.js"))};
import { z } from ${JSON.stringify(join(process.cwd(), "node_modules/zod/index.js"))};
const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });
configure((c) => { c.lab = { url: process.env.LAB_URL }; });
const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-kill-key", baseURL: process.env.FAKE_URL, temperature: 0 });
const examples = ${JSON.stringify(words)}.map((w, i) => new FewShotExample({ id: "w" + i, input: { word: w }, output: { loud: w.toUpperCase() } }));
await new Evaluation({ concurrency: 1, progress: false }).evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm; }), testExamples: examples });
`);
      // Each live request waits 150 ms: the child is killed a few examples in.
      fake.delay(150, { times: 1000 });
      const proc = spawn(process.execPath, [child], { env: { ...process.env, FAKE_URL: fake.openaiBaseURL, LAB_URL: url }, stdio: "pipe" });
      let stderr = "";
      proc.stderr.on("data", (d) => { stderr += String(d); });
      const exited = new Promise((resolve) => proc.on("exit", resolve));
      const deadline = Date.now() + 20_000;
      while ((await sql(url, "SELECT COUNT(*)::int AS n FROM lab_rows").catch(() => [{ n: 0 }]))[0]!.n < 3) {
        if (Date.now() > deadline) throw new Error(`the child recorded no rows: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      proc.kill("SIGKILL");
      await exited;
      const [run] = await sql(url, "SELECT id, status FROM lab_runs");
      expect(run.status).toBe("running");
      const kept = (await sql(url, "SELECT example_id FROM lab_rows ORDER BY idx")).map((r) => r.example_id as string);
      expect(kept.length).toBeGreaterThanOrEqual(3);
      expect(kept.length).toBeLessThan(12);

      fake.reset();
      configure((c) => { c.lab = { url }; });
      const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-kill-key", baseURL: fake.openaiBaseURL, temperature: 0 });
      const examples = words.map((w, i) => new FewShotExample({ id: `w${i}`, input: { word: w }, output: { loud: w.toUpperCase() } }));
      const report = await new Evaluation({ progress: false }).evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm; }), testExamples: examples, resume: run.id });
      expect(report.runId).toBe(run.id);
      expect(fake.requests).toHaveLength(12 - kept.length);
      expect(report.metrics.accuracy).toBe(1);
      expect(await sql(url, "SELECT status, (SELECT COUNT(*)::int FROM lab_rows) AS n FROM lab_runs")).toEqual([{ status: "completed", n: 12 }]);
    } finally {
      await fake.close();
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it("an optimizer's run and trials are in the database of c.lab = { url } when the run finishes", async () => {
    const url = fresh();
    configure((c) => { c.lab = { url }; });
    const recorder = RunRecorder.start("MIPROv2", { seed: 3 }, undefined);
    for (const i of [0, 1]) {
      await recorder.trial({ kind: "minibatch", choices: { self: { instruction: i } } }, async () => ({
        kind: "minibatch", choices: { self: { instruction: i } }, instructions: { self: `I${i}` }, demoIds: { self: [] }, score: i / 2,
      }));
    }
    // On PostgreSQL, finish settles once the run's queued writes are in the database (compile awaits it).
    const finished = recorder.finish({ status: "completed", score: 0.5, bestTrial: 1, summary: { trials: 2 } });
    expect(finished).toBeInstanceOf(Promise);
    await finished;
    expect(await sql(url, "SELECT status, best_trial FROM lab_runs WHERE id = $1", [recorder.id])).toEqual([{ status: "completed", best_trial: 1 }]);
    expect(await sql(url, "SELECT idx, instructions_json, score FROM lab_trials WHERE run_id = $1 ORDER BY idx", [recorder.id])).toEqual([
      { idx: 0, instructions_json: '{"self":"I0"}', score: 0 }, { idx: 1, instructions_json: '{"self":"I1"}', score: 0.5 },
    ]);
  });

  it("an interrupted optimizer run resumes from the team's lab: recorded trials are replayed, not run again", async () => {
    const url = fresh();
    configure((c) => { c.lab = { url }; });
    const step = (i: number, ran: number[]) => async () => {
      ran.push(i);
      return { kind: "minibatch", choices: { self: { instruction: i } }, instructions: { self: `I${i}` }, demoIds: { self: [] }, score: i / 4 };
    };
    const first: number[] = [];
    const interrupted = await RunRecorder.begin("MIPROv2", { seed: 5 }, undefined);
    for (const i of [0, 1]) await interrupted.trial({ kind: "minibatch", choices: { self: { instruction: i } } }, step(i, first));
    // The process dies here: no finish. Its queued trials still reach the database.
    const deadline = Date.now() + 5000;
    while ((await sql(url, "SELECT COUNT(*)::int AS n FROM lab_trials").catch(() => [{ n: 0 }]))[0]!.n < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await expect(RunRecorder.begin("MIPROv2", { seed: 6 }, interrupted.id)).rejects.toThrow(/resuming it needs the same optimizer and options/);
    expect(() => RunRecorder.start("MIPROv2", { seed: 5 }, interrupted.id)).toThrow(/use RunRecorder.begin/);
    const second: number[] = [];
    const resumed = await RunRecorder.begin("MIPROv2", { seed: 5 }, interrupted.id);
    expect(resumed.id).toBe(interrupted.id);
    for (const i of [0, 1, 2]) await resumed.trial({ kind: "minibatch", choices: { self: { instruction: i } } }, step(i, second));
    expect({ first, second }).toEqual({ first: [0, 1], second: [2] });
    await resumed.finish({ status: "completed", score: 0.5, bestTrial: 2, summary: {} });
    expect(await sql(url, "SELECT idx, score FROM lab_trials WHERE run_id = $1 ORDER BY idx", [interrupted.id])).toEqual([
      { idx: 0, score: 0 }, { idx: 1, score: 0.25 }, { idx: 2, score: 0.5 },
    ]);
    expect(await sql(url, "SELECT status FROM lab_runs")).toEqual([{ status: "completed" }]);
  });

  it("an Evaluation with batch runs on the team's lab and records its provider batch there", async () => {
    const url = fresh();
    const fake = await startFakeProvider({ defaultReply: (request) => answerFor(String(request.messages[request.messages.length - 1]?.content ?? "")) });
    try {
      const lab = PostgresLabStore.open(url);
      const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-batch-key", baseURL: fake.openaiBaseURL, temperature: 0 });
      const words = ["ant", "bee", "yak", "dog"];
      const examples = words.map((w, i) => new FewShotExample({ id: `w${i}`, input: { word: w }, output: { loud: w.toUpperCase() } }));
      const report = await new Evaluation({ lab, batch: { pollInterval: 0.01 }, progress: false }).evaluate({
        moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm; }), testExamples: examples,
      });
      expect(fake.batches).toHaveLength(1);
      expect(fake.requests).toHaveLength(0);
      expect(report.metrics.accuracy).toBe(1);
      const batches = await lab.batches(report.runId!);
      expect(batches).toEqual([expect.objectContaining({ provider: "openai", model: "gpt-4o-mini", round: 0, status: "completed", batchId: fake.batches[0]!.id })]);
      expect(batches[0]!.customIds.sort()).toEqual([...fake.batches[0]!.customIds].sort());
    } finally {
      await fake.close();
    }
  });

  it("the LM cache (cache: true) is shared through the team's lab: a colleague's identical request is answered from it", async () => {
    const url = fresh();
    const fake = await startFakeProvider();
    try {
      const messages = [{ role: "user" as const, content: "Is this shared?" }];
      configure((c) => { c.lab = { url }; c.cache = true; });
      fake.reply("yes, shared");
      const lm = lmFor("openai", fake);
      const mine = await lm.chat({ messages });
      expect(lm.cachePath).toBe(url.replace("postgres@", ""));
      expect({ content: mine.content, cached: mine.cached }).toEqual({ content: "yes, shared", cached: false });
      expect(fake.requests).toHaveLength(1);
      // A colleague: another LM, with the database reached by another URL (another pool, no shared memory).
      configure((c) => { c.lab = { url: url.replace("127.0.0.1", "localhost") }; });
      const theirs = await lmFor("openai", fake).chat({ messages });
      expect({ content: theirs.content, cached: theirs.cached }).toEqual({ content: "yes, shared", cached: true });
      expect(fake.requests).toHaveLength(1);
      expect(await sql(url, "SELECT provider, content FROM lm_cache")).toEqual([{ provider: "openai", content: "yes, shared" }]);
    } finally {
      await fake.close();
    }
  });

  it("the registry in the team's lab: versions unique per name when several processes store at once; load rebuilds the stored prompts", async () => {
    const url = fresh();
    configure((c) => { c.lab = { url }; });
    // Four registries on four pools (as four machines), ten stores each, all at once.
    const registries = [0, 1, 2, 3].map((i) => new Registry({ path: `${url}?application_name=machine${i}` }));
    const stored = await Promise.all(registries.flatMap((r) => Array.from({ length: 10 }, () => r.store({ moduleInstance: tunedProgram(), name: "sentiment" }))));
    expect(stored.map((v) => v.version).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // The default registry is the configured team's lab, shown without credentials.
    const registry = new Registry();
    expect(registry.path).toBe(url.replace("postgres@", ""));
    expect((await registry.versions("sentiment")).map((v) => v.version)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const loaded = await registry.load("sentiment", { version: 7 });
    expect(loaded).toBeInstanceOf(SentimentProgram);
    expect(prompts(loaded)).toEqual(prompts(tunedProgram()));
    await expect(registry.load("sentiment", { version: 41 })).rejects.toThrow(`The registry at ${url.replace("postgres@", "")} has no version 41 of "sentiment"; stored versions: 1, 2, 3`);
  });

  it("display.runs lists the team's lab when it is the configured one", async () => {
    const url = fresh();
    configure((c) => { c.lab = { url }; });
    const lab = PostgresLabStore.open(url);
    const id = lab.startRun({ kind: "evaluation", name: "shown in a notebook" });
    lab.finishRun(id, { status: "completed", score: 0.25 });
    await lab.flush();
    const bundle = await displayRuns();
    expect(bundle?.["text/plain"].split("\n")[0]).toBe(`1 run in the lab store at ${url.replace("postgres@", "")}`);
    expect(bundle?.["text/plain"]).toContain(id);
    expect(bundle?.["text/plain"]).toContain("shown in a notebook");
  });

  it("TYPELM_LAB_URL chooses the database unless c.lab gives a path; a URL that is not PostgreSQL's is a ConfigurationError", async () => {
    const url = fresh();
    const saved = process.env.TYPELM_LAB_URL;
    try {
      process.env.TYPELM_LAB_URL = url;
      expect(labFromConfig()?.engine).toBe("postgresql");
      configure((c) => { c.lab = { path: ":memory:" }; });
      expect(labFromConfig()?.engine).toBe("sqlite");
      configure((c) => { c.lab = { url: "mysql://root:hunter2@db/lab" }; });
      expect(() => labFromConfig()).toThrow(ConfigurationError);
      expect(() => labFromConfig()).toThrow(/must be a PostgreSQL URL such as postgres:\/\/.*received "mysql:\/\/db\/lab"/);
    } finally {
      if (saved === undefined) delete process.env.TYPELM_LAB_URL;
      else process.env.TYPELM_LAB_URL = saved;
    }
  });

  describe("typelm lab copy", () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-lab-copy-"));
    afterAll(() => {
      closeStoreSync(join(dir, "lab.sqlite"));
      rmSync(dir, { recursive: true, force: true });
    });
    const cli = async (...argv: string[]) => {
      let stdout = "", stderr = "";
      const code = await runCli(argv, { stdout: (t) => { stdout += t; }, stderr: (t) => { stderr += t; }, cwd: dir });
      return { code, stdout, stderr };
    };
    const version = (name: string, v: number, state: string) => openStoreSync(join(dir, "lab.sqlite")).prepare(
      "INSERT INTO registry_versions (name, version, created_at, score, metadata_json, state_json, module_class) VALUES (?, ?, '2026-01-02T03:04:05.000Z', 0.75, '{}', ?, 'Predict')",
    ).run(name, v, state);

    it("copies runs (ids kept), rows, trials, batches and registry versions; copying again adds nothing", async () => {
      const url = fresh();
      const local = LabStore.open(join(dir, "lab.sqlite"));
      const ev = local.startRun({ kind: "evaluation", name: "sentiment", config: { seed: 1 } });
      for (const i of [0, 1, 2]) local.recordExample(ev, row(i));
      local.recordBatch(ev, { batchId: "batch_1", provider: "openai", model: "gpt-4o-mini", endpoint: "https://api.openai.com/v1", round: 1, customIds: ["a", "b"] });
      local.finishRun(ev, { status: "completed", score: 2 / 3, summary: { failures: 0 } });
      const opt = local.startRun({ kind: "optimization", name: "GEPA", config: {} });
      local.recordTrial(opt, trial(0));
      local.recordTrial(opt, trial(1, { parents: [0] }));
      local.finishRun(opt, { status: "stopped", score: 0.6, bestTrial: 1 });
      const going = local.startRun({ kind: "evaluation", name: "still running" });
      local.recordExample(going, row(0));
      version("sentiment", 1, '{"self":{"instruction":"Say it"}}');

      const first = await cli("lab", "copy", "lab.sqlite", url);
      expect(first).toEqual({
        code: 0, stderr: "",
        stdout: `copied ${join(dir, "lab.sqlite")} into ${url.replace("postgres@", "")}\n` +
          "runs: 3 added, 0 updated, 0 already there\nrows: 4 added (texts of their model calls: 0 added); trials: 2 added; batches: 1 added\nregistry versions: 1 added, 0 already there\n",
      });
      const team = PostgresLabStore.open(url);
      expect((await team.runs()).map((r) => r.id)).toEqual([going, opt, ev]);
      for (const id of [ev, opt, going]) expect(await team.run(id)).toEqual(local.run(id));
      expect((await sql(url, "SELECT batch_id, custom_ids_json, status FROM lab_batches"))).toEqual([{ batch_id: "batch_1", custom_ids_json: '["a","b"]', status: "submitted" }]);
      expect(await sql(url, "SELECT name, version, score, state_json FROM registry_versions")).toEqual([
        { name: "sentiment", version: 1, score: 0.75, state_json: '{"self":{"instruction":"Say it"}}' },
      ]);

      // The running run went on locally: the second copy adds its new row and its end, nothing else.
      local.recordExample(going, row(1));
      local.finishRun(going, { status: "failed", error: "stopped by hand" });
      const second = await cli("lab", "copy", join(dir, "lab.sqlite"), url);
      expect(second.code).toBe(0);
      expect(second.stdout.split("\n").slice(1)).toEqual([
        "runs: 0 added, 1 updated, 2 already there", "rows: 1 added (texts of their model calls: 0 added); trials: 0 added; batches: 0 added", "registry versions: 0 added, 1 already there", "",
      ]);
      expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lab_rows")).toEqual([{ n: 5 }]);
      expect(await team.run(going)).toEqual(local.run(going));
      const third = await cli("lab", "copy", "lab.sqlite", url);
      expect(third.stdout).toContain("runs: 0 added, 0 updated, 3 already there\nrows: 0 added (texts of their model calls: 0 added); trials: 0 added; batches: 0 added\n");
      expect(await sql(url, "SELECT COUNT(*)::int AS n FROM lab_runs")).toEqual([{ n: 3 }]);

      // A version number the team's lab already gave another module is not overwritten, and the command says so.
      await sql(url, "INSERT INTO registry_versions (name, version, created_at, score, metadata_json, state_json, module_class) VALUES ('triage', 1, 'x', NULL, '{}', '{}', 'Predict')");
      version("triage", 1, '{"self":{"instruction":"Mine"}}');
      const conflict = await cli("lab", "copy", "lab.sqlite", url);
      expect(conflict.code).toBe(1);
      expect(conflict.stdout).toContain("registry versions: 0 added, 1 already there\nregistry versions not copied (the destination has another module under the same name and version): triage v1\n");
      expect(await sql(url, "SELECT state_json FROM registry_versions WHERE name = 'triage'")).toEqual([{ state_json: "{}" }]);
    });

    it("typelm runs, show and compare read the team's lab with --store or TYPELM_LAB_URL, printing what they print for the file", async () => {
      const url = fresh();
      const local = LabStore.open(join(dir, "lab.sqlite"));
      const a = local.startRun({ kind: "evaluation", name: "A", config: { module: "Predict", metrics: ["accuracy"] } });
      const b = local.startRun({ kind: "evaluation", name: "B", config: { module: "Predict", metrics: ["accuracy"] } });
      for (let i = 0; i < 6; i++) {
        local.recordExample(a, row(i, { scores: { accuracy: i < 3 ? 1 : 0 } }));
        local.recordExample(b, row(i, { scores: { accuracy: i < 5 ? 1 : 0 } }));
      }
      local.finishRun(a, { status: "completed", score: 0.5 });
      local.finishRun(b, { status: "completed", score: 5 / 6 });
      expect((await cli("lab", "copy", "lab.sqlite", url)).code).toBe(0);
      const shown = url.replace("postgres@", "");
      const env = { ...process.env, TYPELM_LAB_URL: url };
      for (const argv of [["runs"], ["runs", "--kind", "evaluation", "--limit", "2"], ["show", a.slice(0, 8)], ["compare", a, b.slice(0, 10)]]) {
        const file = await cli(...argv, "--store", "lab.sqlite");
        expect(file.stdout.split("\n")[0]).toBe(`lab store: ${join(dir, "lab.sqlite")}`);
        const team = await cli(...argv, "--store", url);
        let viaEnv = "";
        expect(await runCli(argv, { stdout: (t) => { viaEnv += t; }, stderr: () => undefined, cwd: dir, env })).toBe(0);
        expect({ argv, code: team.code, stderr: team.stderr }).toEqual({ argv, code: 0, stderr: "" });
        expect(team.stdout.split("\n")[0]).toBe(`lab store: ${shown}`);
        expect(team.stdout.split("\n").slice(1)).toEqual(file.stdout.split("\n").slice(1));
        expect(viaEnv).toBe(team.stdout);
      }
      expect((await cli("show", a.slice(0, 8), "--store", url)).stdout).toContain(`evaluation run ${a}`);
      expect(await cli("show", "zzzz", "--store", url)).toMatchObject({ code: 1, stderr: expect.stringContaining(`no run whose id is or starts with "zzzz" in ${shown}`) });
      expect(await cli("lab", "copy", "lab.sqlite", url, "--store", url)).toMatchObject({ code: 2, stderr: expect.stringContaining("--store is not an option of lab: it goes with typelm runs, show, compare, rescore, traces and view") });
    });

    it("copies a team's lab back into a file: the same runs, and copying again adds nothing", async () => {
      const url = fresh();
      const team = PostgresLabStore.open(url);
      const ev = team.startRun({ kind: "evaluation", name: "on the server", config: { seed: 2 } });
      for (const i of [0, 1, 2, 3]) team.recordExample(ev, row(i));
      team.recordBatch(ev, { batchId: "batch_9", provider: "anthropic", model: "claude-haiku-4-5", endpoint: "https://api.anthropic.com", round: 0, customIds: ["k"] });
      team.finishRun(ev, { status: "completed", score: 0.5 });
      const opt = team.startRun({ kind: "optimization", name: "GEPA", config: {} });
      team.recordTrial(opt, trial(0, { exampleScores: [{ exampleId: "e", score: 1, error: null }] }));
      await team.flush();
      await sql(url, "INSERT INTO registry_versions (name, version, created_at, score, metadata_json, state_json, module_class) VALUES ('shared', 1, 't', NULL, '{}', '{}', 'Predict')");
      const first = await cli("lab", "copy", url, "back.sqlite");
      expect(first).toEqual({
        code: 0, stderr: "",
        stdout: `copied ${url.replace("postgres@", "")} into ${join(dir, "back.sqlite")}\n` +
          "runs: 2 added, 0 updated, 0 already there\nrows: 4 added (texts of their model calls: 0 added); trials: 1 added; batches: 1 added\nregistry versions: 1 added, 0 already there\n",
      });
      const local = LabStore.open(join(dir, "back.sqlite"));
      expect(local.runs().map((r) => r.id)).toEqual([opt, ev]);
      for (const id of [ev, opt]) expect(local.run(id)).toEqual(await team.run(id));
      expect(local.batches(ev)).toEqual(await team.batches(ev));
      const again = await cli("lab", "copy", url, "back.sqlite");
      expect(again.stdout.split("\n").slice(1)).toEqual([
        "runs: 0 added, 0 updated, 2 already there", "rows: 0 added (texts of their model calls: 0 added); trials: 0 added; batches: 0 added", "registry versions: 0 added, 1 already there", "",
      ]);
      closeStoreSync(join(dir, "back.sqlite"));
    });

    it("says what it takes when given something else", async () => {
      expect(await cli("lab", "copy", "lab.sqlite")).toMatchObject({ code: 2, stderr: expect.stringContaining("lab copy <lab store file> <postgres://...>") });
      expect(await cli("lab", "copy", "missing.sqlite", fresh())).toMatchObject({ code: 1, stderr: expect.stringContaining(`no lab store at ${join(dir, "missing.sqlite")}`) });
      expect(await cli("lab", "copy", "lab.sqlite", "other.sqlite")).toMatchObject({ code: 1, stderr: expect.stringContaining("the destination must be a PostgreSQL URL") });
    });
  });

  it("a server that does not answer is a ConfigurationError naming the database without its password", async () => {
    const lab = PostgresLabStore.open(`postgres://lab:s3cret-pw@127.0.0.1:${server.port + 1}/typelm`);
    const failure = await lab.runs().then(() => undefined, (e: unknown) => e);
    expect(failure).toBeInstanceOf(ConfigurationError);
    expect(String((failure as Error).message)).toMatch(/^Cannot open the PostgreSQL lab store at postgres:\/\/127\.0\.0\.1:\d+\/typelm: .*ECONNREFUSED/);
    expect(String((failure as Error).message)).not.toContain("s3cret-pw");
    lab.startRun({ kind: "evaluation", name: "lost?" });
    await expect(lab.flush()).rejects.toBeInstanceOf(ConfigurationError);
  });
});
