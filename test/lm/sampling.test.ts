import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { resetConfiguration } from "../../lib/config.js";
import { ValidationError } from "../../lib/errors.js";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { cacheKey, cacheRequestJson } from "../../lib/lm/cache.js";
import { LM } from "../../lib/lm/lm.js";
import { Module, type CallOptions } from "../../lib/module.js";
import { Predict } from "../../lib/predict/predict.js";
import { Prediction } from "../../lib/predict/prediction.js";
import { Signature } from "../../lib/signature/signature.js";
import { closeStore, openStore } from "../../lib/store/db.js";
import { LMCacheTable } from "../../lib/store/lm-cache.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, TEST_KEY } from "./helpers.js";

const Answer = Signature.define({
  name: "Answer",
  description: "Answer the question.",
  input: { question: z.string() },
  output: { answer: z.string() },
});

let fake: FakeProvider;
beforeAll(async () => {
  // Every request gets a complete, well-formed reply (native structured output), so each one is cacheable.
  fake = await startFakeProvider({ defaultReply: () => ({ answer: "forty-two" }) });
});
beforeEach(() => {
  fake.reset();
  LM.resetConfiguration();
});
afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
});
const dir = mkdtempSync(join(tmpdir(), "typelm-sampling-"));
const opened: string[] = [];
afterAll(async () => {
  await fake.close();
  for (const path of opened) await closeStore(path);
  rmSync(dir, { recursive: true, force: true });
});

/** An OpenAI LM (real SDK) on the fake server, native structured output, cache in memory. */
function cachedOpenAI(options: { temperature?: number } = {}): LM {
  return lmFor("openai", fake, { cache: { path: ":memory:" }, structuredOutputs: true, ...options });
}

const ask = (lm: LM, options: CallOptions = {}) => new Predict(Answer).call({ question: "What is six times seven?" }, { lm, ...options });
const cached = (p: Prediction): boolean | undefined => Prediction.meta(p)?.cached;

describe("rolloutId and the response cache (OpenAI SDK, fake server)", () => {
  it("two calls differing only in rolloutId are two provider requests", async () => {
    const lm = cachedOpenAI();
    const a = await ask(lm, { rolloutId: 1 });
    const b = await ask(lm, { rolloutId: 2 });
    expect(fake.requests).toHaveLength(2);
    expect([cached(a), cached(b)]).toEqual([false, false]);
    // The two requests the provider saw are the same: rolloutId is not a provider parameter.
    expect(fake.requests[0]!.body).toEqual(fake.requests[1]!.body);
    for (const r of fake.requests) expect(JSON.stringify(r.body)).not.toMatch(/rollout/i);
  });

  it("the same rolloutId twice is one provider request (the second is a cache hit)", async () => {
    const lm = cachedOpenAI();
    await ask(lm, { rolloutId: "r-7" });
    const again = await ask(lm, { rolloutId: "r-7" });
    expect(fake.requests).toHaveLength(1);
    expect(cached(again)).toBe(true);
  });

  it("no rolloutId twice is one provider request, and rolloutId 1 vs \"1\" vs none are three", async () => {
    const lm = cachedOpenAI();
    await ask(lm);
    expect(cached(await ask(lm))).toBe(true);
    expect(fake.requests).toHaveLength(1);
    await ask(lm, { rolloutId: 1 });
    await ask(lm, { rolloutId: "1" });
    expect(fake.requests).toHaveLength(3);
  });

  it("concurrent calls with different rolloutIds are not coalesced; with the same one they are", async () => {
    const lm = cachedOpenAI();
    fake.delay(100, { times: 2 }); // both requests are in flight together
    const different = await Promise.all([ask(lm, { rolloutId: 1 }), ask(lm, { rolloutId: 2 })]);
    expect(fake.requests).toHaveLength(2);
    expect(different.map(cached)).toEqual([false, false]);

    fake.reset();
    fake.delay(100, { times: 2 });
    const same = await Promise.all([ask(lm, { rolloutId: 3 }), ask(lm, { rolloutId: 3 })]);
    expect(fake.requests).toHaveLength(1);
    expect(same.map(cached).sort()).toEqual([false, true]);
  });

  it("without the cache, every call is a request whatever its rolloutId", async () => {
    const lm = lmFor("openai", fake, { structuredOutputs: true });
    await ask(lm, { rolloutId: 1 });
    await ask(lm, { rolloutId: 1 });
    expect(fake.requests).toHaveLength(2);
  });
});

describe("per-call temperature", () => {
  it("beats the LM's temperature in the request body; without it the LM's is sent", async () => {
    const lm = lmFor("openai", fake, { structuredOutputs: true, temperature: 0.2 });
    await ask(lm, { temperature: 1 });
    await ask(lm);
    await ask(lm, { temperature: 0 }); // 0 is a value, not "unset"
    expect(fake.requests.map((r) => r.body.temperature)).toEqual([1, 0.2, 0]);
  });

  it("is sent when the LM has none, and enters the cache key (so it is not answered by another temperature's reply)", async () => {
    const lm = cachedOpenAI();
    await ask(lm);
    await ask(lm, { temperature: 1 });
    expect(fake.requests.map((r) => r.body.temperature)).toEqual([undefined, 1]);
  });

  it("reaches Ollama as options.temperature and is still not sent to Anthropic", async () => {
    await ask(lmFor("ollama", fake, { structuredOutputs: true, temperature: 0.2 }), { temperature: 0.9, rolloutId: 4 });
    await ask(lmFor("anthropic", fake, { structuredOutputs: true, temperature: 0.2 }), { temperature: 0.9, rolloutId: 4 });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]!.body.options.temperature).toBe(0.9);
    expect(fake.requests[1]!.body.temperature).toBeUndefined();
    for (const r of fake.requests) expect(JSON.stringify(r.body)).not.toMatch(/rollout/i);
  });

  it("applies to a child predictor of a composed module, and the innermost call's option wins", async () => {
    class Outer extends Module<{ question: string }, unknown> {
      readonly plain = new Predict(Answer);
      readonly hot = new Predict(Answer);
      async forward(inputs: { question: string }) {
        await this.plain.call(inputs);
        return this.hot.call(inputs, { temperature: 0.3 });
      }
    }
    const lm = lmFor("openai", fake, { structuredOutputs: true, temperature: 0.2 });
    await new Outer().call({ question: "q" }, { lm, temperature: 0.7 });
    expect(fake.requests.map((r) => r.body.temperature)).toEqual([0.7, 0.3]);
  });
});

describe("cache key of a request without rolloutId is unchanged", () => {
  const parts = {
    provider: "openai", endpoint: "http://127.0.0.1:9/v1", model: "gpt-4o-mini",
    messages: [{ role: "user" as const, content: "hi" }], temperature: 0, maxTokens: undefined, responseSchema: undefined,
  };
  // Written out by hand; the hashes are `printf '%s' '<json>' | sha256sum`.
  const WITHOUT =
    '{"endpoint":"http://127.0.0.1:9/v1","maxTokens":null,"messages":[{"content":"hi","role":"user"}],' +
    '"model":"gpt-4o-mini","provider":"openai","responseSchema":null,"temperature":0,"v":2}';
  const WITHOUT_KEY = "d85c8479548137d5a1a114780352e7009c9e36ff49ceeaa4dc0d830b1fb9dadd";
  const WITH_3 =
    '{"endpoint":"http://127.0.0.1:9/v1","maxTokens":null,"messages":[{"content":"hi","role":"user"}],' +
    '"model":"gpt-4o-mini","provider":"openai","responseSchema":null,"rolloutId":3,"temperature":0,"v":2}';
  const WITH_3_KEY = "502ea9be04325d502bb21332b60c702ebf6b26d44283b2cad2f5247643c57a37";

  it("is the same text and hash as before the option existed (rolloutId absent or undefined)", () => {
    expect(cacheRequestJson(parts)).toBe(WITHOUT);
    expect(cacheRequestJson({ ...parts, rolloutId: undefined })).toBe(WITHOUT);
    expect(cacheKey(cacheRequestJson(parts))).toBe(WITHOUT_KEY);
    expect(cacheRequestJson({ ...parts, rolloutId: 3 })).toBe(WITH_3);
    expect(cacheKey(WITH_3)).toBe(WITH_3_KEY);
  });

  it("a cache file written before the option existed still answers a request without rolloutId", async () => {
    const path = join(dir, "old.sqlite");
    opened.push(path);
    const table = new LMCacheTable(await openStore(path));
    const row = (key: string, requestJson: string, content: string) => ({
      key, provider: "openai", model: "gpt-4o-mini", requestJson, content, inputTokens: 3, outputTokens: 2,
      finishReason: "stop", createdAt: "2025-01-01T00:00:00.000Z",
    });
    table.put(row(WITHOUT_KEY, WITHOUT, "old reply"));
    table.put(row(WITH_3_KEY, WITH_3, "rollout 3 reply"));
    // Nothing listens on port 9: a cache miss would be a failed connection.
    LM.configure((c) => { c.maxRetries = 0; c.httpTimeout = 2; });
    const lm = new LM("openai/gpt-4o-mini", { apiKey: TEST_KEY, baseURL: "http://127.0.0.1:9/v1", cache: { path } });
    const messages = [{ role: "user" as const, content: "hi" }];
    expect(await lm.chat({ messages, temperature: 0 })).toMatchObject({ cached: true, content: "old reply" });
    expect(await lm.chat({ messages, temperature: 0, rolloutId: 3 })).toMatchObject({ cached: true, content: "rollout 3 reply" });
    await expect(lm.chat({ messages, temperature: 0, rolloutId: "3" })).rejects.toThrow(/127\.0\.0\.1:9/);
  });

  it("a Predict call without rolloutId stores request JSON with no rolloutId key; with one, the key holds it", async () => {
    const path = join(dir, "rows.sqlite");
    opened.push(path);
    const lm = lmFor("openai", fake, { cache: { path }, structuredOutputs: true });
    await ask(lm);
    await ask(lm, { rolloutId: "p-1" });
    const rows = new LMCacheTable(await openStore(path)).all().map((r) => JSON.parse(r.requestJson) as Record<string, unknown>);
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => Object.keys(r).sort())).toEqual(expect.arrayContaining([
      ["endpoint", "maxTokens", "messages", "model", "provider", "responseSchema", "temperature", "v"],
      ["endpoint", "maxTokens", "messages", "model", "provider", "responseSchema", "rolloutId", "temperature", "v"],
    ]));
    expect(rows.find((r) => "rolloutId" in r)!["rolloutId"]).toBe("p-1");
  });
});

describe("bad sampling options", () => {
  it.each<[string, CallOptions, string]>([
    ["negative temperature", { temperature: -0.1 }, "temperature"],
    ["NaN temperature", { temperature: Number.NaN }, "temperature"],
    ["infinite temperature", { temperature: Number.POSITIVE_INFINITY }, "temperature"],
    ["string temperature", { temperature: "1" as unknown as number }, "temperature"],
    ["object rolloutId", { rolloutId: {} as unknown as string }, "rolloutId"],
    ["NaN rolloutId", { rolloutId: Number.NaN }, "rolloutId"],
    ["boolean rolloutId", { rolloutId: true as unknown as string }, "rolloutId"],
    ["null rolloutId", { rolloutId: null as unknown as string }, "rolloutId"],
  ])("%s is a ValidationError before any provider request", async (_name, options, field) => {
    const error = await ask(cachedOpenAI(), options).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect((error as Error).message).toContain(field);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("lm.chat.start event", () => {
  it("reports the call's temperature, and rolloutId only when given", async () => {
    const starts: TypelmEvent[] = [];
    const off = Instrumentation.subscribe("lm.chat.start", (e) => starts.push(e));
    const lm = lmFor("openai", fake, { structuredOutputs: true, temperature: 0.2 });
    await ask(lm, { temperature: 1, rolloutId: 5 });
    await ask(lm);
    off();
    expect(starts.map((e) => [e.payload["temperature"], e.payload["rolloutId"], "rolloutId" in e.payload])).toEqual([
      [1, 5, true],
      [0.2, undefined, false],
    ]);
  });
});
