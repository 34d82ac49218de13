import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { SpanStatusCode, context, trace } from "@opentelemetry/api";
import { StackContextManager } from "@opentelemetry/sdk-trace";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import { BaseLM, CodeAct, Instrumentation, LM, Module, Predict, ReAct, Signature, configure, resetConfiguration, tool } from "../../lib/index.js";
import type { LMResponse } from "../../lib/index.js";
import { ScriptedLM, startFakeProvider } from "../../lib/testing/index.js";

const Outline = Signature.define({ name: "Outline", input: { topic: z.string() }, output: { question: z.string() } });
const Question = Signature.define({ name: "Question", input: { question: z.string() }, output: { answer: z.string() } });

const add = tool({
  name: "add",
  description: "Adds two numbers.",
  input: { a: z.number(), b: z.number() },
  call: ({ a, b }) => a + b,
});

/** A module with a prediction of its own and a ReAct agent that calls one tool. */
class Research extends Module<{ topic: string }, { answer: string }> {
  outline = new Predict(Outline);
  agent = new ReAct(Question, { tools: [add] });
  async forward(inputs: { topic: string }) {
    const o = await this.outline.call(inputs);
    const r = await this.agent.call({ question: o.question });
    return { answer: r.answer };
  }
}

/** Replies for one Research run; `tag` makes each run's answers its own. */
function script(tag: string) {
  return [
    { question: `what is 2+40 (${tag})` },
    { thought: "Add them.", action: "add", toolInput: { a: 2, b: 40 } },
    { thought: "Done.", action: "finish", toolInput: {} },
    { answer: `42 ${tag}` },
  ];
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});
afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
  exporter.reset();
});

function switchOnOtel(): void {
  configure((c) => {
    c.instrumentation.enabled = true;
    c.instrumentation.subscribers = ["otel"];
  });
}

type Tree = [string, Tree[]];

/** The spans below `parentId` as [name, children], in start order. */
function tree(spans: ReadableSpan[], parentId: string | undefined): Tree[] {
  return spans
    .filter((s) => s.parentSpanContext?.spanId === parentId)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
    .map((s) => [s.name, tree(spans, s.spanContext().spanId)]);
}

const chat: Tree = ["chat scripted", []];
const predictStep: Tree = ["module Predict", [["predict QuestionReActStep", [chat]]]];
const EXPECTED: Tree = [
  "module Research",
  [
    ["module Predict", [["predict Outline", [chat]]]],
    [
      "module ReAct",
      [
        predictStep,
        ["execute_tool add", []],
        predictStep,
        ["module Predict", [["predict QuestionReActExtract", [chat]]]],
      ],
    ],
  ],
];

describe("otel subscriber", () => {
  it("exports the exact span tree of a module with nested predictions and a ReAct tool call", async () => {
    switchOnOtel();
    const r = await new Research().call({ topic: "sums" }, { lm: new ScriptedLM(script("a")) });
    expect(r.answer).toBe("42 a");
    const spans = exporter.getFinishedSpans();
    expect(tree(spans, undefined)).toEqual([EXPECTED]);
    expect(spans).toHaveLength(15);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it("names chat and tool spans by the GenAI conventions, with usage and model", async () => {
    switchOnOtel();
    await new Research().call({ topic: "sums" }, { lm: new ScriptedLM(script("a"), { model: "tiny-1" }) });
    const spans = exporter.getFinishedSpans();
    const chats = spans.filter((s) => s.name === "chat tiny-1");
    expect(chats).toHaveLength(4);
    for (const c of chats) {
      expect(c.kind).toBe(2); // SpanKind.CLIENT
      expect(c.attributes["gen_ai.operation.name"]).toBe("chat");
      expect(c.attributes["gen_ai.provider.name"]).toBe("scripted");
      expect(c.attributes["gen_ai.system"]).toBe("scripted");
      expect(c.attributes["gen_ai.request.model"]).toBe("tiny-1");
      expect(c.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(10);
      expect(c.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
      // Prompt text is opt-in for the generic otel subscriber.
      expect(c.attributes["gen_ai.input.messages"]).toBeUndefined();
    }
    const toolSpan = spans.find((s) => s.name === "execute_tool add")!;
    expect(toolSpan.attributes["gen_ai.operation.name"]).toBe("execute_tool");
    expect(toolSpan.attributes["gen_ai.tool.name"]).toBe("add");
    expect(toolSpan.attributes["typelm.ok"]).toBe(true);
    const predict = spans.find((s) => s.name === "predict Outline")!;
    expect(predict.attributes["typelm.signature"]).toBe("Outline");
    expect(predict.attributes["typelm.predictor"]).toBe("Predict");
  });

  it("reports the request temperature, response model and finish reason the model gives", async () => {
    switchOnOtel();
    /** A model that answers like a provider: a dated model name and a stop reason. */
    class StopLM extends BaseLM {
      readonly provider = "openai";
      readonly model = "gpt-x";
      supportsStructuredOutputs() {
        return false;
      }
      protected async complete(): Promise<LMResponse> {
        return {
          content: '{"answer":"x"}', usage: { inputTokens: 12, outputTokens: 3, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, provider: "openai", model: "gpt-x-2025-01-01",
          estimatedCost: 0.0001, cached: false, finishReason: "stop",
        };
      }
    }
    await new Predict(Question).call({ question: "q" }, { lm: new StopLM({ temperature: 0.3, maxTokens: 64 }) });
    const chatSpan = exporter.getFinishedSpans().find((s) => s.name === "chat gpt-x")!;
    expect(chatSpan.attributes).toMatchObject({
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-x",
      "gen_ai.request.temperature": 0.3,
      "gen_ai.request.max_tokens": 64,
      "gen_ai.response.model": "gpt-x-2025-01-01",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.usage.output_tokens": 3,
    });
  });

  it("records a failed call as an error status with an exception event on every enclosing span", async () => {
    switchOnOtel();
    const lm = new ScriptedLM(() => {
      throw new Error("model exploded");
    });
    await expect(new Predict(Question).call({ question: "q" }, { lm })).rejects.toThrow("model exploded");
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).toEqual(["chat scripted", "module Predict", "predict Question"]);
    for (const s of spans) {
      expect(s.status.code).toBe(SpanStatusCode.ERROR);
      expect(s.status.message).toContain("model exploded");
      const exception = s.events.find((e) => e.name === "exception");
      expect(exception?.attributes?.["exception.message"]).toContain("model exploded");
    }
  });

  it("keeps 20 concurrent module calls in 20 separate traces, none adopting another call's parent", async () => {
    switchOnOtel();
    const runs = Array.from({ length: 20 }, (_, i) => {
      const tag = `run${i}`;
      // Latency interleaves the runs so their spans are open at the same time.
      const lm = new ScriptedLM(script(tag), { model: tag, latencyMs: 1 + (i % 5) });
      return new Research().call({ topic: tag }, { lm });
    });
    const results = await Promise.all(runs);
    expect(results.map((r) => r.answer)).toEqual(Array.from({ length: 20 }, (_, i) => `42 run${i}`));
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(20 * 15);
    const roots = spans.filter((s) => s.parentSpanContext === undefined);
    expect(roots).toHaveLength(20);
    expect(new Set(roots.map((s) => s.spanContext().traceId)).size).toBe(20);
    for (const root of roots) {
      const inTrace = spans.filter((s) => s.spanContext().traceId === root.spanContext().traceId);
      const chatTree = (name: string): Tree => [name, []];
      // Each chat span in this trace names the run's own model: no span crossed into another call.
      const models = new Set(inTrace.filter((s) => s.name.startsWith("chat ")).map((s) => s.name));
      expect(models.size).toBe(1);
      const own = chatTree([...models][0]!);
      const step: Tree = ["module Predict", [["predict QuestionReActStep", [own]]]];
      expect(tree(inTrace, undefined)).toEqual([[
        "module Research",
        [
          ["module Predict", [["predict Outline", [own]]]],
          ["module ReAct", [step, ["execute_tool add", []], step, ["module Predict", [["predict QuestionReActExtract", [own]]]]]],
        ],
      ]]);
    }
  });

  it("nests a CodeAct sandbox run, and the tool call its code makes, under the agent's module span", async () => {
    switchOnOtel();
    const Sum = Signature.define({ name: "Sum", input: { n: z.number() }, output: { answer: z.number() } });
    const lm = new ScriptedLM([
      { thought: "Add with the tool.", code: "console.log(await add({ a: inputs.n, b: 1 }))", finished: true },
      { answer: 42, solution: "41 + 1" },
    ]);
    const r = await new CodeAct(Sum, { tools: [add] }).call({ n: 41 }, { lm });
    expect(r.answer).toBe(42);
    const spans = exporter.getFinishedSpans();
    const [root] = tree(spans, undefined);
    const step: Tree = ["module Predict", [["predict SumCodeActStep", [chat]]]];
    // The sandbox also runs setup code (the inputs) before the model's code: each run is a span.
    // Two sandbox runs: the inputs are set up in the guest, then the model's code runs and calls the tool.
    expect(root).toEqual(["module CodeAct", [
      step,
      ["sandbox.run", []],
      ["sandbox.run", [["execute_tool add", []]]],
      ["module Predict", [["predict SumCodeActExtract", [chat]]]],
    ]]);
    const run = spans.find((s) => s.name === "sandbox.run" && s.attributes["typelm.codeChars"] === "console.log(await add({ a: inputs.n, b: 1 }))".length);
    expect(run?.attributes["typelm.ok"]).toBe(true);
  });

  it("puts one request span per attempt under a provider LM's chat span, the failed attempt marked", async () => {
    switchOnOtel();
    const fake = await startFakeProvider();
    try {
      LM.configure((c) => { c.retryDelay = 0.01; });
      const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-test-attempts-1234", baseURL: fake.openaiBaseURL });
      fake.fail({ status: 500, times: 1, retryAfterMs: 0 }).reply({ answer: "ok" });
      await new Predict(Question).call({ question: "q" }, { lm });
    } finally {
      LM.resetConfiguration();
      await fake.close();
    }
    const spans = exporter.getFinishedSpans();
    const chatSpan = spans.find((s) => s.name === "chat gpt-4o-mini")!;
    const attempts = spans
      .filter((s) => s.parentSpanContext?.spanId === chatSpan.spanContext().spanId)
      .sort((a, b) => Number(a.attributes["typelm.attempt"]) - Number(b.attributes["typelm.attempt"]));
    expect(attempts.map((s) => [s.name, s.attributes["typelm.attempt"], s.attributes["http.response.status_code"], s.status.code])).toEqual([
      ["request gpt-4o-mini", 1, 500, SpanStatusCode.ERROR],
      ["request gpt-4o-mini", 2, 200, SpanStatusCode.UNSET],
    ]);
    expect(chatSpan.status.code).toBe(SpanStatusCode.UNSET);
    expect(chatSpan.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
  });

  it("gives every event the ids of the span it belongs to, matching the exported tree's shape", async () => {
    const events: { name: string; payload: Record<string, unknown> }[] = [];
    Instrumentation.subscribe(/.*/, (e) => events.push(e));
    await new Research().call({ topic: "sums" }, { lm: new ScriptedLM(script("a")) });
    const starts = events.filter((e) => e.name.endsWith(".start"));
    const byId = new Map(starts.map((e) => [e.payload.spanId as string, e]));
    const parentOf = (name: string) => byId.get(starts.find((e) => e.name === name)!.payload.parentSpanId as string)?.name;
    expect(starts[0]!.name).toBe("module.forward.start");
    expect(starts[0]!.payload.parentSpanId).toBeNull();
    expect(parentOf("prediction.start")).toBe("module.forward.start");
    expect(parentOf("lm.chat.start")).toBe("prediction.start");
    expect(parentOf("tool.call.start")).toBe("module.forward.start");
    expect(new Set(events.map((e) => e.payload.traceId)).size).toBe(1);
    // Start and end of one span share its id; the tool's end event is `tool.call`.
    const toolStart = events.find((e) => e.name === "tool.call.start")!;
    const toolEnd = events.find((e) => e.name === "tool.call")!;
    expect(toolEnd.payload.spanId).toBe(toolStart.payload.spanId);
  });

  it("nests typelm's root span under the application's active span", async () => {
    switchOnOtel();
    const manager = new StackContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const appSpan = provider.getTracer("app").startSpan("POST /answer");
      // The module's root span starts synchronously inside the app's context (as with any context manager).
      const call = context.with(trace.setSpan(context.active(), appSpan), () =>
        new Predict(Question).call({ question: "q" }, { lm: new ScriptedLM([{ answer: "a" }]) }));
      await call;
      appSpan.end();
    } finally {
      context.disable();
    }
    const spans = exporter.getFinishedSpans();
    const app = spans.find((s) => s.name === "POST /answer")!;
    expect(tree(spans, app.spanContext().spanId)).toEqual([["module Predict", [["predict Question", [chat]]]]]);
  });

  it("marks each span of the application's provider with typelm's ids, to match events and log lines", async () => {
    switchOnOtel();
    const events: { name: string; payload: Record<string, unknown> }[] = [];
    Instrumentation.subscribe("lm.chat.start", (e) => events.push(e));
    await new Predict(Question).call({ question: "q" }, { lm: new ScriptedLM([{ answer: "a" }]) });
    const chatSpan = exporter.getFinishedSpans().find((s) => s.name === "chat scripted")!;
    expect(chatSpan.attributes["typelm.span_id"]).toBe(events[0]!.payload.spanId);
    expect(chatSpan.attributes["typelm.trace_id"]).toBe(events[0]!.payload.traceId);
  });
});
