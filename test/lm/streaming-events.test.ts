// What a streamed call reports besides its text: time to first token on lm.request.end and
// lm.chat.end, in the calls an evaluation records (and their stored form), on the OpenTelemetry chat
// span; the timeout policy and an abort before the first byte; ScriptedLM and SimulatedLM streaming.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import * as otelApi from "@opentelemetry/api";
import { trace } from "@opentelemetry/api";
import { inMemoryTracer } from "../helpers/otel.js";
import { configure, resetConfiguration } from "../../lib/config.js";
import { LMError } from "../../lib/errors.js";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { createSpanListener } from "../../lib/instrument/otel-spans.js";
import { LM } from "../../lib/lm/lm.js";
import { emptyUsage, trackUsage, type ModelCall } from "../../lib/lm/usage-scope.js";
import { decodeCalls, encodeCalls } from "../../lib/store/stored-calls.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { ScriptedLM } from "../../lib/testing/scripted-lm.js";
import { SimulatedLM } from "../../lib/testing/simulated-lm.js";
import { lmFor, withFakeProvider } from "./helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());
afterEach(() => {
  Instrumentation.reset();
  resetConfiguration();
});

const messages = [{ role: "user" as const, content: "Say something long." }];
const reply = "A reply long enough to come in several chunks of eight characters.";

function events(name: string): TypelmEvent[] {
  const seen: TypelmEvent[] = [];
  Instrumentation.subscribe(name, (e) => seen.push(e));
  return seen;
}

describe("time to first token", () => {
  it("is on lm.request.end (from the attempt's start) and lm.chat.end (from the call's start), and not on an unstreamed call's", async () => {
    const requestEnds = events("lm.request.end");
    const chatEnds = events("lm.chat.end");
    fake.reply(reply);
    const r = await lmFor("openai", fake).chat({ messages }, { onDelta: () => {} });
    expect(requestEnds).toHaveLength(1);
    const attempt = requestEnds[0]!.payload as { firstTokenMs: number; durationMs: number };
    const chat = chatEnds[0]!.payload as { firstTokenMs: number; durationMs: number };
    expect(attempt.firstTokenMs).toBeGreaterThanOrEqual(0);
    expect(attempt.firstTokenMs).toBeLessThanOrEqual(attempt.durationMs);
    expect(chat.firstTokenMs).toBe(r.firstTokenMs);
    expect(chat.firstTokenMs).toBeGreaterThanOrEqual(attempt.firstTokenMs);
    expect(chat.firstTokenMs).toBeLessThanOrEqual(chat.durationMs);
    fake.reply(reply);
    const plain = await lmFor("openai", fake).chat({ messages });
    expect(plain.firstTokenMs).toBeUndefined();
    expect(requestEnds[1]!.payload).not.toHaveProperty("firstTokenMs");
    expect(chatEnds[1]!.payload).not.toHaveProperty("firstTokenMs");
  });

  it("is in the calls a usage scope records, and survives the lab store's compact form", async () => {
    const usage = { ...emptyUsage(), log: [] as ModelCall[] };
    fake.reply(reply, { usage: { inputTokens: 10, outputTokens: 20 } });
    const r = await trackUsage(usage, () => lmFor("anthropic", fake).chat({ messages }, { onDelta: () => {} }));
    expect(usage).toMatchObject({ calls: 1, inputTokens: 10, outputTokens: 20 });
    expect(usage.log[0]).toMatchObject({ reply, firstTokenMs: r.firstTokenMs, cached: false });
    const stored = decodeCalls(encodeCalls(usage.log, () => {}), () => undefined);
    expect(stored[0]!.firstTokenMs).toBe(r.firstTokenMs);
  });

  describe("on the OpenTelemetry chat span", () => {
    const exporter = inMemoryTracer();

    it("as gen_ai.response.time_to_first_token, in seconds", async () => {
      configure((c) => {
        c.instrumentation.enabled = true;
        c.instrumentation.subscribers = ["otel"];
      });
      fake.reply(reply);
      const r = await lmFor("ollama", fake).chat({ messages }, { onDelta: () => {} });
      const span = exporter.getFinishedSpans().find((s) => s.name === "chat llama3.2:3b");
      expect(span?.attributes["gen_ai.response.time_to_first_token"]).toBe(r.firstTokenMs! / 1000);
    });

    it("and for Langfuse as the completion's start time: the call's start plus firstTokenMs", () => {
      const listener = createSpanListener(otelApi, trace.getTracer("t"), { content: false, langfuse: true });
      const ids = { traceId: "t1", spanId: "s1", parentSpanId: null };
      listener({ name: "lm.chat.start", payload: { ...ids, provider: "openai", model: "m" }, timestamp: 0 });
      const before = Date.now();
      listener({ name: "lm.chat.end", payload: { ...ids, provider: "openai", model: "m", ok: true, durationMs: 5000, firstTokenMs: 1200 }, timestamp: 0 });
      const after = Date.now();
      const span = exporter.getFinishedSpans().find((x) => x.name === "chat m")!;
      const start = Date.parse(span.attributes["langfuse.observation.completion_start_time"] as string);
      expect(start).toBeGreaterThanOrEqual(before - 5000 + 1200);
      expect(start).toBeLessThanOrEqual(after - 5000 + 1200);
    });
  });
});

describe("the timeout policy and aborts before the first byte", () => {
  it("times out a stream that stalls after its first chunk, and does not retry it", async () => {
    // 3 s for the first chunk even on a loaded machine; the stall after it is 60 s.
    LM.configure((c) => { c.httpTimeout = 3; c.retryDelay = 0.01; });
    fake.reply(reply, { stream: { chunkChars: 8, delayMs: 60_000 } });
    const deltas: string[] = [];
    const error = await lmFor("openai", fake).chat({ messages }, { onDelta: (t) => deltas.push(t) }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as LMError).message).toContain("within httpTimeout 3s");
    expect(deltas).toEqual([reply.slice(0, 8)]);
    await fake.whenClosedEarly(1);
    expect(fake.requests).toHaveLength(1);
  });

  it.each(["openai", "anthropic", "ollama"] as const)("%s: a signal that aborts before any byte rejects with an AbortError, without retry", async (provider) => {
    const controller = new AbortController();
    // Aborted once the server has the request, before it answers a byte.
    fake.reply(() => {
      controller.abort();
      return "never seen";
    });
    const error = await lmFor(provider, fake).chat({ messages }, { signal: controller.signal, onDelta: () => {} }).then(() => undefined, (e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    expect(fake.requests).toHaveLength(1);
  });

  it("a signal already aborted sends nothing", async () => {
    const error = await lmFor("openai", fake).chat({ messages }, { signal: AbortSignal.abort(), onDelta: () => {} }).then(() => undefined, (e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("an error event inside the stream", () => {
  it.each(["openai", "anthropic"] as const)("%s: a transient one before any text is retried; the caller sees the reply once", async (provider) => {
    LM.configure((c) => { c.retryDelay = 0.01; });
    fake.failStream({ afterChunks: 0 }).reply(reply);
    const deltas: string[] = [];
    const r = await lmFor(provider, fake).chat({ messages }, { onDelta: (t) => deltas.push(t) });
    expect(fake.requests).toHaveLength(2);
    expect(deltas.join("")).toBe(reply);
    expect(r.content).toBe(reply);
  });

  it.each(["openai", "anthropic", "ollama"] as const)("%s: one after text was handed out is not retried", async (provider) => {
    LM.configure((c) => { c.retryDelay = 0.01; });
    fake.failStream({ afterChunks: 2, text: reply }).reply(reply);
    const deltas: string[] = [];
    const error = await lmFor(provider, fake).chat({ messages }, { onDelta: (t) => deltas.push(t) }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect(deltas).toEqual([reply.slice(0, 8), reply.slice(8, 16)]);
    expect(fake.requests).toHaveLength(1);
  });
});

describe("the response cache and in-flight coalescing", () => {
  it("identical calls at once, streamed and not, each get the whole reply (a streamed call does not join nor lead coalescing)", async () => {
    fake.stream({ chunkChars: 8, delayMs: 5 });
    const lm = lmFor("openai", fake, { cache: { path: ":memory:" } });
    const a: string[] = [];
    const b: string[] = [];
    const [ra, rb, rc] = await Promise.all([
      lm.chat({ messages }, { onDelta: (t) => a.push(t) }),
      lm.chat({ messages }, { onDelta: (t) => b.push(t) }),
      lm.chat({ messages }),
    ]);
    expect(fake.requests).toHaveLength(3);
    const expected = `echo: ${messages[0]!.content}`;
    expect([ra.content, rb.content, rc.content]).toEqual([expected, expected, expected]);
    expect(a.join("")).toBe(expected);
    expect(b.join("")).toBe(expected);
  });

  it("a stream its consumer stopped leaves nothing in the cache: the next call asks the provider", async () => {
    fake.reply(reply, { stream: { chunkChars: 4, delayMs: 200 } }).reply(reply);
    const lm = lmFor("anthropic", fake, { cache: { path: ":memory:" } });
    await expect(lm.chat({ messages }, { onDelta: () => { throw new Error("enough"); } })).rejects.toThrow("enough");
    const r = await lm.chat({ messages });
    expect(r).toMatchObject({ content: reply, cached: false });
    expect(fake.requests).toHaveLength(2);
  });
});

describe("test doubles stream in chunks", () => {
  it("ScriptedLM hands its reply over in chunks of the configured size", async () => {
    const lm = new ScriptedLM([reply], { stream: { chunkChars: 10 } });
    const deltas: string[] = [];
    const r = await lm.chat({ messages }, { onDelta: (t) => deltas.push(t) });
    expect(deltas).toHaveLength(Math.ceil(reply.length / 10));
    expect(deltas.every((d, i) => d === reply.slice(i * 10, i * 10 + 10))).toBe(true);
    expect(r.content).toBe(reply);
    expect(typeof r.firstTokenMs).toBe("number");
  });

  it("ScriptedLM lets the event loop turn between chunks, so an abort from outside onDelta stops the replay", async () => {
    const lm = new ScriptedLM([reply], { stream: { chunkChars: 4 } });
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await lm.chat({ messages }, {
      signal: controller.signal,
      onDelta: (t) => { deltas.push(t); if (deltas.length === 1) setImmediate(() => controller.abort()); },
    }).then(() => undefined, (e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    expect(deltas.length).toBeLessThan(Math.ceil(reply.length / 4));
  });

  it("SimulatedLM streams its answer, and stops with an AbortError when the signal aborts between chunks", async () => {
    const lm = new SimulatedLM({ stream: { chunkChars: 4, delayMs: 5 } });
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await lm.chat({ messages }, {
      signal: controller.signal,
      onDelta: (t) => { deltas.push(t); if (deltas.length === 2) controller.abort(); },
    }).then(() => undefined, (e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    expect(deltas).toHaveLength(2);
  });
});
