// Predict.stream through the real SDKs against the fake provider, in every provider × mode × data
// format (Enhanced Prompting with JSON, Enhanced Prompting with TOON, native structured output):
// a field event while the provider is still sending, the result equal to call()'s, and fail-fast
// and abort that reach the socket (the fake sees the connection closed before its reply ended).
import { beforeEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { OutputError, Predict, Signature, type StreamEvent } from "../../lib/index.js";
import { LM } from "../../lib/lm/lm.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_NAMES, type ProviderName, withFakeProvider } from "../lm/helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment of the sentence.",
  input: { sentence: z.string() },
  output: { sentiment: z.enum(["positive", "negative"]), confidence: z.number(), summary: z.string() },
});

// No punctuation a TOON line would need to quote; quoted anyway below.
const SUMMARY = Array.from({ length: 8 }, () => "the writer is delighted with the product and says so at length").join(" and ");

type Mode = "json" | "toon" | "structured";
const MODES: Mode[] = ["json", "toon", "structured"];
const CASES: [ProviderName, Mode][] = PROVIDER_NAMES.flatMap((p) => MODES.map((m): [ProviderName, Mode] => [p, m]));

/** The reply as the model writes it in each mode, by hand (the fake sends text as text, objects as structured output). */
function reply(mode: Mode, sentiment: string): string | Record<string, unknown> {
  if (mode === "structured") return { sentiment, confidence: 0.9, summary: SUMMARY };
  if (mode === "toon") return "```toon\nsentiment: " + sentiment + "\nconfidence: 0.9\nsummary: \"" + SUMMARY + "\"\n```";
  return "```json\n{\n  \"sentiment\": \"" + sentiment + "\",\n  \"confidence\": 0.9,\n  \"summary\": \"" + SUMMARY + "\"\n}\n```";
}

function lm(provider: ProviderName, mode: Mode): LM {
  return lmFor(provider, fake, mode === "structured" ? { structuredOutputs: true } : mode === "toon" ? { dataFormat: "toon" } : {});
}

describe.each(CASES)("%s, %s: Predict.stream through the SDK", (provider, mode) => {
  it("emits each field while the provider is still sending, and its result equals call()'s", async () => {
    // About 130 chunks, 10 ms apart: the reply takes over a second to send.
    fake.reply(reply(mode, "positive"), { stream: { chunkChars: 4, delayMs: 10 } });
    const s = new Predict(Classify).stream({ sentence: "I love it" }, { lm: lm(provider, mode) });
    const seen: Array<{ event: StreamEvent<any>; sent: number; ended: boolean }> = [];
    for await (const event of s) seen.push({ event, sent: fake.streams[0]!.sent, ended: fake.streams[0]!.ended });
    const result = await s.result;
    expect(fake.requests[0]!.body.stream).toBe(true);

    const fields = seen.filter((x) => x.event.type === "field");
    expect(fields.map((x) => x.event.type === "field" && [x.event.name, x.event.value])).toEqual([
      ["sentiment", "positive"], ["confidence", 0.9], ["summary", SUMMARY],
    ]);
    const sentiment = fields[0]!;
    expect(sentiment.ended).toBe(false);
    expect(sentiment.sent).toBeLessThan(fake.streams[0]!.chunks / 2);
    expect(seen.some((x) => x.event.type === "partial")).toBe(true);

    fake.reply(reply(mode, "positive"));
    const called = await new Predict(Classify).call({ sentence: "I love it" }, { lm: lm(provider, mode) });
    expect(fake.requests[1]!.body.stream).not.toBe(true);
    expect(result.toJSON()).toEqual(called.toJSON());
    expect(result.toJSON()).toEqual({ sentiment: "positive", confidence: 0.9, summary: SUMMARY });
  });

  it("fails fast on a field that cannot be converted: OutputError, and the connection closed before the reply ended", async () => {
    // 100 ms a chunk: the whole reply would take over 10 s.
    fake.reply(reply(mode, "neutral"), { stream: { chunkChars: 4, delayMs: 100 } });
    const s = new Predict(Classify).stream({ sentence: "meh" }, { lm: lm(provider, mode) });
    const error = await s.result.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OutputError);
    expect((error as Error).message).toContain("sentiment");
    await fake.whenClosedEarly(1);
    expect(fake.streams[0]!.sent).toBeLessThan(fake.streams[0]!.chunks / 4);
    expect(fake.requests).toHaveLength(1);
  });

  it("aborts on the signal: AbortError, and the connection closed before the reply ended", async () => {
    fake.reply(reply(mode, "positive"), { stream: { chunkChars: 4, delayMs: 100 } });
    const controller = new AbortController();
    const s = new Predict(Classify).stream({ sentence: "I love it" }, { lm: lm(provider, mode), signal: controller.signal });
    const error = await (async () => {
      for await (const event of s) if (event.type === "partial") controller.abort();
    })().then(() => undefined, (e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    await expect(s.result).rejects.toMatchObject({ name: "AbortError" });
    await fake.whenClosedEarly(1);
    expect(fake.streams[0]!.sent).toBeLessThan(fake.streams[0]!.chunks / 4);
    expect(fake.requests).toHaveLength(1);
  });
});
