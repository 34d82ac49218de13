import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { cacheKey, cacheRequestJson, canonicalJson } from "../../lib/lm/cache.js";
import { LM } from "../../lib/lm/lm.js";
import { configure, resetConfiguration } from "../../lib/config.js";
import { closeStore, openStore } from "../../lib/store/db.js";
import { LMCacheTable } from "../../lib/store/lm-cache.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_NAMES, TEST_KEY } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-cache-"));
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
  for (const name of ["eval.sqlite", "one.sqlite", "params.sqlite"]) await closeStore(join(dir, name));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  fake.reset();
  LM.resetConfiguration();
});

const question = (i: number) => [
  { role: "system" as const, content: "Answer briefly." },
  { role: "user" as const, content: `question ${i}` },
];
const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };

describe("response cache", () => {
  it("replays a whole evaluation from the SQLite file in a fresh LM with zero provider requests", async () => {
    const path = join(dir, "eval.sqlite");
    const N = 20;
    const first = new Map<string, string>();
    for (const provider of PROVIDER_NAMES) {
      const lm = lmFor(provider, fake, { cache: { path } });
      for (let i = 0; i < N; i++) {
        const structured = i % 2 === 0;
        fake.reply(structured ? { answer: `${provider} ${i}` } : `${provider} plain ${i}`);
        const r = await lm.chat({ messages: question(i), responseSchema: structured ? { name: "Answer", schema } : undefined });
        expect(r.cached).toBe(false);
        first.set(`${provider}/${i}`, r.content);
      }
    }
    expect(fake.requests).toHaveLength(3 * N);
    fake.reset();

    const tokens: TypelmEvent[] = [];
    const off = Instrumentation.subscribe("lm.tokens.used", (e) => tokens.push(e));
    for (const provider of PROVIDER_NAMES) {
      const fresh = lmFor(provider, fake, { cache: { path } });
      for (let i = 0; i < N; i++) {
        const structured = i % 2 === 0;
        const r = await fresh.chat({ messages: question(i), responseSchema: structured ? { name: "Answer", schema } : undefined });
        expect(r).toMatchObject({ cached: true, estimatedCost: 0, content: first.get(`${provider}/${i}`) });
      }
    }
    off();
    expect(fake.requests).toHaveLength(0);
    expect(tokens).toHaveLength(3 * N);
    expect(tokens.every((e) => e.payload["cached"] === true && e.payload["estimatedCost"] === 0)).toBe(true);
  });

  it("answers a repeated request from memory, with the original usage and zero cost", async () => {
    const lm = lmFor("openai", fake, { cache: { path: join(dir, "one.sqlite") } });
    fake.reply("once", { usage: { inputTokens: 7, outputTokens: 2 } });
    const a = await lm.chat({ messages: question(1) });
    const b = await lm.chat({ messages: question(1) });
    expect(fake.requests).toHaveLength(1);
    expect(a.estimatedCost).toBeGreaterThan(0);
    expect(b).toMatchObject({ content: "once", cached: true, estimatedCost: 0, usage: { inputTokens: 7, outputTokens: 2 } });
  });

  it("keys on model, messages, temperature, maxTokens and schema, but not on the API key", async () => {
    const path = join(dir, "params.sqlite");
    const base = lmFor("openai", fake, { cache: { path } });
    await base.chat({ messages: question(2) });
    await base.chat({ messages: question(2), temperature: 0.5 });
    await base.chat({ messages: question(2), maxTokens: 10 });
    await base.chat({ messages: question(2), responseSchema: { name: "Answer", schema } });
    await base.chat({ messages: question(3) });
    await new LM("openai/gpt-4o", { apiKey: TEST_KEY, baseURL: fake.openaiBaseURL, cache: { path } }).chat({ messages: question(2) });
    expect(fake.requests).toHaveLength(6);
    const otherKey = new LM("openai/gpt-4o-mini", { apiKey: "sk-other-KEY-000000", baseURL: fake.openaiBaseURL, cache: { path } });
    expect((await otherKey.chat({ messages: question(2) })).cached).toBe(true);
    expect(fake.requests).toHaveLength(6);
  });

  it("does nothing unless asked for", async () => {
    const lm = lmFor("ollama", fake);
    await lm.chat({ messages: question(4) });
    await lm.chat({ messages: question(4) });
    expect(fake.requests).toHaveLength(2);
    expect(lm.cachePath).toBeUndefined();
    expect(lmFor("ollama", fake, { cache: true }).cachePath).toBe(".typelm/lab.sqlite");
  });

  it("uses the global configure((c) => c.cache = ...) for an LM without its own cache option", async () => {
    const path = join(dir, "global.sqlite");
    const lm = lmFor("ollama", fake);
    try {
      configure((c) => { c.cache = { path }; });
      fake.reply("first");
      expect((await lm.chat({ messages: question(5) })).cached).toBe(false);
      expect((await lm.chat({ messages: question(5) })).cached).toBe(true);
      expect(fake.requests).toHaveLength(1);
      expect(lm.cachePath).toBe(path);
      expect(lmFor("ollama", fake, { cache: false }).cachePath).toBeUndefined();
    } finally {
      resetConfiguration();
      await closeStore(path);
    }
    expect(lm.cachePath).toBeUndefined();
  });

  it("stores the rows with the request they answer and no credentials", async () => {
    const rows = new LMCacheTable(await openStore(join(dir, "params.sqlite"))).all();
    expect(rows.length).toBeGreaterThanOrEqual(6);
    for (const row of rows) {
      expect(row.key).toBe(cacheKey(row.requestJson));
      expect(JSON.parse(row.requestJson)).toMatchObject({ provider: "openai", v: 1 });
      expect(JSON.stringify(row)).not.toContain(TEST_KEY);
    }
  });
});

describe("cache key", () => {
  it("is the same for objects whose keys are in another order", () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { f: 4, e: 5 }] } })).toBe('{"a":{"c":[3,{"e":5,"f":4}],"d":2},"b":1}');
    const parts = { provider: "openai", model: "m", messages: question(1), temperature: undefined, maxTokens: undefined };
    const a = cacheRequestJson({ ...parts, responseSchema: { name: "X", schema: { type: "object", properties: {} } } });
    const b = cacheRequestJson({ ...parts, responseSchema: { schema: { properties: {}, type: "object" }, name: "X" } });
    expect(cacheKey(a)).toBe(cacheKey(b));
    expect(cacheKey(a)).toMatch(/^[0-9a-f]{64}$/);
  });
});
