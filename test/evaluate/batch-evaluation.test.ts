// Evaluation({ batch }) against the fake provider's batch services, with the real SDKs on loopback.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError, Evaluation, FewShotExample, LabStore, LM, LMError, Predict, resetConfiguration, ValidationError } from "../../lib/index.js";
import type { EvaluationRun } from "../../lib/index.js";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { ShoutAndCount, Upper, answerFor } from "./batch-task.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-batch-eval-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => resetConfiguration());

const answer = (request: FakeRequest) => answerFor(String(request.messages[request.messages.length - 1]?.content ?? ""));

const words = ["ant", "bee", "yak", "dog", "eel", "fox"];
const shoutExamples = words.map((w, i) => new FewShotExample({ id: `w${i}`, input: { word: w }, output: { loud: w.toUpperCase() } }));
const countExamples = words.map((w, i) => new FewShotExample({ id: `w${i}`, input: { word: w }, output: { loud: w.toUpperCase(), letters: 3 } }));

let fake: FakeProvider;
beforeAll(async () => { fake = await startFakeProvider({ defaultReply: answer }); });
afterAll(() => fake.close());

const lm = (options: { cache?: string } = {}) => new LM("openai/gpt-4o-mini", {
  apiKey: "sk-batch-eval-key", baseURL: fake.openaiBaseURL, temperature: 0, ...(options.cache ? { cache: { path: options.cache } } : {}),
});
const fast = { pollInterval: 0.01 };

describe("Evaluation with batch", () => {
  it("a one-step module is one batch, with no live request; rows as live; the batch is in the lab store; the cost is half a live run's", async () => {
    const lab = LabStore.open(join(dir, "one.sqlite"));
    const before = { batches: fake.batches.length, live: fake.requests.length, uploads: fake.uploads };
    const program = new Predict(Upper).configure((c) => { c.lm = lm(); });
    const report = await new Evaluation({ lab, batch: fast, progress: false }).evaluate({ moduleInstance: program, testExamples: shoutExamples });
    expect(fake.batches.length - before.batches).toBe(1);
    expect(fake.batches[fake.batches.length - 1]!.customIds).toHaveLength(6);
    expect(fake.uploads - before.uploads).toBe(1);
    expect(fake.requests.length).toBe(before.live);
    expect(report.metrics.accuracy).toBe(1);
    expect(report.failures).toHaveLength(0);
    const stored = lab.batches(report.runId!);
    expect(stored).toEqual([expect.objectContaining({ provider: "openai", model: "gpt-4o-mini", round: 0, status: "completed" })]);
    expect(stored[0]!.customIds).toHaveLength(6);

    // The same evaluation live: same rows, twice the cost.
    const live = await new Evaluation({ lab: null, progress: false }).evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm(); }), testExamples: shoutExamples });
    expect(fake.requests.length - before.live).toBe(6);
    expect(live.metrics).toEqual(report.metrics);
    expect(live.cost).toBeGreaterThan(0);
    expect(report.cost).toBeCloseTo(live.cost / 2, 12);
  });

  it("a two-step pipeline runs in two rounds: two batches, the second holding the second steps", async () => {
    const before = fake.batches.length;
    const program = new ShoutAndCount().configure((c) => { c.lm = lm(); });
    const report = await new Evaluation({ lab: null, batch: fast, progress: false }).evaluate({ moduleInstance: program, testExamples: countExamples });
    const batches = fake.batches.slice(before);
    expect(batches).toHaveLength(2);
    const asks = (i: number) => batches[i]!.requests.map((r) => (JSON.stringify(r.messages).includes("Shout the word") ? "shout" : "count"));
    expect(asks(0)).toEqual(Array(6).fill("shout"));
    expect(asks(1)).toEqual(Array(6).fill("count"));
    expect(report.metrics.accuracy).toBe(1);
  });

  it("cached requests stay out of batches: a second run with the cache sends none", async () => {
    const cache = join(dir, "cache.sqlite");
    const program = () => new Predict(Upper).configure((c) => { c.lm = lm({ cache }); });
    const first = await new Evaluation({ lab: null, batch: fast, progress: false }).evaluate({ moduleInstance: program(), testExamples: shoutExamples.slice(0, 4) });
    const before = { batches: fake.batches.length, uploads: fake.uploads };
    const second = await new Evaluation({ lab: null, batch: fast, progress: false }).evaluate({ moduleInstance: program(), testExamples: shoutExamples });
    // Only the two new words went into a batch.
    expect(fake.batches.length - before.batches).toBe(1);
    expect(fake.batches[fake.batches.length - 1]!.customIds).toHaveLength(2);
    expect(first.metrics.accuracy).toBe(1);
    expect(second.metrics.accuracy).toBe(1);
  });

  it("a request that fails inside a batch goes into the next round; past maxRetries it is a failed row", async () => {
    // "yak" appears in no prompt but that example's.
    const isCat = (_id: string, request: unknown) => JSON.stringify(request).includes("yak");
    fake.batch({ failIds: isCat, lineError: { status: 500, message: "server hiccup" } });
    const before = fake.batches.length;
    const program = () => new Predict(Upper).configure((c) => { c.lm = lm(); });
    const retried = await new Evaluation({ lab: null, batch: fast, progress: false }).evaluate({ moduleInstance: program(), testExamples: shoutExamples });
    expect(fake.batches.slice(before).map((b) => b.customIds.length)).toEqual([6, 1]);
    expect(retried.failures).toHaveLength(0);

    fake.batch({ failIds: isCat, lineError: { status: 500, message: "server hiccup" }, times: 2 });
    const given = await new Evaluation({ lab: null, batch: { ...fast, maxRetries: 1 }, progress: false }).evaluate({ moduleInstance: program(), testExamples: shoutExamples });
    expect(given.failures.map((r) => r.exampleId)).toEqual(["w2"]);
    expect(given.failures[0]!.error).toMatch(/server hiccup.*after 2 batches/);
    expect(given.results.filter((r) => r.error === null)).toHaveLength(5);
  });

  it("with the run recorded (lab store on), a request that failed inside a batch goes into a new batch, not the finished one again", async () => {
    const lab = LabStore.open(join(dir, "retried.sqlite"));
    const isYak = (_id: string, request: unknown) => JSON.stringify(request).includes("yak");
    fake.batch({ failIds: isYak, lineError: { status: 500, message: "server hiccup" } });
    const before = fake.batches.length;
    const program = new Predict(Upper).configure((c) => { c.lm = lm(); });
    const report = await new Evaluation({ lab, batch: fast, progress: false }).evaluate({ moduleInstance: program, testExamples: shoutExamples });
    // The provider saw a second batch holding only the failed request, and that answer is the row's.
    expect(fake.batches.slice(before).map((b) => b.customIds.length)).toEqual([6, 1]);
    expect(report.failures).toHaveLength(0);
    expect(report.results[2]!.prediction).toEqual({ loud: "YAK" });
    expect(lab.batches(report.runId!).map((b) => [b.round, b.customIds.length, b.status])).toEqual([[0, 6, "completed"], [1, 1, "completed"]]);
  });

  it("a malformed line in a batch's results fails only its request, which goes into the next batch; the good answers are kept and cached", async () => {
    const cache = join(dir, "malformed-cache.sqlite");
    const isYak = (_id: string, request: unknown) => JSON.stringify(request).includes("yak");
    fake.batch({ malformedIds: isYak });
    const before = fake.batches.length;
    const program = () => new Predict(Upper).configure((c) => { c.lm = lm({ cache }); });
    const lab = LabStore.open(join(dir, "malformed.sqlite"));
    const report = await new Evaluation({ lab, batch: fast, progress: false }).evaluate({ moduleInstance: program(), testExamples: shoutExamples });
    expect(fake.batches.slice(before).map((b) => [b.customIds.length, b.downloads])).toEqual([[6, 1], [1, 1]]);
    expect(report.failures).toHaveLength(0);
    expect(report.metrics.accuracy).toBe(1);
    // Every answer, the five good lines of the first batch included, is in the cache: a rerun sends nothing.
    const again = await new Evaluation({ lab: null, batch: fast, progress: false }).evaluate({ moduleInstance: program(), testExamples: shoutExamples });
    expect(fake.batches.length - before).toBe(2);
    expect(again.metrics.accuracy).toBe(1);

    // Without retries the row's error names the line that could not be read.
    fake.batch({ malformedIds: isYak });
    const given = await new Evaluation({ lab: null, batch: { ...fast, maxRetries: 0 }, progress: false })
      .evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm(); }), testExamples: shoutExamples });
    expect(given.failures.map((r) => r.exampleId)).toEqual(["w2"]);
    expect(given.failures[0]!.error).toMatch(/line 3 of batch \S+'s output file could not be read: .*\(after 1 batch\)/);
  });

  it("two different results for one request in a batch's results: that request goes into the next batch", async () => {
    const isYak = (_id: string, request: unknown) => JSON.stringify(request).includes("yak");
    fake.batch({ duplicateIds: isYak });
    const before = fake.batches.length;
    const lab = LabStore.open(join(dir, "duplicate.sqlite"));
    const report = await new Evaluation({ lab, batch: fast, progress: false })
      .evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm(); }), testExamples: shoutExamples });
    expect(fake.batches.slice(before).map((b) => b.customIds.length)).toEqual([6, 1]);
    expect(report.failures).toHaveLength(0);
    expect(report.results[2]!.prediction).toEqual({ loud: "YAK" });
  });

  it("a batch that fails as a whole is an LMError with the provider's reason, and the run is recorded as failed", async () => {
    const lab = LabStore.open(join(dir, "failed.sqlite"));
    fake.batch({ fail: "input file has an invalid line" });
    const program = new Predict(Upper).configure((c) => { c.lm = lm(); });
    const error = await new Evaluation({ lab, batch: fast, progress: false }).evaluate({ moduleInstance: program, testExamples: shoutExamples }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as Error).message).toContain("input file has an invalid line");
    const run = lab.runs({ kind: "evaluation" })[0]!;
    expect(run.status).toBe("failed");
    expect(lab.batches(run.id).map((b) => b.status)).toEqual(["failed"]);
  });

  it("maxWait ends a batch's wait with an LMError; the batch stays submitted, so resume waits for it and pays nothing twice", async () => {
    const lab = LabStore.open(join(dir, "max-wait.sqlite"));
    fake.batch({ polls: 12 });
    const before = { uploads: fake.uploads, batches: fake.batches.length };
    const program = () => new Predict(Upper).configure((c) => { c.lm = lm(); });
    const error = await new Evaluation({ lab, batch: { pollInterval: 0.01, maxWait: 0.1 }, progress: false })
      .evaluate({ moduleInstance: program(), testExamples: shoutExamples }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as Error).message).toMatch(/batch \S+ for model "gpt-4o-mini" has not ended after 0.1 s \(maxWait 0.1 s\)/);
    const runId = lab.runs({ kind: "evaluation" })[0]!.id;
    expect(lab.run(runId)!.status).toBe("failed");
    expect(lab.batches(runId).map((b) => b.status)).toEqual(["submitted"]);
    const report = await new Evaluation({ lab, batch: { pollInterval: 0.001 }, progress: false })
      .evaluate({ moduleInstance: program(), testExamples: shoutExamples, resume: runId });
    expect(report.metrics.accuracy).toBe(1);
    expect([fake.uploads - before.uploads, fake.batches.length - before.batches]).toEqual([1, 1]);
    expect(() => new Evaluation({ batch: { maxWait: -1 } })).toThrow(/batch.maxWait must be a positive number; received -1/);
  });

  it("resuming a run whose lab_batches row was changed outside typelm: an error naming the store, the run and the row, not a SyntaxError", async () => {
    const path = join(dir, "tampered.sqlite");
    const lab = LabStore.open(path);
    const runId = lab.startRun({ kind: "evaluation", name: "evaluation", config: { module: "Predict", metrics: ["accuracy"], examples: 6 } });
    lab.recordBatch(runId, { batchId: "batch_abc", provider: "openai", model: "gpt-4o-mini", endpoint: fake.openaiBaseURL, round: 0, customIds: ["k1"] });
    const { default: Database } = await import("better-sqlite3");
    const resume = () => new Evaluation({ lab, batch: fast, progress: false })
      .evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm(); }), testExamples: shoutExamples, resume: runId });
    for (const [column, value, why] of [
      ["custom_ids_json", '["k1", "k2"', /custom_ids_json is not JSON \(.+\); expected a JSON array of request keys/],
      ["custom_ids_json", '{"k1": 1}', /custom_ids_json is \{"k1":1\}; expected a JSON array of request keys \(strings\)/],
      ["round", "two", /round is "two"; expected a whole number ≥ 0/],
      ["provider", "", /provider is ""; expected a non-empty text/],
    ] as const) {
      const db = new Database(path);
      db.prepare("UPDATE lab_batches SET custom_ids_json = '[\"k1\"]', round = 0, provider = 'openai'").run();
      db.prepare(`UPDATE lab_batches SET ${column} = ?`).run(value);
      const rowid = (db.prepare("SELECT rowid FROM lab_batches WHERE batch_id = 'batch_abc'").get() as { rowid: number }).rowid;
      db.close();
      const error = await resume().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      const message = (error as Error).message;
      expect(message).toContain(`The lab store at ${path}: run ${runId}, lab_batches row ${rowid} (batch "batch_abc") cannot be read: `);
      expect(message).toMatch(why);
    }
  });

  it("progress: each poll emits evaluation.batch with the batch's counts, and the notebook display shows them without counting examples", async () => {
    const { applyEvent, progressBundle } = await import("../../lib/notebook/progress.js");
    const { Instrumentation } = await import("../../lib/instrument/bus.js");
    fake.batch({ polls: 2 });
    const seen: Record<string, unknown>[] = [];
    const state = { kind: "evaluation" as const, name: "e", done: 0, total: 6, searched: 0, score: null, failures: 0, cost: 0, finished: false, error: null };
    const sum = { sum: 0 };
    const off = Instrumentation.subscribe("evaluation.batch", (e) => {
      seen.push(e.payload as Record<string, unknown>);
      applyEvent(state, e.name, e.payload as Record<string, unknown>, sum);
    });
    try {
      await new Evaluation({ lab: null, batch: fast, progress: false }).evaluate({ moduleInstance: new Predict(Upper).configure((c) => { c.lm = lm(); }), testExamples: shoutExamples });
    } finally {
      off();
    }
    expect(seen.map((p) => p.status)).toEqual(["in_progress", "in_progress", "completed"]);
    expect(seen.every((p) => (p.counts as { total: number }).total === 6 && p.round === 0)).toBe(true);
    // The display folded three polls: no example counted, the last status shown.
    expect(state.done).toBe(0);
    expect(progressBundle(state)["text/plain"]).toContain("· batch round 0: completed 6 / 6, 0 failed");
  });

  it("Ollama has no batch service: a ConfigurationError saying what to do instead", async () => {
    const program = new Predict(Upper).configure((c) => { c.lm = new LM("ollama/llama3.2", { baseURL: fake.url }); });
    const error = await new Evaluation({ lab: null, batch: true, progress: false }).evaluate({ moduleInstance: program, testExamples: shoutExamples }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/Ollama has no batch service.*load balancer/);
  });

  it("refuses a bad batch option", () => {
    expect(() => new Evaluation({ batch: { pollInterval: 0 } })).toThrow(/batch.pollInterval must be a positive number/);
    expect(() => new Evaluation({ batch: "yes" as never })).toThrow(/batch must be true, false or/);
  });
});

/**
 * Runs the evaluation of `words` in a child process (the built package, a lab store at `lab`, no
 * cache) and kills it with SIGKILL once `batches` batches are in the lab store and the last one has
 * been polled twice; returns the run's id. `twoStep`: ShoutAndCount instead of one Predict.
 */
async function killedWhileWaiting(lab: string, options: { twoStep: boolean; batches: number }): Promise<string> {
  const child = join(dir, "child.mjs");
  const dist = join(process.cwd(), "dist/pkg/index.js");
  const zod = join(process.cwd(), "node_modules/zod/index.js");
  writeFileSync(child, `
import { Evaluation, FewShotExample, LabStore, LM, Module, Predict, Signature } from ${JSON.stringify(dist)};
import { z } from ${JSON.stringify(zod)};
const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });
const Count = Signature.define({ name: "Count", description: "Count the letters.", input: { loud: z.string() }, output: { letters: z.number() } });
class ShoutAndCount extends Module {
  shout = new Predict(Upper);
  count = new Predict(Count);
  async forward(inputs) {
    const { loud } = await this.shout.call(inputs);
    const { letters } = await this.count.call({ loud });
    return { loud, letters };
  }
}
const twoStep = process.env.TWO_STEP === "1";
const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-batch-eval-key", baseURL: process.env.FAKE_URL, temperature: 0 });
const examples = ${JSON.stringify(words)}.map((w, i) => new FewShotExample({ id: "w" + i, input: { word: w }, output: twoStep ? { loud: w.toUpperCase(), letters: 3 } : { loud: w.toUpperCase() } }));
const program = (twoStep ? new ShoutAndCount() : new Predict(Upper)).configure((c) => { c.lm = lm; });
await new Evaluation({ lab: LabStore.open(process.env.LAB), batch: { pollInterval: 0.05 }, progress: false }).evaluate({ moduleInstance: program, testExamples: examples });
`);
  const before = fake.batches.length;
  const env = { ...process.env, FAKE_URL: fake.openaiBaseURL, LAB: lab, TWO_STEP: options.twoStep ? "1" : "0" };
  const proc = spawn(process.execPath, [child], { cwd: process.cwd(), env, stdio: "pipe" });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += String(d); });
  // Wait until the batches are in the lab store and the last has been polled, then kill the process outright.
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (existsSync(lab) && fake.batches.length >= before + options.batches && fake.batches[before + options.batches - 1]!.polls >= 2) {
      const runs = LabStore.open(lab).runs({ kind: "evaluation" });
      if (runs.length > 0 && LabStore.open(lab).batches(runs[0]!.id).length >= options.batches) break;
    }
    if (Date.now() > deadline) throw new Error(`the child never submitted its batches: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const exited = new Promise((r) => proc.on("exit", r));
  proc.kill("SIGKILL");
  await exited;
  return LabStore.open(lab).runs({ kind: "evaluation" })[0]!.id;
}

describe("Evaluation with batch, killed after the batch was submitted", () => {
  it("resume waits for the submitted batch: no second upload, every row recorded", async () => {
    const lab = join(dir, "killed.sqlite");
    fake.batch({ polls: 8 }); // the child polls at 0.05 s doubling: about 13 s to the end, killed long before
    const before = { uploads: fake.uploads, batches: fake.batches.length };
    const runId = await killedWhileWaiting(lab, { twoStep: false, batches: 1 });
    const store = LabStore.open(lab);
    expect(store.run(runId)!.status).toBe("running");
    expect(store.batches(runId)).toEqual([expect.objectContaining({ status: "submitted" })]);
    expect(fake.uploads - before.uploads).toBe(1);

    const program = new Predict(Upper).configure((c) => { c.lm = lm(); });
    const report = await new Evaluation({ lab: store, batch: { pollInterval: 0.001 }, progress: false }).evaluate({ moduleInstance: program, testExamples: shoutExamples, resume: runId });
    expect(fake.uploads - before.uploads).toBe(1);
    expect(fake.batches.length - before.batches).toBe(1);
    expect(report.runId).toBe(runId);
    expect(report.metrics.accuracy).toBe(1);
    const run = store.run(runId) as EvaluationRun;
    expect(run.status).toBe("completed");
    expect(run.rows).toHaveLength(6);
    expect(store.batches(runId).map((b) => b.status)).toEqual(["completed"]);
  }, 60000);

  it("a two-step run killed in its second round: resume reads both earlier batches, takes the failed request's retry from the newer, and sends only what was never sent", async () => {
    const lab = join(dir, "killed-two-step.sqlite");
    // Round 0: the six shouts, yak's fails. Round 1: yak's shout again and the five counts, killed while it runs.
    const isYakShout = (_id: string, request: unknown) => JSON.stringify(request).includes("yak");
    fake.batch({ failIds: isYakShout, lineError: { status: 500, message: "server hiccup" } });
    fake.batch({ polls: 8 });
    const before = { uploads: fake.uploads, batches: fake.batches.length };
    const runId = await killedWhileWaiting(lab, { twoStep: true, batches: 2 });
    const store = LabStore.open(lab);
    expect(store.batches(runId).map((b) => [b.round, b.customIds.length, b.status])).toEqual([[0, 6, "completed"], [1, 6, "submitted"]]);

    const program = new ShoutAndCount().configure((c) => { c.lm = lm(); });
    const report = await new Evaluation({ lab: store, batch: { pollInterval: 0.001 }, progress: false })
      .evaluate({ moduleInstance: program, testExamples: countExamples, resume: runId });
    expect(report.failures).toHaveLength(0);
    expect(report.metrics.accuracy).toBe(1);
    // One new batch, holding yak's count alone: the one request no batch held yet.
    const sent = fake.batches.slice(before.batches);
    expect(sent.map((b) => b.customIds.length)).toEqual([6, 6, 1]);
    expect(JSON.stringify(sent[2]!.requests[0]!.messages)).toContain("YAK");
    expect(fake.uploads - before.uploads).toBe(3);
  }, 60000);
});
