import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { ConfigurationError, Instrumentation, Predict, Signature, configure, resetConfiguration, type TypelmEvent } from "../../lib/index.js";
import { shutdownPipelines } from "../../lib/instrument/otel-export.js";
import { newRelicTracesUrl } from "../../lib/instrument/vendors.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { refusingUrl, startOtlpReceiver, type OtlpReceiver, type ReceivedExport } from "./otlp-receiver.js";

const Echo = Signature.define({ name: "Echo", input: { text: z.string() }, output: { text: z.string() } });

const VARIABLES = [
  "LANGFUSE_HOST", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "NEW_RELIC_OTLP_ENDPOINT", "NEW_RELIC_LICENSE_KEY",
  "NEW_RELIC_REGION", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_TIMEOUT",
];
const saved = Object.fromEntries(VARIABLES.map((v) => [v, process.env[v]]));
const receivers: OtlpReceiver[] = [];

afterEach(async () => {
  resetConfiguration();
  Instrumentation.reset();
  await shutdownPipelines();
  for (const r of receivers.splice(0)) await r.close();
  for (const v of VARIABLES) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
});

async function receiver(mode: "ok" | "fail" | "hang" = "ok"): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver(mode);
  receivers.push(r);
  return r;
}

function switchOn(name: string): void {
  configure((c) => {
    c.instrumentation.enabled = true;
    c.instrumentation.subscribers = [name];
  });
}

const predict = (text: string) => new Predict(Echo).call({ text }, { lm: new ScriptedLM([{ text: `echo ${text}` }]) });

/** Points `name` at `url` with test credentials. */
function useVendor(name: "langfuse" | "newrelic" | "otel", url: string): void {
  if (name === "langfuse") {
    process.env.LANGFUSE_HOST = url;
    process.env.LANGFUSE_PUBLIC_KEY = "pk-lf-test-1234";
    process.env.LANGFUSE_SECRET_KEY = "sk-lf-test-SECRET-5678";
  } else if (name === "newrelic") {
    process.env.NEW_RELIC_OTLP_ENDPOINT = url;
    process.env.NEW_RELIC_LICENSE_KEY = "nr-license-SECRET-abcdef";
  } else {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = url;
  }
}

/** Runs one prediction with `vendor` pointed at a fresh receiver; returns the single export it got. */
async function exportOnce(vendor: "langfuse" | "newrelic" | "otel", text: string, service?: string): Promise<ReceivedExport> {
  const r = await receiver();
  useVendor(vendor, r.url);
  if (service !== undefined) process.env.OTEL_SERVICE_NAME = service;
  switchOn(vendor);
  await predict(text);
  await Instrumentation.flush();
  expect(r.received).toHaveLength(1);
  return r.received[0]!;
}

describe("langfuse subscriber", () => {
  it("sends spans to /api/public/otel/v1/traces with Basic auth of public:secret, prompt and completion as observation input/output", async () => {
    const events: TypelmEvent[] = [];
    Instrumentation.subscribe("lm.chat.start", (e) => events.push(e));
    const got = await exportOnce("langfuse", "hello", "shop-assistant");
    expect(got.path).toBe("/api/public/otel/v1/traces");
    expect(got.headers.authorization).toBe(`Basic ${Buffer.from("pk-lf-test-1234:sk-lf-test-SECRET-5678").toString("base64")}`);
    expect(got.serviceName).toBe("shop-assistant");
    expect(got.spans.map((s) => s.name).sort()).toEqual(["chat scripted", "module Predict", "predict Echo"]);
    const chat = got.spans.find((s) => s.name === "chat scripted")!;
    expect(chat.attributes["langfuse.observation.type"]).toBe("generation");
    const input = JSON.parse(String(chat.attributes["langfuse.observation.input"])) as { role: string; content: string }[];
    expect(input.map((m) => m.role)).toEqual(["system", "user"]);
    expect(input[1]!.content).toContain("hello");
    expect(chat.attributes["langfuse.observation.output"]).toContain("echo hello");
    expect(chat.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    // Parent links survive the wire: the chat span's parent is the prediction span.
    const prediction = got.spans.find((s) => s.name === "predict Echo")!;
    expect(chat.parentSpanId).toBe(prediction.spanId);
    // Exported spans carry typelm's own ids, so a log line's trace id finds its trace.
    expect(events).toHaveLength(1);
    expect([chat.traceId, chat.spanId]).toEqual([events[0]!.payload.traceId, events[0]!.payload.spanId]);
  });

  it.each([
    ["LANGFUSE_PUBLIC_KEY"], ["LANGFUSE_SECRET_KEY"],
  ])("raises ConfigurationError at configure time when %s is missing, naming it and not the other key", (missing) => {
    useVendor("langfuse", "http://127.0.0.1:9");
    delete process.env[missing];
    let error: unknown;
    try {
      switchOn("langfuse");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain(missing);
    expect((error as Error).message).not.toContain("SECRET-5678");
    expect((error as Error).message).not.toContain("pk-lf-test-1234");
  });
});

describe("newrelic subscriber", () => {
  it("sends spans to NEW_RELIC_OTLP_ENDPOINT/v1/traces with the api-key header", async () => {
    const got = await exportOnce("newrelic", "hi");
    expect(got.path).toBe("/v1/traces");
    expect(got.headers["api-key"]).toBe("nr-license-SECRET-abcdef");
    expect(got.headers.authorization).toBeUndefined();
    expect(got.spans.map((s) => s.name).sort()).toEqual(["chat scripted", "module Predict", "predict Echo"]);
    // Prompt text is opt-in outside Langfuse.
    expect(got.body).not.toContain("echo hi");
  });

  it("defaults to New Relic's US endpoint, the EU one with NEW_RELIC_REGION=eu, and NEW_RELIC_OTLP_ENDPOINT over both", () => {
    delete process.env.NEW_RELIC_OTLP_ENDPOINT;
    expect(newRelicTracesUrl()).toBe("https://otlp.nr-data.net:4318/v1/traces");
    process.env.NEW_RELIC_REGION = "EU";
    expect(newRelicTracesUrl()).toBe("https://otlp.eu01.nr-data.net:4318/v1/traces");
    process.env.NEW_RELIC_OTLP_ENDPOINT = "https://collector.example:4318/";
    expect(newRelicTracesUrl()).toBe("https://collector.example:4318/v1/traces");
    process.env.NEW_RELIC_OTLP_ENDPOINT = "https://collector.example/v1/traces";
    expect(newRelicTracesUrl()).toBe("https://collector.example/v1/traces");
  });

  it("raises ConfigurationError at configure time without NEW_RELIC_LICENSE_KEY", () => {
    delete process.env.NEW_RELIC_LICENSE_KEY;
    expect(() => switchOn("newrelic")).toThrow(ConfigurationError);
    expect(() => switchOn("newrelic")).toThrow(/NEW_RELIC_LICENSE_KEY/);
  });
});

describe("otel subscriber without an application tracer provider", () => {
  it("exports OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT with service name OTEL_SERVICE_NAME", async () => {
    const got = await exportOnce("otel", "x", "billing");
    expect(got.path).toBe("/v1/traces");
    expect(got.serviceName).toBe("billing");
    expect(got.spans).toHaveLength(3);
  });
});

/** Latency of `n` sequential predictions, in milliseconds each. */
async function latencies(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await predict(`q${i}`);
    out.push(performance.now() - started);
  }
  return out;
}

/**
 * The documented bound (README, "Never in the way"): a call never waits on the collector. Checked as a
 * median under 20 ms (the work is in memory; a scripted call takes well under 1 ms) and a worst call
 * under 250 ms, below the 300 ms export timeout, so a call that waited for the hanging export fails.
 */
const MEDIAN_BOUND_MS = 20;
const WORST_BOUND_MS = 250;

describe.each(["langfuse", "newrelic", "otel"] as const)("%s with a collector that misbehaves", (vendor) => {
  it.each(["hang", "fail", "refuse"] as const)("collector that %ss: calls stay within the bound, nothing throws, flush is bounded", async (mode) => {
    process.env.OTEL_EXPORTER_OTLP_TIMEOUT = "300";
    const collector = mode === "refuse" ? undefined : await receiver(mode === "hang" ? "hang" : "fail");
    const url = collector?.url ?? (await refusingUrl());
    useVendor(vendor, url);
    switchOn(vendor);
    await latencies(3);
    // An export is now under way (and hanging, failing or refused) while the next calls run.
    const flushing = Instrumentation.flush();
    const during = await latencies(20);
    const started = performance.now();
    await expect(flushing).resolves.toBeUndefined();
    await expect(Instrumentation.flush()).resolves.toBeUndefined();
    const flushMs = performance.now() - started;
    const sorted = [...during].sort((x, y) => x - y);
    expect(sorted[10]).toBeLessThan(MEDIAN_BOUND_MS);
    expect(sorted.at(-1)).toBeLessThan(WORST_BOUND_MS);
    // Flush waits at most the export timeout (300 ms here) plus a 500 ms margin, for each of the two flushes.
    expect(flushMs).toBeLessThan(2 * (300 + 500) + 200);
    expect(Instrumentation.listenerFailures()).toEqual([]);
    // The collector was really reached (and answered badly or not at all).
    if (collector) expect(collector.received.length).toBeGreaterThanOrEqual(1);
  });
});

describe("flush on exit", () => {
  it("sends the queued spans when the process is about to exit normally, with no flush() call", async () => {
    const r = await receiver();
    useVendor("newrelic", r.url);
    switchOn("newrelic");
    await predict("bye");
    const queuedAt = performance.now();
    // Batches leave every second on their own; well before that, only the exit hook can have sent them.
    expect(r.received).toHaveLength(0);
    process.emit("beforeExit", 0);
    while (r.received.length === 0 && performance.now() - queuedAt < 800) await new Promise((done) => setTimeout(done, 10));
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.spans.map((s) => s.name).sort()).toEqual(["chat scripted", "module Predict", "predict Echo"]);
  });
});
