// Streamed calls through the real SDKs against the fake provider, in every provider × mode
// (Enhanced Prompting: plain reply text; native structured output: json_schema, forced tool use,
// Ollama `format`): deltas, usage and cost, time to first token, aborts that reach the socket,
// retries before the first byte only, and cached replies replayed as streams.
import { beforeEach, describe, expect, it } from "@jest/globals";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { LMError } from "../../lib/errors.js";
import { LM } from "../../lib/lm/lm.js";
import type { LMRequest } from "../../lib/lm/types.js";
import { trackUsage, emptyUsage, type ModelCall } from "../../lib/lm/usage-scope.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_NAMES, type ProviderName, withFakeProvider } from "./helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => {
  LM.resetConfiguration();
  // Retries wait 7.5-10 ms, not seconds.
  LM.configure((c) => { c.retryDelay = 0.01; });
});

const messages = [
  { role: "system" as const, content: "You classify sentiment." },
  { role: "user" as const, content: "I love it" },
];
const schema = {
  type: "object",
  properties: { sentiment: { type: "string", enum: ["positive", "negative"] }, note: { type: "string" } },
  required: ["sentiment", "note"],
  additionalProperties: false,
};
const answer = { sentiment: "positive", note: "the speaker says they love it, with no reservation at all" };
const prose = "The sentiment is positive: the speaker says they love it, with no reservation at all.";

/** USD per million tokens, input and output, from the providers' price lists (Ollama is local: free). */
const PRICE: Record<ProviderName, [number, number]> = { openai: [0.15, 0.6], anthropic: [0.8, 4], ollama: [0, 0] };

type Mode = "enhanced" | "structured";
const CASES: [ProviderName, Mode][] = PROVIDER_NAMES.flatMap((p) => (["enhanced", "structured"] as Mode[]).map((m): [ProviderName, Mode] => [p, m]));

function requestFor(mode: Mode): LMRequest {
  return mode === "structured" ? { messages, responseSchema: { name: "Classify", schema } } : { messages };
}
/** What the fake is told to answer, and the reply text the client must end up with. */
function scripted(mode: Mode): { value: string | Record<string, unknown>; text: string } {
  return mode === "structured" ? { value: answer, text: JSON.stringify(answer) } : { value: prose, text: prose };
}
/** A long reply, paced slowly: about 60 chunks, 200 ms apart (12 s if nobody stops it). */
function slowReply(mode: Mode): void {
  const long = mode === "structured" ? { sentiment: "positive", note: "x".repeat(240) } : "y".repeat(240);
  fake.reply(long, { stream: { chunkChars: 4, delayMs: 200 } });
}
function collect(): { deltas: string[]; onDelta: (text: string) => void } {
  const deltas: string[] = [];
  return { deltas, onDelta: (text) => deltas.push(text) };
}

describe.each(CASES)("%s, %s mode, streamed", (provider, mode) => {
  it("hands the reply over in chunks that add up to the content, with the stream's usage, cost and time to first token", async () => {
    const { value, text } = scripted(mode);
    fake.reply(value, { usage: { inputTokens: 1200, outputTokens: 300 }, stream: { chunkChars: 5 } });
    const { deltas, onDelta } = collect();
    const r = await lmFor(provider, fake).chat(requestFor(mode), { onDelta });
    const sent = fake.requests[0]!.body;
    expect(sent.stream).toBe(true);
    if (provider === "openai") expect(sent.stream_options).toEqual({ include_usage: true });
    expect(r.content).toBe(text);
    expect(deltas.join("")).toBe(text);
    expect(deltas.length).toBe(Math.ceil(text.length / 5));
    expect(r.usage).toEqual({ inputTokens: 1200, outputTokens: 300, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    const [input, output] = PRICE[provider];
    expect(r.estimatedCost).toBeCloseTo((1200 * input + 300 * output) / 1e6, 12);
    expect(r.cached).toBe(false);
    expect(r.finishReason).toBe(provider === "anthropic" ? (mode === "structured" ? "tool_use" : "end_turn") : "stop");
    expect(typeof r.firstTokenMs).toBe("number");
    expect(r.firstTokenMs!).toBeGreaterThanOrEqual(0);
    expect(fake.streams).toMatchObject([{ ended: true, closedEarly: false, sent: deltas.length }]);
  });

  it("aborts the request at once when onDelta throws, and rejects with what it threw", async () => {
    slowReply(mode);
    const thrown = new Error("the consumer gave up");
    let calls = 0;
    const chat = lmFor(provider, fake).chat(requestFor(mode), { onDelta: () => { calls++; throw thrown; } });
    await expect(chat).rejects.toBe(thrown);
    await fake.whenClosedEarly(1);
    expect(calls).toBe(1);
    expect(fake.streams[0]!.sent).toBeLessThan(fake.streams[0]!.chunks);
    expect(fake.requests).toHaveLength(1);
  });

  it("aborts the request when the signal aborts mid-stream, with an AbortError", async () => {
    slowReply(mode);
    const controller = new AbortController();
    const { deltas } = collect();
    const chat = lmFor(provider, fake).chat(requestFor(mode), { signal: controller.signal, onDelta: (t) => { deltas.push(t); controller.abort(); } });
    const error = await chat.then(() => undefined, (e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    await fake.whenClosedEarly(1);
    expect(deltas).toHaveLength(1);
    expect(fake.streams[0]!.sent).toBeLessThan(fake.streams[0]!.chunks);
    expect(fake.requests).toHaveLength(1);
  });

  it("retries a failure before the first byte, and the caller sees the reply once", async () => {
    const { value, text } = scripted(mode);
    fake.fail({ status: 500 }).reply(value);
    const { deltas, onDelta } = collect();
    const r = await lmFor(provider, fake).chat(requestFor(mode), { onDelta });
    expect(fake.requests).toHaveLength(2);
    expect(deltas.join("")).toBe(text);
    expect(r.content).toBe(text);
  });

  it("does not retry a stream cut off after its first byte", async () => {
    fake.truncateBody();
    const { deltas, onDelta } = collect();
    const error = await lmFor(provider, fake).chat(requestFor("enhanced"), { onDelta }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as LMError).message).toContain("already streamed");
    expect(deltas.length).toBeGreaterThanOrEqual(1);
    expect(fake.streams[0]!.truncated).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it("enters the cache like any reply, and a cache hit is replayed as a stream", async () => {
    const { value, text } = scripted(mode);
    fake.reply(value);
    const lm = lmFor(provider, fake, { cache: { path: ":memory:" } });
    await lm.chat(requestFor(mode), { onDelta: () => {} });
    const { deltas, onDelta } = collect();
    const hit = await lm.chat(requestFor(mode), { onDelta });
    expect(fake.requests).toHaveLength(1);
    expect(hit).toMatchObject({ content: text, cached: true, estimatedCost: 0 });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(text);
    expect(typeof hit.firstTokenMs).toBe("number");
    // Unstreamed, the same request is a hit too.
    expect(await lm.chat(requestFor(mode))).toMatchObject({ content: text, cached: true });
    expect(fake.requests).toHaveLength(1);
  });
});
