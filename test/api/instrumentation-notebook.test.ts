/** API.md "Instrumentation" and "Notebook helpers (typelm/notebook)" — imports by package name (dist/). */
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  CalculatorTool, CodeAct, ConfigurationError, Evaluation, LabStore, FewShotExample, Instrumentation, LM, Module, Predict, ReAct, Signature,
  configure, resetConfiguration,
} from "typelm";
import type { TypelmEvent } from "typelm";
import { display } from "typelm/notebook";
import { ScriptedLM, startFakeProvider } from "typelm/testing";
import { startOtlpReceiver } from "../instrument/otlp-receiver.js";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative", "neutral"]) };
}
class Question extends Signature {
  static override description = "Answer.";
  static override input = { question: z.string() };
  static override output = { answer: z.string() };
}

const savedEnv = { ...process.env };
afterEach(() => {
  resetConfiguration();
  for (const k of ["LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "NEW_RELIC_LICENSE_KEY", "NEW_RELIC_OTLP_ENDPOINT"]) {
    if (savedEnv[k] === undefined) delete process.env[k]; else process.env[k] = savedEnv[k];
  }
});

describe("Instrumentation", () => {
  test("subscribe by name or pattern; off() unsubscribes; events are { name, payload, timestamp }", async () => {
    const fake = await startFakeProvider();
    try {
      const tokens: TypelmEvent[] = []; const lmNames: string[] = [];
      const off = Instrumentation.subscribe("lm.tokens.used", (e) => { tokens.push(e); });
      const offLm = Instrumentation.subscribe(/^lm\./, (e) => { lmNames.push(e.name); });
      fake.reply({ sentiment: "positive" }, { usage: { inputTokens: 1000, outputTokens: 100 } });
      await new Predict(Classify).call({ sentence: "x" }, { lm: new LM("openai/gpt-4o-mini", { apiKey: "sk-event-secret-123", baseURL: fake.openaiBaseURL }) });
      off(); offLm();
      expect(JSON.stringify(tokens)).not.toContain("sk-event-secret-123");
      expect(tokens).toHaveLength(1);
      const t = tokens[0]!;
      expect(typeof t.timestamp).toBe("number");
      expect(t.payload).toMatchObject({ inputTokens: 1000, outputTokens: 100, provider: "openai", model: "gpt-4o-mini" });
      // gpt-4o-mini: $0.15 / 1M input, $0.60 / 1M output → 0.00015 + 0.00006
      expect(t.payload.estimatedCost).toBeCloseTo(0.00021, 8);
      for (const n of ["lm.request.start", "lm.request.end", "lm.chat.start", "lm.chat.end", "lm.tokens.used"]) expect(lmNames).toContain(n);
      const before = lmNames.length;
      fake.reply({ sentiment: "positive" });
      await new Predict(Classify).call({ sentence: "x" }, { lm: new LM("openai/gpt-4o-mini", { apiKey: "k", baseURL: fake.openaiBaseURL }) });
      expect(lmNames.length).toBe(before);
    } finally { await fake.close(); }
  });

  test("every payload carries traceId, spanId, parentSpanId; nested work links up; a throwing listener never breaks the call", async () => {
    const events: TypelmEvent[] = [];
    const off = Instrumentation.subscribe(/.*/, (e) => { events.push(e); });
    const offBad = Instrumentation.subscribe("prediction.start", () => { throw new Error("listener bug"); });
    class Outer extends Module {
      agent = new ReAct(Question, { tools: [new CalculatorTool()] });
      async forward(i: { question: string }) { return this.agent.call(i); }
    }
    const lm = new ScriptedLM([
      { thought: "t", action: "calculator", toolInput: { expression: "1 + 1" } },
      { thought: "t", action: "finish", toolInput: {} },
      { answer: "2" },
    ]);
    try {
      expect((await new Outer().call({ question: "q" }, { lm })).answer).toBe("2");
    } finally { off(); offBad(); }
    for (const e of events) {
      expect(typeof e.payload.traceId).toBe("string");
      expect(typeof e.payload.spanId).toBe("string");
      expect("parentSpanId" in e.payload).toBe(true);
    }
    const names = events.map((e) => e.name);
    for (const n of ["module.forward.start", "module.forward.end", "prediction.start", "prediction.end"]) expect(names).toContain(n);
    const root = events.find((e) => e.name === "module.forward.start")!;
    expect(root.payload.parentSpanId).toBeNull();
    expect(new Set(events.map((e) => e.payload.traceId))).toEqual(new Set([root.payload.traceId]));
    const spans = new Set(events.map((e) => e.payload.spanId));
    for (const e of events) if (e.payload.parentSpanId !== null) expect(spans.has(e.payload.parentSpanId as string)).toBe(true);
    const prediction = events.find((e) => e.name === "prediction.start")!;
    expect(prediction.payload.parentSpanId).not.toBeNull();
  });

  test("logger subscriber: json lines at the chosen level, with trace ids", async () => {
    const lines: string[] = [];
    const spy = jest.spyOn(process.stderr, "write").mockImplementation((chunk: any) => { lines.push(String(chunk)); return true; });
    try {
      configure((c) => {
        c.instrumentation.enabled = true; c.instrumentation.subscribers = ["logger"]; c.logger.level = "debug"; c.logger.formatter = "json";
      });
      await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ sentiment: "positive" }]) });
    } finally { spy.mockRestore(); resetConfiguration(); }
    const json = lines.flatMap((l) => l.split("\n")).filter((l) => l.trim().startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(json.length).toBeGreaterThan(0);
    expect(json.some((j) => j.event === "prediction.end" && typeof j.traceId === "string")).toBe(true);
  });

  test("langfuse: missing credential is a ConfigurationError when switched on; spans go to ${LANGFUSE_HOST}/api/public/otel/v1/traces with Basic auth on flush", async () => {
    delete process.env.LANGFUSE_PUBLIC_KEY; delete process.env.LANGFUSE_SECRET_KEY;
    expect(() => configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["langfuse"]; })).toThrow(ConfigurationError);
    resetConfiguration();
    const receiver = await startOtlpReceiver("ok");
    try {
      process.env.LANGFUSE_PUBLIC_KEY = "pk-lf-test"; process.env.LANGFUSE_SECRET_KEY = "sk-lf-test-secret"; process.env.LANGFUSE_HOST = receiver.url;
      configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["langfuse"]; });
      await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ sentiment: "positive" }]) });
      await Instrumentation.flush();
      expect(receiver.received.length).toBeGreaterThan(0);
      const first = receiver.received[0]!;
      expect(first.path).toBe("/api/public/otel/v1/traces");
      expect(first.headers.authorization).toBe(`Basic ${Buffer.from("pk-lf-test:sk-lf-test-secret").toString("base64")}`);
      expect(receiver.received.some((r) => r.body.includes("sk-lf-test-secret"))).toBe(false);
    } finally { resetConfiguration(); await Instrumentation.flush(); await receiver.close(); }
  });

  test("otel with OTEL_EXPORTER_OTLP_ENDPOINT exports OTLP/HTTP (service OTEL_SERVICE_NAME); newrelic sends api-key", async () => {
    const receiver = await startOtlpReceiver("ok");
    const saved = { e: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, s: process.env.OTEL_SERVICE_NAME };
    try {
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url; process.env.OTEL_SERVICE_NAME = "api-test-service";
      configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["otel"]; });
      await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ sentiment: "positive" }]) });
      await Instrumentation.flush();
      const otel = receiver.received.filter((r) => r.path === "/v1/traces");
      expect(otel.length).toBeGreaterThan(0);
      expect(otel[0]!.serviceName).toBe("api-test-service");
      expect(otel.flatMap((r) => r.spans).some((sp) => Object.keys(sp.attributes).some((k) => k.startsWith("gen_ai.")))).toBe(true);
      resetConfiguration(); await Instrumentation.flush();
      receiver.received.length = 0;
      delete process.env.NEW_RELIC_LICENSE_KEY;
      expect(() => configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["newrelic"]; })).toThrow(ConfigurationError);
      resetConfiguration();
      process.env.NEW_RELIC_LICENSE_KEY = "nr-license-secret"; process.env.NEW_RELIC_OTLP_ENDPOINT = receiver.url;
      configure((c) => { c.instrumentation.enabled = true; c.instrumentation.subscribers = ["newrelic"]; });
      await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ sentiment: "positive" }]) });
      await Instrumentation.flush();
      expect(receiver.received.length).toBeGreaterThan(0);
      expect(receiver.received[0]!.headers["api-key"]).toBe("nr-license-secret");
    } finally {
      if (saved.e === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT; else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved.e;
      if (saved.s === undefined) delete process.env.OTEL_SERVICE_NAME; else process.env.OTEL_SERVICE_NAME = saved.s;
      resetConfiguration(); await Instrumentation.flush(); await receiver.close();
    }
  });

  test("Evaluation and optimizers emit evaluation.* with the same ids scheme", async () => {
    const events: TypelmEvent[] = [];
    const off = Instrumentation.subscribe(/^evaluation\./, (e) => { events.push(e); });
    const m = new Predict(Classify);
    m.configure((c) => { c.lm = new ScriptedLM(() => ({ sentiment: "positive" })); });
    try {
      await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: [new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive" }, id: "a" })] });
    } finally { off(); }
    expect(events.map((e) => e.name)).toEqual(["evaluation.start", "evaluation.example", "evaluation.end"]);
    expect(new Set(events.map((e) => e.payload.traceId)).size).toBe(1);
  });
});

describe("display helpers (outside a notebook each returns its bundle)", () => {
  const isBundle = (b: any) => {
    expect(typeof b["text/html"]).toBe("string");
    expect(typeof b["text/plain"]).toBe("string");
  };
  const isChart = (b: any) => {
    isBundle(b);
    expect(b["application/vnd.vegalite.v5+json"]).toBeDefined();
    const png = Buffer.from(b["image/png"], "base64");
    expect(png.subarray(1, 4).toString("ascii")).toBe("PNG");
  };

  test("prediction, trace and examples: HTML-escaped model text", async () => {
    const p = await new Predict(Question).call({ question: "q" }, { lm: new ScriptedLM([{ answer: "<script>alert(1)</script>" }]) });
    const b = display.prediction(p)!;
    isBundle(b);
    expect(b["text/html"]).not.toContain("<script>alert(1)</script>");
    expect(b["text/html"]).toContain("&lt;script&gt;");
    const agent = await new ReAct(Question, { tools: [new CalculatorTool()] }).call({ question: "q" }, { lm: new ScriptedLM([
      { thought: "<b>think</b>", action: "calculator", toolInput: { expression: "2*3" } },
      { thought: "t", action: "finish", toolInput: {} }, { answer: "6" },
    ]) });
    const tb = display.trace(agent)!;
    isBundle(tb);
    expect(tb["text/html"]).toContain("calculator");
    expect(tb["text/html"]).not.toContain("<b>think</b>");
    const S = Signature.define({ name: "S", description: "s", input: { q: z.string() }, output: { n: z.number() } });
    const coded = await new CodeAct(S).call({ q: "q" }, { lm: new ScriptedLM([
      { thought: "t", code: "console.log('<u>' + (2 + 3))", finished: true }, { n: 5, solution: "five" },
    ]) });
    const cb = display.trace(coded)!;
    isBundle(cb);
    expect(cb["text/html"]).toContain("&lt;u&gt;5");
    expect(cb["text/html"]).not.toContain("<u>");
    const eb = display.examples([new FewShotExample({ input: { question: "<i>q</i>" }, output: { answer: "a" }, id: "x1" })])!;
    isBundle(eb);
    expect(eb["text/html"]).toContain("x1");
    expect(eb["text/html"]).not.toContain("<i>q</i>");
  });

  test("metrics (one report or several), confusion, candidates and runs: charts as vega-lite and PNG", async () => {
    const m = new Predict(Classify);
    m.configure((c) => { c.lm = new ScriptedLM((req) => ({ sentiment: String(req.inputs!.sentence) === "a" ? "positive" : "negative" })); });
    const data = [new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive" }, id: "a" }),
      new FewShotExample({ input: { sentence: "b" }, output: { sentiment: "positive" }, id: "b" })];
    const report = await new Evaluation({ progress: false, record: false, name: "r1" }).evaluate({ moduleInstance: m, testExamples: data, metrics: ["accuracy", "f1_score"] });
    isChart(await display.metrics(report));
    isChart(await display.metrics([report, report]));
    const cb = (await display.confusion(report, "sentiment"))!;
    isChart(cb);
    expect(cb["text/plain"]).toContain("positive");
    const run = {
      id: "run-x", kind: "optimization" as const, name: "MIPROv2", status: "completed" as const, startedAt: new Date().toISOString(), endedAt: null,
      score: 1, config: {}, summary: {}, error: null, bestTrial: 1,
      trials: [0, 1].map((i) => ({ index: i, kind: i === 0 ? "baseline" : "full", parents: [], choices: {}, instructions: { self: `instr ${i}` }, demoIds: { self: [] },
        score: i * 0.5, exampleScores: null, budgetSpent: i, lmCalls: 1, inputTokens: 1, outputTokens: 1, cost: 0, durationMs: 1, error: null, data: {} })),
    };
    isBundle(await display.candidates(run as any));
    const dir = mkdtempSync(join(tmpdir(), "typelm-api-runs-"));
    try {
      const lab = LabStore.open({ path: join(dir, "lab.sqlite") });
      configure((c) => { c.lab = { path: join(dir, "lab.sqlite") }; });
      await new Evaluation({ progress: false, name: "shown-in-runs" }).evaluate({ moduleInstance: m, testExamples: data });
      const rb = (await display.runs(lab))!;
      isBundle(rb);
      expect(rb["text/html"]).toContain("shown-in-runs");
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});
