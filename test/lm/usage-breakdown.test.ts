// Cached, cache-write and reasoning tokens read through the real SDKs from the fake provider's
// replies, streamed and not, in every provider's wire format, and priced each at its own rate.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { LM } from "../../lib/lm/lm.js";
import { emptyUsage, trackUsage } from "../../lib/lm/usage-scope.js";
import { decodeCalls, encodeCalls } from "../../lib/store/stored-calls.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_NAMES, withFakeProvider } from "./helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

const messages = [
  { role: "system" as const, content: "You answer briefly." },
  { role: "user" as const, content: "What is 2 + 2?" },
];
/** Scripted: 1000 prompt tokens (600 read from the cache, 100 written to it), 200 output tokens (50 of them reasoning). */
const scripted = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 600, cacheWriteTokens: 100, reasoningTokens: 50 };

/**
 * What each wire format can say, and the cost worked out by hand from the price lists
 * (USD per million tokens): gpt-4o-mini input 0.15, cached input 0.075, output 0.6;
 * claude-3-5-haiku input 0.8, cache read 0.08, cache write 1.00, output 4; Ollama is free.
 */
const EXPECTED = {
  // OpenAI reports cached and reasoning tokens, no cache writes: 400 x 0.15 + 600 x 0.075 + 200 x 0.6.
  openai: { usage: { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 600, cacheWriteTokens: 0, reasoningTokens: 50 }, cost: (60 + 45 + 120) / 1e6 },
  // Anthropic reports cache reads and writes; thinking is part of the output: 300 x 0.8 + 600 x 0.08 + 100 x 1 + 200 x 4.
  anthropic: { usage: { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 600, cacheWriteTokens: 100, reasoningTokens: 0 }, cost: (240 + 48 + 100 + 800) / 1e6 },
  ollama: { usage: { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }, cost: 0 },
} as const;

describe.each(PROVIDER_NAMES)("%s usage breakdown", (provider) => {
  it.each([false, true])("streamed %s: usage fields and the cost at each rate", async (streamed) => {
    fake.reply("4", { usage: scripted });
    const lm = lmFor(provider, fake);
    const pieces: string[] = [];
    const response = await lm.chat({ messages }, streamed ? { onDelta: (p) => pieces.push(p) } : {});
    expect(response.content).toBe("4");
    expect(fake.requests[0]!.body.stream === true).toBe(streamed);
    expect(response.usage).toEqual(EXPECTED[provider].usage);
    expect(response.estimatedCost).toBeCloseTo(EXPECTED[provider].cost, 12);
  });
});

describe("carried on", () => {
  afterEach(() => Instrumentation.reset());

  it("lm.tokens.used, a usage scope's totals and log, and the stored calls' compact form keep the breakdown", async () => {
    const seen: TypelmEvent[] = [];
    Instrumentation.subscribe("lm.tokens.used", (e) => seen.push(e));
    fake.reply("4", { usage: scripted });
    const usage = emptyUsage();
    usage.log = [];
    await trackUsage(usage, () => lmFor("anthropic", fake).chat({ messages }));
    expect(seen.map((e) => [e.payload.reasoningTokens, e.payload.cacheReadTokens, e.payload.cacheWriteTokens])).toEqual([[0, 600, 100]]);
    expect([usage.inputTokens, usage.cacheReadTokens, usage.cacheWriteTokens, usage.reasoningTokens]).toEqual([1000, 600, 100, 0]);
    // Saved: 600 cache-read tokens at 0.8 instead of 0.08 USD per million.
    expect(usage.cacheSavings).toBeCloseTo((600 * (0.8 - 0.08)) / 1e6, 12);
    expect(usage.log[0]).toMatchObject({ inputTokens: 1000, cacheReadTokens: 600, cacheWriteTokens: 100 });
    expect(usage.log[0]!.reasoningTokens).toBeUndefined();
    const json = encodeCalls(usage.log, () => undefined);
    expect(JSON.parse(json)[0]).toMatchObject({ h: 600, w: 100 });
    expect(decodeCalls(json, () => undefined)[0]).toMatchObject({ cacheReadTokens: 600, cacheWriteTokens: 100 });
  });
});
