/** More API.md details: unions, date strings, defaults, live runs, lab off for optimizers. Imports by package name (dist/). */
import { describe, expect, test } from "@jest/globals";
import { cpSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import {
  CodeAct, ConfigurationError, Evaluation, FewShotExample, Instrumentation, LM, LabStore, MIPROv2, Memory, Predict, Registry, Signature,
  SimpleOptimizer, Temporal, ValidationError, configure, loadDataset, t,
} from "typelm";
import type { TypelmEvent } from "typelm";
import { ScriptedLM, SimulatedLM, startFakeProvider } from "typelm/testing";
import { useTempLab } from "./temp-lab.js";

class Label extends Signature {
  static override description = "Label it.";
  static override input = { text: z.string() };
  static override output = { label: z.enum(["a", "b"]) };
}
const data = ["a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4"].map((w) => new FewShotExample({ input: { text: w }, output: { label: w[0] as "a" | "b" }, id: `id-${w}` }));

const temp = useTempLab("d2");

describe("more details", () => {
  test("a union of objects without a discriminator picks its member from the value", async () => {
    const U = Signature.define({ name: "U", description: "u", input: { q: z.string() },
      output: { v: z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]), w: z.union([z.number(), z.string()]) } });
    const r = await new Predict(U).call({ q: "q" }, { lm: new ScriptedLM([{ v: { b: 2 }, w: "text" }]) });
    expect(r.v).toEqual({ b: 2 });
    expect(r.w).toBe("text");
  });

  test("t.dateTime inputs given as ISO strings become ZonedDateTime keeping the offset", async () => {
    const D = Signature.define({ name: "D", description: "d", input: { at: t.dateTime() }, output: { ok: z.boolean() } });
    const lm = new ScriptedLM([{ ok: true }]);
    await new Predict(D).call({ at: "2024-03-01T10:00:00+02:00" as any }, { lm });
    const at = lm.requests[0]!.inputs!.at as Temporal.ZonedDateTime;
    expect(at).toBeInstanceOf(Temporal.ZonedDateTime);
    expect(at.offset).toBe("+02:00");
  });

  test("with no metrics, Evaluation reports the default metric as accuracy (every expected field equal)", async () => {
    const m = new Predict(Label);
    m.configure((c) => { c.lm = new ScriptedLM(() => ({ label: "a" })); });
    const report = await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: data });
    expect(report.accuracy).toBeCloseTo(0.5, 10);
  });

  test("a run can be read from the store while it is still running, with the examples finished so far", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const m = new Predict(Label);
    m.configure((c) => { c.lm = new ScriptedLM(async (req) => { if (req.inputs!.text !== "a1") await gate; return { label: "a" }; }); });
    const seen: { status?: string; rows?: number }[] = [];
    const off = Instrumentation.subscribe("evaluation.example", (e: TypelmEvent) => {
      if (seen.length > 0) return;
      setTimeout(() => {
        const run = LabStore.open().run(String(e.payload.runId));
        seen.push({ status: run?.status, rows: run && "rows" in run ? run.rows.length : -1 });
        release();
      }, 20);
    });
    try {
      await new Evaluation({ progress: false, concurrency: 2 }).evaluate({ moduleInstance: m, testExamples: data });
    } finally { off(); }
    expect(seen[0]).toEqual({ status: "running", rows: 1 });
  });

  test("c.lab = false: optimizers record nothing and make no file, lastRun still holds the run", async () => {
    configure((c) => { c.lab = false; });
    const lm = new SimulatedLM();
    const m = new Predict(Label);
    m.configure((c) => { c.lm = lm; });
    const mipro = new MIPROv2({ kDemos: 1, numCandidates: 2, numTrials: 2, minibatchSize: 2, validationSize: 4, seed: 1, promptModel: lm });
    await mipro.compile({ moduleInstance: m, trainingExamples: data, validationExamples: data });
    expect(mipro.lastRun!.trials.length).toBeGreaterThan(0);
    const simple = new SimpleOptimizer({ seed: 1, numTrials: 2, kDemos: 1 });
    await simple.compile({ moduleInstance: m, trainingExamples: data });
    expect(readdirSync(temp.dir)).toEqual([]);
  });

  test("Registry.load of a bare Predict stored in this process", async () => {
    const p = new Predict(Label);
    p.instruction = "BARE-PREDICT";
    const reg = new Registry({ path: join(temp.dir, "r.sqlite") });
    await reg.store({ moduleInstance: p, name: "bare" });
    const loaded = await reg.load<Predict>("bare");
    expect(loaded.instruction).toBe("BARE-PREDICT");
    expect(loaded).not.toBe(p);
  });

  test("Memory with storageAdapter redis and no client is a ConfigurationError", () => {
    let err: unknown;
    try {
      Memory.configure((c) => { c.storageAdapter = "redis"; c.redisClient = undefined; });
      void Memory.manager; // checked when configured or when first used
    } catch (e) { err = e; } finally {
      Memory.configure((c) => { c.storageAdapter = "in_memory"; });
    }
    expect(err).toBeInstanceOf(ConfigurationError);
  });

  test("CodeAct: a step whose code throws records the error and the agent goes on", async () => {
    const S = Signature.define({ name: "S", description: "s", input: { q: z.string() }, output: { n: z.number() } });
    const lm = new ScriptedLM([
      { thought: "oops", code: "throw new Error('step failed')", finished: false },
      { thought: "fix", code: "console.log(5)", finished: true },
      { n: 5, solution: "five" },
    ]);
    const r = await new CodeAct(S, { maxIterations: 4 }).call({ q: "q" }, { lm });
    expect(r.n).toBe(5);
    expect(r.history[0]!.error).toMatch(/step failed/);
    expect(r.history[1]!.error).toBeNull();
  });

  test("lm.tokens.used cost is 0 for a local (ollama) model", async () => {
    const fake = await startFakeProvider();
    const costs: unknown[] = [];
    const off = Instrumentation.subscribe("lm.tokens.used", (e: TypelmEvent) => { costs.push(e.payload.estimatedCost); });
    try {
      fake.reply({ label: "a" }, { usage: { inputTokens: 5000, outputTokens: 500 } });
      await new Predict(Label).call({ text: "x" }, { lm: new LM("ollama/llama3.2", { baseURL: fake.url }) });
    } finally { off(); await fake.close(); }
    expect(costs).toEqual([0]);
  });

  test("a metric returning NaN fails its row (scored 0, error kept); an example missing an expected field is a ValidationError", async () => {
    const m = new Predict(Label);
    m.configure((c) => { c.lm = new ScriptedLM(() => ({ label: "a" })); });
    const nan = (e: FewShotExample) => (e.id === "id-a1" ? Number.NaN : 1);
    const report = await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: data, metrics: [nan] });
    expect(report.results).toHaveLength(data.length);
    expect(report.failures.map((r) => r.exampleId)).toEqual(["id-a1"]);
    expect(report.metrics.nan).toBeCloseTo(7 / 8, 10);
    const holey = [...data, new FewShotExample({ input: { text: "c" }, output: {}, id: "empty" })];
    await expect(new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: holey })).rejects.toThrow(ValidationError);
  });

  test("loadDataset on a folder with a malformed JSONL line names the file and the line", async () => {
    const copy = join(temp.dir, "poem-copy");
    cpSync(join(import.meta.dirname, "../../datasets/poem-sentiment"), copy, { recursive: true });
    const lines = readFileSync(join(copy, "dev.jsonl"), "utf8").split("\n");
    lines[2] = "{ this is not json";
    writeFileSync(join(copy, "dev.jsonl"), lines.join("\n"));
    const err = await loadDataset(copy).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(String((err as Error).message)).toContain("dev.jsonl");
    expect(String((err as Error).message)).toMatch(/line 3\b|:3\b/);
  });
});
