import { afterAll, beforeEach, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { canonicalJson } from "../../lib/canonical-json.js";
import { cacheKey, cacheRequestJson, endpointId } from "../../lib/lm/cache.js";
import { LM } from "../../lib/lm/lm.js";
import { configure, resetConfiguration } from "../../lib/config.js";
import { closeStore, openStore } from "../../lib/store/db.js";
import { LMCacheTable } from "../../lib/store/lm-cache.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_NAMES, TEST_KEY, withFakeProvider } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-cache-"));
const opened: string[] = [];
/** A store file of its own for each test, so no test depends on what another wrote. */
function freshPath(): string {
  const path = join(dir, `t${opened.length}.sqlite`);
  opened.push(path);
  return path;
}

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
afterAll(async () => {
  for (const path of opened) await closeStore(path);
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => LM.resetConfiguration());

const question = (i: number) => [
  { role: "system" as const, content: "Answer briefly." },
  { role: "user" as const, content: `question ${i}` },
];
const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };

describe("response cache", () => {
  it("replays a whole evaluation from the SQLite file in a fresh LM with zero provider requests", async () => {
    const path = freshPath();
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

  it("with cache: true, writes to the lab file set by configure((c) => { c.lab = { path } })", async () => {
    const path = freshPath();
    configure((c) => { c.lab = { path }; });
    try {
      const lm = lmFor("openai", fake, { cache: true });
      fake.reply("stored in the lab file");
      await lm.chat({ messages: question(1) });
      const rows = (await openStore(path)).prepare("SELECT content FROM lm_cache").all() as { content: string }[];
      expect(rows.map((r) => r.content)).toEqual(["stored in the lab file"]);
    } finally {
      resetConfiguration();
    }
  });

  it("answers a repeated request from memory, with the original usage and zero cost", async () => {
    const lm = lmFor("openai", fake, { cache: { path: freshPath() } });
    fake.reply("once", { usage: { inputTokens: 7, outputTokens: 2 } });
    const a = await lm.chat({ messages: question(1) });
    const b = await lm.chat({ messages: question(1) });
    expect(fake.requests).toHaveLength(1);
    expect(a.estimatedCost).toBeGreaterThan(0);
    expect(b).toMatchObject({ content: "once", cached: true, estimatedCost: 0, usage: { inputTokens: 7, outputTokens: 2 } });
  });

  it("keys on model, messages, temperature, maxTokens and schema, but not on the API key", async () => {
    const path = freshPath();
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

  it("keeps apart two servers that serve a model of the same name (OpenAI-compatible and Ollama)", async () => {
    const other = await startFakeProvider();
    try {
      const path = freshPath();
      for (const provider of ["openai", "ollama"] as const) {
        fake.reply(`${provider} from server A`);
        other.reply(`${provider} from server B`);
        const a = lmFor(provider, fake, { cache: { path } });
        const b = lmFor(provider, other, { cache: { path } });
        expect((await a.chat({ messages: question(6) })).content).toBe(`${provider} from server A`);
        const fromB = await b.chat({ messages: question(6) });
        expect(fromB).toMatchObject({ content: `${provider} from server B`, cached: false });
        // Each server is still answered from the cache afterwards, each with its own reply.
        expect(await a.chat({ messages: question(6) })).toMatchObject({ content: `${provider} from server A`, cached: true });
        expect(await b.chat({ messages: question(6) })).toMatchObject({ content: `${provider} from server B`, cached: true });
      }
      expect(fake.requests).toHaveLength(2);
      expect(other.requests).toHaveLength(2);
    } finally {
      await other.close();
    }
  });

  it.each([
    ["openai", "length"],
    ["openai", "content_filter"],
    ["anthropic", "max_tokens"],
    ["anthropic", "refusal"],
    ["ollama", "length"],
  ] as const)("never caches a %s reply that stopped with %s: the next call asks again", async (provider, finishReason) => {
    const path = freshPath();
    const lm = lmFor(provider, fake, { cache: { path } });
    fake.reply("cut off mid-sent", { finishReason });
    fake.reply("a whole answer.");
    expect(await lm.chat({ messages: question(7) })).toMatchObject({ content: "cut off mid-sent", cached: false, finishReason });
    expect(await lm.chat({ messages: question(7) })).toMatchObject({ content: "a whole answer.", cached: false });
    expect(await lm.chat({ messages: question(7) })).toMatchObject({ content: "a whole answer.", cached: true });
    expect(fake.requests).toHaveLength(2);
    // Nothing of the cut-off reply reached the file either (a fresh LM reads only the file).
    const rows = new LMCacheTable(await openStore(path)).all();
    expect(rows.map((r) => r.content)).toEqual(["a whole answer."]);
  });

  it("makes one provider call for identical requests in flight at once, across LMs sharing a file", async () => {
    const path = freshPath();
    fake.delay(150);
    fake.reply("shared answer", { usage: { inputTokens: 5, outputTokens: 3 } });
    const lms = [lmFor("openai", fake, { cache: { path } }), lmFor("openai", fake, { cache: { path } })];
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => lms[i % 2]!.chat({ messages: question(8) })));
    expect(fake.requests).toHaveLength(1);
    expect(replies.map((r) => r.content)).toEqual(Array(6).fill("shared answer"));
    // One caller paid for the call; the others are reported as cached, so usage is counted once.
    expect(replies.filter((r) => !r.cached)).toHaveLength(1);
    expect(replies.filter((r) => r.cached && r.estimatedCost === 0)).toHaveLength(5);
    // Different requests in flight at once are not merged.
    fake.delay(50, { times: 2 });
    await Promise.all([lms[0]!.chat({ messages: question(9) }), lms[1]!.chat({ messages: question(10) })]);
    expect(fake.requests).toHaveLength(3);
  });

  it("fails every caller waiting on a failed call, caches nothing, and calls again next time", async () => {
    LM.configure((c) => {
      c.maxRetries = 0;
    });
    const lm = lmFor("anthropic", fake, { cache: { path: freshPath() } });
    fake.fail({ status: 400 });
    const results = await Promise.allSettled([1, 2, 3].map(() => lm.chat({ messages: question(11) })));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(fake.requests).toHaveLength(1);
    fake.reply("recovered");
    expect(await lm.chat({ messages: question(11) })).toMatchObject({ content: "recovered", cached: false });
    expect(fake.requests).toHaveLength(2);
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
    const path = freshPath();
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
    }
    expect(lm.cachePath).toBeUndefined();
  });

  it("stores each row with the request it answers, the server, and no credentials", async () => {
    const path = freshPath();
    const port = new URL(fake.url).port;
    await lmFor("openai", fake, { cache: { path } }).chat({ messages: [{ role: "user", content: "hi" }], temperature: 0 });
    await lmFor("ollama", fake, { apiKey: TEST_KEY, cache: { path } }).chat({ messages: [{ role: "user", content: "hi" }] });
    expect(fake.requests).toHaveLength(2);
    const rows = new LMCacheTable(await openStore(path)).all();
    const requests = rows.map((r) => JSON.parse(r.requestJson)).sort((x, y) => x.provider.localeCompare(y.provider));
    expect(requests).toEqual([
      {
        v: 2, provider: "ollama", endpoint: `http://127.0.0.1:${port}`, model: "llama3.2:3b",
        messages: [{ role: "user", content: "hi" }], temperature: null, maxTokens: null, responseSchema: null,
      },
      {
        v: 2, provider: "openai", endpoint: `http://127.0.0.1:${port}/v1`, model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }], temperature: 0, maxTokens: null, responseSchema: null,
      },
    ]);
    for (const row of rows) {
      expect(row.key).toBe(createHash("sha256").update(row.requestJson).digest("hex"));
      expect(JSON.stringify(row)).not.toContain(TEST_KEY);
    }
  });
});

describe("cache key", () => {
  const parts = {
    provider: "openai", endpoint: "http://127.0.0.1:8080/v1", model: "m", messages: [{ role: "user" as const, content: "hi" }],
    temperature: 0, maxTokens: undefined, responseSchema: undefined,
  };

  it("is the SHA-256 of the request's canonical JSON, which names the server", () => {
    const json = cacheRequestJson(parts);
    expect(json).toBe(
      '{"endpoint":"http://127.0.0.1:8080/v1","maxTokens":null,"messages":[{"content":"hi","role":"user"}],' +
        '"model":"m","provider":"openai","responseSchema":null,"temperature":0,"v":2}',
    );
    // sha256sum of the text above.
    expect(cacheKey(json)).toBe("fbd44f866fdafd6bcc617fe87fea52855f933f7d28a7663bb0de69cb0a3d4d01");
    expect(cacheRequestJson({ ...parts, endpoint: "http://127.0.0.1:8081/v1" })).not.toBe(json);
  });

  it("is the same for objects whose keys are in another order", () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { f: 4, e: 5 }] } })).toBe('{"a":{"c":[3,{"e":5,"f":4}],"d":2},"b":1}');
    const a = cacheRequestJson({ ...parts, responseSchema: { name: "X", schema: { type: "object", properties: {} } } });
    const b = cacheRequestJson({ ...parts, responseSchema: { schema: { properties: {}, type: "object" }, name: "X" } });
    expect(a).toBe(b);
  });

  it("identifies a server by scheme, host and path, hiding credentials a URL carries", () => {
    expect(endpointId("http://127.0.0.1:11434/")).toBe("http://127.0.0.1:11434");
    expect(endpointId("https://API.example.com/v1/")).toBe("https://api.example.com/v1");
    const withKey = endpointId("https://proxy.example.com/v1?key=SECRET1");
    expect(withKey).toMatch(/^https:\/\/proxy\.example\.com\/v1#sha256:[0-9a-f]{64}$/);
    expect(withKey).not.toContain("SECRET1");
    expect(endpointId("https://proxy.example.com/v1?key=SECRET2")).not.toBe(withKey);
    expect(endpointId("https://me:SECRET3@proxy.example.com/v1")).not.toContain("SECRET3");
  });
});
