import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Evaluation, Instrumentation, Predict, SimpleOptimizer, configure, resetConfiguration, type TypelmEvent } from "../../lib/index.js";
import { makeExamples, taskModel, Topic } from "../optimize/task.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let dir: string;

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  dir = mkdtempSync(path.join(tmpdir(), "typelm-lab-events-"));
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
  exporter.reset();
});

function capture(): TypelmEvent[] {
  const events: TypelmEvent[] = [];
  Instrumentation.subscribe(/.*/, (e) => events.push(e));
  return events;
}

const ids = (e: TypelmEvent) => e.payload as { traceId: string; spanId: string; parentSpanId: string | null };

describe("evaluation and optimizer events join the trace scheme", () => {
  it("an evaluation is one span: its events share its id and every example's module call nests under it", async () => {
    configure((c) => {
      c.instrumentation.enabled = true;
      c.instrumentation.subscribers = ["otel"];
    });
    const events = capture();
    const program = new Predict(Topic).configure((c) => { c.lm = taskModel({ latencyMs: 1 }); });
    await new Evaluation({ concurrency: 3, record: false, progress: false, name: "topics" })
      .evaluate({ moduleInstance: program, testExamples: makeExamples(6, 5, "ev") });

    const own = events.filter((e) => e.name.startsWith("evaluation."));
    expect(own.map((e) => e.name)).toEqual(["evaluation.start", ...Array(6).fill("evaluation.example"), "evaluation.end"]);
    const evalSpan = ids(own[0]!).spanId;
    for (const e of own) expect(ids(e)).toMatchObject({ traceId: ids(own[0]!).traceId, spanId: evalSpan, parentSpanId: null });
    const modules = events.filter((e) => e.name === "module.forward.start");
    expect(modules).toHaveLength(6);
    for (const m of modules) expect(ids(m).parentSpanId).toBe(evalSpan);
    expect(new Set(events.map((e) => ids(e).traceId)).size).toBe(1);

    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === "evaluation topics")!;
    expect(root.parentSpanContext).toBeUndefined();
    const children = spans.filter((s) => s.parentSpanContext?.spanId === root.spanContext().spanId);
    expect(children.map((s) => s.name)).toEqual(Array(6).fill("module Predict"));
    expect(root.events.filter((e) => e.name === "evaluation.example")).toHaveLength(6);
  });

  it("an optimizer run is one span: optimizer.* events carry its id and its trials' calls share its trace", async () => {
    configure((c) => {
      c.lab = { path: path.join(dir, "lab.sqlite") };
    });
    const events = capture();
    const program = new Predict(Topic).configure((c) => { c.lm = taskModel(); });
    await new SimpleOptimizer({ numTrials: 2, kDemos: 1, seed: 1 })
      .compile({ moduleInstance: program, trainingExamples: makeExamples(8, 1, "tr"), validationExamples: makeExamples(4, 2, "va") });

    const own = events.filter((e) => e.name.startsWith("optimizer."));
    expect(own[0]!.name).toBe("optimizer.start");
    expect(own.at(-1)!.name).toBe("optimizer.end");
    expect(own.some((e) => e.name === "optimizer.trial")).toBe(true);
    const runSpan = ids(own[0]!).spanId;
    for (const e of own) expect(ids(e).spanId).toBe(runSpan);
    expect(ids(own[0]!).parentSpanId).toBeNull();
    const calls = events.filter((e) => e.name === "module.forward.start");
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => ids(e).traceId))).toEqual(new Set([ids(own[0]!).traceId]));
  });
});
