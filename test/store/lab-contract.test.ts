// The lab store's contract, one suite run on both engines: a temporary SQLite file and a fresh database
// of a real PostgreSQL server this suite starts (test/helpers/postgres.ts). Reads are awaited, so one
// test body serves both; a write's failure reaches the caller at the call (SQLite) or at the next
// flush (PostgreSQL queues writes), which `attempt` covers. Engine-specific behaviour stays in
// lab-store.test.ts and pg-lab-store.test.ts.
import { afterEach, describe, expect, it } from "@jest/globals";
import { runCli } from "../../lib/lab/cli/index.js";
import { resetConfiguration } from "../../lib/config.js";
import { ValidationError } from "../../lib/errors.js";
import { copyLab, copyReportText } from "../../lib/store/copy/lab-copy.js";
import type { Lab } from "../../lib/store/lab-store.js";
import type { EvaluationRun, OptimizationRun } from "../../lib/store/records.js";
import { Registry } from "../../lib/store/registry/registry.js";
import { registerSecret, shownUrl } from "../../lib/instrument/redact.js";
import { openStoreSync, STORE_MIGRATIONS, migrate } from "../../lib/store/db.js";
import type { ModelCall } from "../../lib/lm/usage-scope.js";
import BetterSqlite3 from "better-sqlite3";
import {
  bothEngines, type Engine, row, settle, sqlIn, sqlOn, trial,
} from "./lab-engines.js";
import { prompts, SentimentProgram, tunedProgram } from "./registry-fixture.js";
import { dirname } from "node:path";

const { sqlite, postgres, withPostgres, engines } = bothEngines("the lab store contract");
afterEach(() => resetConfiguration());

/** Runs a write and waits for it to reach the store: the error it raised at once or at the flush, else undefined. */
async function attempt(lab: Lab, write: () => void): Promise<unknown> {
  try {
    write();
    await settle(lab);
    return undefined;
  } catch (error) {
    return error;
  }
}

/** `fn()` as a promise: a synchronous throw (SQLite) becomes a rejection, as PostgreSQL's. */
const later = async <T>(fn: () => T | Promise<T>): Promise<T> => fn();

/** An API key as a provider hands it out: registered as a secret, as building an LM with it does. */
const KEY = `sk-${"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"}`;
/** A system prompt longer than the 128 characters kept inline: stored once in lab_texts. */
const SYSTEM = `You label the sentiment of one sentence. ${"Read the whole sentence before you answer, and answer with one label. ".repeat(3)}`;

/** The calls recorded with the rows of `fill`'s evaluation (index -> calls), as given to recordExample. */
function sampleCalls(): Map<number, ModelCall[]> {
  return new Map([
    [0, [{
      provider: "openai", model: "gpt-4o-mini", messages: [{ role: "system", content: SYSTEM }, { role: "user", content: "Sentence: s0" }],
      reply: '{"label":"positive"}', inputTokens: 52, outputTokens: 6, cost: 0.000012, latencyMs: 210.5, cached: false,
    }]],
    [2, [{
      provider: "openai", model: "gpt-4o-mini", messages: [{ role: "system", content: SYSTEM }, { role: "user", content: `Sentence: s2, my key is ${KEY}` }],
      reply: '{"label":"negative"}', inputTokens: 61, outputTokens: 6, cost: null, latencyMs: 0, cached: true,
    }, {
      provider: "anthropic", model: "claude-haiku-4-5", messages: [{ role: "user", content: "Judge: is negative right for s2?" }],
      reply: "fail: off topic", inputTokens: 12, outputTokens: 4, cost: 0.00002, latencyMs: 95, cached: false,
    }]],
  ]);
}

/** `sampleCalls()` as the store gives them back: the key masked, nothing else changed. */
function sampleCallsStored(): Map<number, ModelCall[]> {
  const calls = sampleCalls();
  calls.get(2)![0]!.messages[1]!.content = "Sentence: s2, my key is [REDACTED]";
  return calls;
}

describe.each(engines)("the lab store contract on %s", (_name, engine) => {
  it("an evaluation run: recorded rows read back equal, in index order, while running and after it finished, from another handle too", async () => {
    const location = engine.fresh();
    const lab = engine.open(location);
    const id = lab.startRun({ kind: "evaluation", name: "poem baseline", config: { concurrency: 8, metrics: ["accuracy"], seed: 7 } });
    const failed = row(2, { prediction: null, error: "LMError: 500", scores: { accuracy: 0 } });
    const judged = row(3, { details: { judge: { verdict: "pass", rationale: "It rhymes." } } });
    lab.recordExample(id, row(1));
    lab.recordExample(id, row(0));
    lab.recordExample(id, failed);
    lab.recordExample(id, judged);
    const running = (await lab.run(id)) as EvaluationRun;
    expect(running).toMatchObject({ id, kind: "evaluation", name: "poem baseline", status: "running", endedAt: null, score: null, error: null });
    expect(running.rows).toEqual([row(0), row(1), failed, judged]);

    lab.finishRun(id, { status: "completed", score: 0.5, summary: { accuracy: 0.5, cost: 0.004 } });
    await settle(lab);
    const reader = engine.open(location);
    const done = (await reader.run(id)) as EvaluationRun;
    expect(done).toEqual({
      id, kind: "evaluation", name: "poem baseline", status: "completed", startedAt: expect.any(String), endedAt: expect.any(String),
      score: 0.5, config: { concurrency: 8, metrics: ["accuracy"], seed: 7 }, summary: { accuracy: 0.5, cost: 0.004 }, error: null,
      rows: [row(0), row(1), failed, judged],
    });
    expect(Date.parse(done.endedAt!)).toBeGreaterThanOrEqual(Date.parse(done.startedAt));
    expect(await reader.rows(id)).toEqual(done.rows);
  });

  it("an optimization run: trials with parents, per-example scores, reuse and errors read back equal; a NaN score is null", async () => {
    const location = engine.fresh();
    const lab = engine.open(location);
    const id = lab.startRun({ kind: "optimization", name: "GEPA", config: { seed: 7 } });
    const child = trial(1, {
      kind: "candidate", parents: [0],
      exampleScores: [{ exampleId: "dev-1", score: 1, error: null }, { exampleId: "dev-2", score: 0, error: "TypeError: metric \"m\" returned NaN" }],
      budgetSpent: 14, reused: 1,
    });
    lab.recordTrial(id, trial(0));
    lab.recordTrial(id, child);
    lab.recordTrial(id, trial(2, { score: Number.NaN, error: "LMError: timeout", data: {} }));
    lab.finishRun(id, { status: "completed", score: 0.6, bestTrial: 1 });
    await settle(lab);
    const run = (await engine.open(location).run(id)) as OptimizationRun;
    expect(run).toMatchObject({ kind: "optimization", status: "completed", score: 0.6, bestTrial: 1, config: { seed: 7 } });
    expect(run.trials).toEqual([trial(0), child, trial(2, { score: null, error: "LMError: timeout", data: {} })]);
    expect(await lab.trials(id)).toEqual(run.trials);
  });

  it("a failed run keeps its error, a stopped run its summary; reopenRun sets either back to running", async () => {
    const lab = engine.open(engine.fresh());
    const failed = lab.startRun({ kind: "optimization", name: "MIPROv2" });
    const stopped = lab.startRun({ kind: "optimization", name: "SimpleOptimizer" });
    lab.recordTrial(stopped, trial(0, { reused: 4 }));
    lab.finishRun(failed, { status: "failed", error: "LMError: 401 unauthorized" });
    lab.finishRun(stopped, { status: "stopped", score: 0.5, bestTrial: 0, summary: { stopped: "maxCost", maxCost: 0.01 } });
    expect(await lab.run(failed)).toMatchObject({ status: "failed", error: "LMError: 401 unauthorized", score: null, bestTrial: null, config: {}, summary: {} });
    expect(await lab.run(stopped)).toMatchObject({ status: "stopped", score: 0.5, bestTrial: 0, summary: { stopped: "maxCost", maxCost: 0.01 } });
    expect((await lab.runs({ status: "stopped" })).map((r) => r.id)).toEqual([stopped]);
    for (const id of [failed, stopped]) {
      lab.reopenRun(id);
      expect(await lab.run(id)).toMatchObject({ status: "running", endedAt: null, error: null });
    }
    expect((await lab.trials(stopped)).map((t) => t.reused)).toEqual([4]);
  });

  it("runs() lists newest first, filtered by kind, name and status, with a limit", async () => {
    const lab = engine.open(engine.fresh());
    expect(await lab.runs()).toEqual([]);
    const a = lab.startRun({ kind: "evaluation", name: "base" });
    const b = lab.startRun({ kind: "optimization", name: "MIPROv2" });
    const c = lab.startRun({ kind: "evaluation", name: "tuned" });
    lab.finishRun(a, { status: "completed", score: 0.4 });
    expect((await lab.runs()).map((r) => r.id)).toEqual([c, b, a]);
    expect((await lab.runs({ kind: "evaluation" })).map((r) => r.id)).toEqual([c, a]);
    expect((await lab.runs({ kind: "optimization" })).map((r) => r.id)).toEqual([b]);
    expect((await lab.runs({ name: "MIPROv2" })).map((r) => r.id)).toEqual([b]);
    expect((await lab.runs({ name: "nobody" })).map((r) => r.id)).toEqual([]);
    expect((await lab.runs({ status: "completed" })).map((r) => r.id)).toEqual([a]);
    expect((await lab.runs({ kind: "evaluation", status: "running" })).map((r) => r.id)).toEqual([c]);
    expect((await lab.runs({ limit: 2 })).map((r) => r.id)).toEqual([c, b]);
    expect((await lab.runs({ limit: 0 })).map((r) => r.id)).toEqual([]);
    expect((await lab.runs())[2]).toEqual({
      id: a, kind: "evaluation", name: "base", status: "completed", startedAt: expect.any(String),
      endedAt: expect.any(String), score: 0.4, config: {}, summary: {}, error: null,
    });
  });

  it("runs() with an unknown kind or status, or a bad limit, is a ValidationError listing what is valid, not an empty list", async () => {
    const lab = engine.open(engine.fresh());
    lab.startRun({ kind: "optimization", name: "MIPROv2" });
    await expect(later(() => lab.runs({ kind: "optimisation" as "optimization" }))).rejects.toThrow(ValidationError);
    await expect(later(() => lab.runs({ kind: "optimisation" as "optimization" })))
      .rejects.toThrow(/runs\(\{ kind \}\) expects "evaluation", "optimization" or "traces"; received "optimisation"/);
    await expect(later(() => lab.runs({ status: "done" as "completed" })))
      .rejects.toThrow(/runs\(\{ status \}\) expects "running", "completed", "failed" or "stopped"; received "done"/);
    await expect(later(() => lab.runs({ limit: -1 }))).rejects.toThrow(/runs\(\{ limit \}\) expects a whole number ≥ 0; received -1/);
    await expect(later(() => lab.runs({ limit: 1.5 }))).rejects.toThrow(ValidationError);
    expect(await lab.runs({ kind: "optimization", status: "running" })).toHaveLength(1);
  });

  it("an unknown run reads as undefined or empty; writing to it is a ValidationError naming it, and writes nothing", async () => {
    const lab = engine.open(engine.fresh());
    expect(await lab.run("no-such-run")).toBeUndefined();
    expect(await lab.rows("no-such-run")).toEqual([]);
    expect(await lab.trials("no-such-run")).toEqual([]);
    expect(await lab.batches("no-such-run")).toEqual([]);
    for (const write of [
      () => lab.recordExample("no-such-run", row(0)),
      () => lab.recordTrial("no-such-run", trial(0)),
      () => lab.finishRun("no-such-run", { status: "completed" }),
      () => lab.reopenRun("no-such-run"),
    ]) {
      const error = await attempt(lab, write);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(/^Unknown run id "no-such-run" in the lab store at .*: start the run with lab\.startRun/);
    }
    expect(await lab.runs()).toEqual([]);
    expect(await lab.rows("no-such-run")).toEqual([]);
  });

  it("an index recorded twice is a ValidationError naming the run and the index; the first row stays", async () => {
    const lab = engine.open(engine.fresh());
    const id = lab.startRun({ kind: "evaluation", name: "dup" });
    lab.recordExample(id, row(3));
    const error = await attempt(lab, () => lab.recordExample(id, row(3, { exampleId: "other" })));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(new RegExp(`^Run ${id} already has example 3 in .*: each index is recorded once`));
    const opt = lab.startRun({ kind: "optimization", name: "dup" });
    lab.recordTrial(opt, trial(0));
    expect(String(await attempt(lab, () => lab.recordTrial(opt, trial(0, { score: 0.1 }))))).toContain(`Run ${opt} already has trial 0`);
    expect(await lab.rows(id)).toEqual([row(3)]);
    expect(await lab.trials(opt)).toEqual([trial(0)]);
  });

  it("a value JSON cannot hold is a ValidationError at the call, naming where it is, and nothing of it is written", async () => {
    const lab = engine.open(engine.fresh());
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    expect(() => lab.startRun({ kind: "evaluation", name: "x", config: { seed: 7n } })).toThrow(ValidationError);
    expect(() => lab.startRun({ kind: "evaluation", name: "x", config: { seed: 7n } })).toThrow(/config cannot be stored as JSON: config\.seed is a BigInt \(7n\)/);
    expect(() => lab.startRun({ kind: "evaluation", name: "x", config: cycle })).toThrow(/config\.self refers back to config \(a cycle\)/);
    expect(() => lab.startRun({ kind: "evaluations" as "evaluation", name: "x" })).toThrow(ValidationError);
    const id = lab.startRun({ kind: "evaluation", name: "ok" });
    expect(() => lab.recordExample(id, row(0, { inputs: { n: 1n } as never }))).toThrow(/inputs cannot be stored as JSON: inputs\.n is a BigInt/);
    expect(() => lab.recordExample(id, row(1, { prediction: cycle }))).toThrow(ValidationError);
    expect(() => lab.recordExample(id, row(2, { scores: { accuracy: 1, extra: 2n } as never }))).toThrow(/scores\.extra is a BigInt/);
    expect(() => lab.finishRun(id, { status: "completed", summary: { total: 3n } })).toThrow(/summary cannot be stored as JSON: summary\.total is a BigInt/);
    const opt = lab.startRun({ kind: "optimization", name: "ok" });
    expect(() => lab.recordTrial(opt, trial(0, { data: { seen: [1n] } }))).toThrow(/data cannot be stored as JSON: data\.seen\[0\] is a BigInt/);
    lab.recordExample(id, row(5));
    await settle(lab);
    expect((await lab.runs()).map((r) => [r.name, r.status])).toEqual([["ok", "running"], ["ok", "running"]]);
    expect((await lab.rows(id)).map((r) => r.index)).toEqual([5]);
    expect(await lab.trials(opt)).toEqual([]);
  });

  it("provider batches: recorded, finished and listed oldest first; recording one again makes it submitted again", async () => {
    const lab = engine.open(engine.fresh());
    const id = lab.startRun({ kind: "evaluation", name: "batched" });
    const other = lab.startRun({ kind: "evaluation", name: "other" });
    const batch = (batchId: string, round: number) => ({
      batchId, provider: "openai", model: "gpt-4o-mini", endpoint: "https://api.openai.com/v1", round, customIds: [`${batchId}-a`, `${batchId}-b`],
    });
    lab.recordBatch(id, batch("batch_1", 0));
    await new Promise((r) => setTimeout(r, 5)); // createdAt orders the list
    lab.recordBatch(id, batch("batch_2", 1));
    lab.recordBatch(other, batch("batch_9", 0));
    lab.finishBatch(id, "batch_1", "completed");
    lab.finishBatch(id, "batch_2", "failed");
    const listed = await lab.batches(id);
    expect(listed).toEqual([
      { ...batch("batch_1", 0), status: "completed", createdAt: expect.any(String) },
      { ...batch("batch_2", 1), status: "failed", createdAt: expect.any(String) },
    ]);
    expect(Date.parse(listed[1]!.createdAt)).toBeGreaterThan(Date.parse(listed[0]!.createdAt));
    expect((await lab.batches(other)).map((b) => [b.batchId, b.status])).toEqual([["batch_9", "submitted"]]);
    await new Promise((r) => setTimeout(r, 5));
    lab.recordBatch(id, { ...batch("batch_1", 2), customIds: ["again"] });
    expect((await lab.batches(id)).map((b) => [b.batchId, b.round, b.status, b.customIds])).toEqual([
      ["batch_2", 1, "failed", ["batch_2-a", "batch_2-b"]], ["batch_1", 2, "submitted", ["again"]],
    ]);
  });

  it("model calls recorded with rows read back equal, from another handle too; a long text two rows sent is stored once; a key in a message is not stored", async () => {
    registerSecret(KEY);
    const location = engine.fresh();
    const lab = engine.open(location);
    const id = lab.startRun({ kind: "evaluation", name: "with calls" });
    const given = sampleCalls();
    lab.recordExample(id, row(0), given.get(0));
    lab.recordExample(id, row(1));
    lab.recordExample(id, row(2), given.get(2));
    lab.recordExample(id, row(3), []);
    await settle(lab);
    const stored = sampleCallsStored();
    for (const reader of [lab, engine.open(location)]) {
      expect(await reader.calls(id, 0)).toEqual(stored.get(0));
      expect(await reader.calls(id, 2)).toEqual(stored.get(2));
      expect(await reader.calls(id, 1)).toEqual([]);
      expect(await reader.calls(id, 3)).toEqual([]);
      expect(await reader.calls(id, 9)).toEqual([]);
      expect(await reader.calls("no-such-run", 0)).toEqual([]);
    }
    expect((await lab.rows(id)).map((r) => r.index)).toEqual([0, 1, 2, 3]);
    expect(await sqlIn(engine, location, "SELECT text FROM lab_texts")).toEqual([{ text: SYSTEM }]);
    const everything = JSON.stringify(await sqlIn(engine, location, "SELECT * FROM lab_rows")) + JSON.stringify(await sqlIn(engine, location, "SELECT * FROM lab_texts"));
    expect(everything).toContain("[REDACTED]");
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain(KEY.slice(3, 23));
  });

  it("the registry: versions 1, 2, 3 per name, listed oldest first; load gives the latest or the one asked for", async () => {
    const location = engine.fresh();
    const registry = new Registry({ path: location });
    expect(registry.path).toBe(engine.name === "postgresql" ? shownUrl(location) : location);
    const program = tunedProgram();
    const first = await registry.store({ moduleInstance: program, name: "sentiment", metadata: { note: "first", score: 0.5 } });
    expect(first).toEqual({ name: "sentiment", version: 1, createdAt: expect.any(String) });
    program.classify.instruction = "second instruction";
    await registry.store({ moduleInstance: program, name: "sentiment", metadata: { note: "second" } });
    await registry.store({ moduleInstance: new SentimentProgram(), name: "other" });
    program.classify.instruction = "third instruction";
    const third = await registry.store({ moduleInstance: program, name: "sentiment", metadata: { score: 0.9 } });
    expect(third.version).toBe(3);
    expect((await registry.versions("sentiment")).map((v) => [v.name, v.version, v.score, v.metadata])).toEqual([
      ["sentiment", 1, 0.5, { note: "first", score: 0.5 }], ["sentiment", 2, null, { note: "second" }], ["sentiment", 3, 0.9, { score: 0.9 }],
    ]);
    expect((await registry.versions("other")).map((v) => v.version)).toEqual([1]);
    expect(await registry.versions("none")).toEqual([]);
    // Another registry on the same store (no templates of this one): the latest, and the one asked for.
    const again = new Registry({ path: location });
    expect((await again.load<SentimentProgram>("sentiment")).classify.instruction).toBe("third instruction");
    const second = await again.load("sentiment", { version: 2, into: new SentimentProgram() });
    expect(second.classify.instruction).toBe("second instruction");
    expect(prompts(second).explain).toBe(prompts(tunedProgram()).explain);
    await expect(again.load("sentiment", { version: 7 })).rejects.toThrow(
      `The registry at ${registry.path} has no version 7 of "sentiment"; stored versions: 1, 2, 3`,
    );
    await expect(again.load("missing")).rejects.toThrow(ValidationError);
    await expect(registry.store({ moduleInstance: program, name: "sentiment", metadata: { runs: 3n } })).rejects.toThrow(ValidationError);
    expect((await registry.versions("sentiment")).map((v) => v.version)).toEqual([1, 2, 3]);
  });

  it("the LM cache table: a stored reply is read back equal by another handle; storing a key again keeps the later reply", async () => {
    const location = engine.fresh();
    const cache = await engine.cache(location);
    const reply = {
      key: "k1", provider: "openai", model: "gpt-4o-mini", requestJson: '{"messages":[{"role":"user","content":"Hi"}]}', content: "Hello",
      inputTokens: 9, outputTokens: 1, finishReason: "stop", createdAt: "2026-01-02T03:04:05.000Z",
    };
    expect(await cache.get("k1")).toBeUndefined();
    await cache.put(reply);
    await cache.put({ ...reply, key: "k2", content: "Other", finishReason: undefined });
    const other = await engine.cache(location);
    expect(await other.get("k1")).toEqual(reply);
    expect(await other.get("k2")).toEqual({ ...reply, key: "k2", content: "Other", finishReason: undefined });
    await other.put({ ...reply, content: "Hello again", outputTokens: 2 });
    expect(await cache.get("k1")).toEqual({ ...reply, content: "Hello again", outputTokens: 2 });
    expect(await cache.get("k3")).toBeUndefined();
  });
});

/** Fills a lab with one of everything `typelm lab copy` carries. */
async function fill(lab: Lab, registryAt: string): Promise<string[]> {
  registerSecret(KEY);
  const calls = sampleCalls();
  const ev = lab.startRun({ kind: "evaluation", name: "sentiment", config: { seed: 1 } });
  lab.recordExample(ev, row(0), calls.get(0));
  lab.recordExample(ev, row(1, { prediction: null, error: "LMError: 500", scores: { accuracy: 0 } }));
  lab.recordExample(ev, row(2, { details: { judge: { verdict: "fail", rationale: "Off topic." } } }), calls.get(2));
  lab.recordBatch(ev, { batchId: "batch_1", provider: "openai", model: "gpt-4o-mini", endpoint: "https://api.openai.com/v1", round: 0, customIds: ["a", "b"] });
  lab.finishBatch(ev, "batch_1", "completed");
  lab.finishRun(ev, { status: "completed", score: 2 / 3, summary: { failures: 1 } });
  const opt = lab.startRun({ kind: "optimization", name: "GEPA", config: { seed: 2 } });
  lab.recordTrial(opt, trial(0));
  lab.recordTrial(opt, trial(1, { parents: [0], exampleScores: [{ exampleId: "e", score: 1, error: null }], reused: 1 }));
  lab.finishRun(opt, { status: "stopped", score: 0.6, bestTrial: 1, summary: { stopped: "maxCost" } });
  const going = lab.startRun({ kind: "evaluation", name: "still running" });
  lab.recordExample(going, row(0));
  await settle(lab);
  const registry = new Registry({ path: registryAt });
  await registry.store({ moduleInstance: tunedProgram(), name: "sentiment", metadata: { note: "v1" } });
  await registry.store({ moduleInstance: new SentimentProgram(), name: "sentiment" });
  return [going, opt, ev];
}

/** Everything a lab holds that a copy carries, read through the store's own API. */
async function contents(lab: Lab, registryAt: string) {
  const runs = await lab.runs();
  const registry = new Registry({ path: registryAt });
  const versions = await registry.versions("sentiment");
  const read = await Promise.all(runs.map((r) => lab.run(r.id)));
  return {
    runs: read,
    calls: await Promise.all(read.map(async (r) => r?.kind === "evaluation" ? Promise.all(r.rows.map((x) => lab.calls(r.id, x.index))) : [])),
    batches: await Promise.all(runs.map((r) => lab.batches(r.id))),
    registry: versions,
    prompts: await Promise.all(versions.map(async (v) => prompts(await registry.load("sentiment", { version: v.version, into: new SentimentProgram() })))),
  };
}

(withPostgres ? describe : describe.skip)("copying a lab between the engines (lab copy)", () => {
  it("SQLite -> PostgreSQL -> SQLite: every run, row, trial, batch and registry version reads back equal; copying again adds nothing", async () => {
    const source = sqlite.fresh();
    const team = postgres.fresh();
    const back = sqlite.fresh();
    const ids = await fill(sqlite.open(source), source);
    // A text no row refers to stays behind.
    openStoreSync(source).prepare("INSERT INTO lab_texts (hash, text) VALUES ('0123456789abcdef0123456789abcdef', 'unused')").run();
    const original = await contents(sqlite.open(source), source);
    expect(original.runs.map((r) => r?.id)).toEqual(ids);
    const stored = sampleCallsStored();
    expect(original.calls).toEqual([[[]], [], [stored.get(0), [], stored.get(2)]]);

    const there = await copyLab(source, team);
    expect(copyReportText(there)).toBe(
      `copied ${source} into ${shownUrl(team)}\nruns: 3 added, 0 updated, 0 already there\n` +
        "rows: 4 added (texts of their model calls: 1 added); trials: 2 added; batches: 1 added\nregistry versions: 2 added, 0 already there\n",
    );
    expect(await contents(postgres.open(team), team)).toEqual(original);
    expect(await sqlOn(team, "SELECT text FROM lab_texts")).toEqual([{ text: SYSTEM }]);
    const returned = await copyLab(team, back);
    expect({ runs: returned.runs, rows: returned.rows, texts: returned.texts, trials: returned.trials, batches: returned.batches, registry: returned.registry }).toEqual({
      runs: { added: 3, updated: 0, unchanged: 0 }, rows: 4, texts: 1, trials: 2, batches: 1, registry: { added: 2, unchanged: 0, conflicts: [] },
    });
    expect(await contents(sqlite.open(back), back)).toEqual(original);
    expect(await sqlIn(sqlite, back, "SELECT text FROM lab_texts")).toEqual([{ text: SYSTEM }]);
    expect((await copyLab(team, back)).texts).toBe(0);

    const again = await copyLab(source, team);
    expect(copyReportText(again).split("\n").slice(1)).toEqual([
      "runs: 0 added, 0 updated, 3 already there", "rows: 0 added (texts of their model calls: 0 added); trials: 0 added; batches: 0 added", "registry versions: 0 added, 2 already there", "",
    ]);
    expect(await sqlOn(team, "SELECT (SELECT COUNT(*)::int FROM lab_runs) AS runs, (SELECT COUNT(*)::int FROM lab_rows) AS rows, (SELECT COUNT(*)::int FROM lab_texts) AS texts, (SELECT COUNT(*)::int FROM registry_versions) AS versions"))
      .toEqual([{ runs: 3, rows: 4, texts: 1, versions: 2 }]);
    const everything = JSON.stringify(await sqlOn(team, "SELECT * FROM lab_rows")) + JSON.stringify(await sqlOn(team, "SELECT * FROM lab_texts"));
    expect(everything).not.toContain(KEY);
  });

  it("PostgreSQL -> SQLite -> PostgreSQL, through the command line: the same round trip the other way", async () => {
    const team = postgres.fresh();
    const file = sqlite.fresh();
    const otherTeam = postgres.fresh();
    const ids = await fill(postgres.open(team), team);
    await sqlOn(team, "INSERT INTO lab_texts (hash, text) VALUES ('0123456789abcdef0123456789abcdef', 'unused')");
    const original = await contents(postgres.open(team), team);
    expect(original.runs.map((r) => r?.id)).toEqual(ids);
    const stored = sampleCallsStored();
    expect(original.calls).toEqual([[[]], [], [stored.get(0), [], stored.get(2)]]);
    const cli = async (...argv: string[]) => {
      let stdout = "", stderr = "";
      const code = await runCli(argv, { stdout: (t) => { stdout += t; }, stderr: (t) => { stderr += t; }, cwd: dirname(file) });
      return { code, stdout, stderr };
    };
    expect(await cli("lab", "copy", team, file)).toEqual({
      code: 0, stderr: "",
      stdout: `copied ${shownUrl(team)} into ${file}\nruns: 3 added, 0 updated, 0 already there\n` +
        "rows: 4 added (texts of their model calls: 1 added); trials: 2 added; batches: 1 added\nregistry versions: 2 added, 0 already there\n",
    });
    expect(await contents(sqlite.open(file), file)).toEqual(original);
    expect(await sqlIn(sqlite, file, "SELECT text FROM lab_texts")).toEqual([{ text: SYSTEM }]);
    const onward = await cli("lab", "copy", file, otherTeam);
    expect({ code: onward.code, rows: onward.stdout.split("\n")[2] }).toEqual({
      code: 0, rows: "rows: 4 added (texts of their model calls: 1 added); trials: 2 added; batches: 1 added",
    });
    expect(await contents(postgres.open(otherTeam), otherTeam)).toEqual(original);
    expect(await sqlOn(otherTeam, "SELECT text FROM lab_texts")).toEqual([{ text: SYSTEM }]);
    expect((await cli("lab", "copy", team, file)).stdout.split("\n").slice(1, 3)).toEqual([
      "runs: 0 added, 0 updated, 3 already there", "rows: 0 added (texts of their model calls: 0 added); trials: 0 added; batches: 0 added",
    ]);
    expect((await cli("lab", "copy", file, otherTeam)).stdout.split("\n")[2]).toBe("rows: 0 added (texts of their model calls: 0 added); trials: 0 added; batches: 0 added");
  });

  it("a lab store file written before model calls were recorded (no calls_json, no lab_texts) copies into a team's lab", async () => {
    const old = sqlite.fresh();
    const team = postgres.fresh();
    const db = new BetterSqlite3(old);
    migrate(db, STORE_MIGRATIONS.filter((m) => m.name < "006"));
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'lab_texts'").all()).toEqual([]);
    db.prepare("INSERT INTO lab_runs (id, kind, name, status, started_at, ended_at, score, config_json, summary_json) VALUES ('old-run', 'evaluation', 'before calls', 'completed', '2025-01-02T03:04:05.000Z', '2025-01-02T03:05:00.000Z', 1, '{}', '{}')").run();
    db.prepare("INSERT INTO lab_rows (run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost) VALUES ('old-run', 0, 'e0', '{\"q\":\"x\"}', '{\"a\":\"y\"}', '{\"a\":\"y\"}', '{\"accuracy\":1}', NULL, 5, 3, 1, 0.5)").run();
    db.close();
    const report = await copyLab(old, team);
    expect({ runs: report.runs, rows: report.rows, texts: report.texts }).toEqual({ runs: { added: 1, updated: 0, unchanged: 0 }, rows: 1, texts: 0 });
    const lab = postgres.open(team);
    expect(await lab.rows("old-run")).toEqual([{
      index: 0, exampleId: "e0", inputs: { q: "x" }, expected: { a: "y" }, prediction: { a: "y" }, scores: { accuracy: 1 }, error: null,
      durationMs: 5, inputTokens: 3, outputTokens: 1, cost: 0.5,
    }]);
    expect(await lab.calls("old-run", 0)).toEqual([]);
    expect((await copyLab(old, team)).runs).toEqual({ added: 0, updated: 0, unchanged: 1 });
  });
});
