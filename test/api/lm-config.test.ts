/**
 * API.md "Language models and configuration" — through the real provider SDKs pointed at
 * startFakeProvider() (loopback), and ScriptedLM for the resolution order. Imports by package name (dist/).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  ConfigurationError, LM, LMError, Module, Predict, Signature, Strategy, StrategyInterface, configure, resetConfiguration, withLM,
} from "typelm";
import { ScriptedLM, startFakeProvider } from "typelm/testing";
import type { FakeProvider } from "typelm/testing";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative", "neutral"]) };
}

let fake: FakeProvider;
const savedEnv = { ...process.env };
beforeAll(async () => { fake = await startFakeProvider(); });
afterAll(async () => { await fake.close(); });
afterEach(() => {
  fake.reset();
  for (const k of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST"]) {
    if (savedEnv[k] === undefined) delete process.env[k]; else process.env[k] = savedEnv[k];
  }
  LM.resetConfiguration();
  resetConfiguration();
});

const call = (lm: LM) => new Predict(Classify).call({ sentence: "I love it" }, { lm });

describe("providers through their SDKs", () => {
  test("openai: apiKey and baseURL options; the id splits on the first / only", async () => {
    fake.reply({ sentiment: "positive" });
    const r = await call(new LM("openai/org/model-x", { apiKey: "sk-test-1", baseURL: fake.openaiBaseURL, temperature: 0, maxTokens: 77 }));
    expect(r.sentiment).toBe("positive");
    const req = fake.requests[0]!;
    expect(req.wire).toBe("openai");
    expect(req.body.model).toBe("org/model-x");
    expect(req.body.temperature).toBe(0);
    expect(JSON.stringify(req.body)).toContain("77");
    expect(req.headers.authorization).toBe("Bearer sk-test-1");
  });

  test("openai: key from OPENAI_API_KEY, baseURL from OPENAI_BASE_URL", async () => {
    process.env.OPENAI_API_KEY = "sk-from-env";
    process.env.OPENAI_BASE_URL = fake.openaiBaseURL;
    fake.reply({ sentiment: "negative" });
    expect((await call(new LM("openai/gpt-4o-mini"))).sentiment).toBe("negative");
    expect(fake.requests[0]!.headers.authorization).toBe("Bearer sk-from-env");
  });

  test("anthropic: key from ANTHROPIC_API_KEY, baseURL from ANTHROPIC_BASE_URL", async () => {
    process.env.ANTHROPIC_API_KEY = "ak-from-env";
    process.env.ANTHROPIC_BASE_URL = fake.url;
    fake.reply({ sentiment: "neutral" });
    expect((await call(new LM("anthropic/claude-3-5-haiku-latest"))).sentiment).toBe("neutral");
    expect(fake.requests[0]!.wire).toBe("anthropic");
    // The SDK decides the header (this @anthropic-ai/sdk sends the key as a Bearer token, older ones as x-api-key).
    const h = fake.requests[0]!.headers;
    expect([h["x-api-key"], h.authorization]).toContainEqual(expect.stringContaining("ak-from-env"));
  });

  test("ollama: no key; host from OLLAMA_HOST", async () => {
    delete process.env.OPENAI_API_KEY;
    process.env.OLLAMA_HOST = fake.url;
    fake.reply({ sentiment: "positive" });
    expect((await call(new LM("ollama/llama3.2"))).sentiment).toBe("positive");
    expect(fake.requests[0]!.wire).toBe("ollama");
    expect(fake.requests[0]!.body.model).toBe("llama3.2");
  });

  test("missing key, unknown provider and a bad model id are ConfigurationErrors", async () => {
    delete process.env.OPENAI_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    const attempt = async (make: () => LM) => { await call(make()); };
    await expect(attempt(() => new LM("openai/gpt-4o-mini", { baseURL: fake.openaiBaseURL }))).rejects.toThrow(ConfigurationError);
    await expect(attempt(() => new LM("anthropic/claude-3-5-haiku-latest", { baseURL: fake.url }))).rejects.toThrow(ConfigurationError);
    await expect(attempt(() => new LM("nosuch/model", { apiKey: "k" }))).rejects.toThrow(ConfigurationError);
    await expect(attempt(() => new LM("gpt-4o-mini", { apiKey: "k" }))).rejects.toThrow(ConfigurationError);
    expect(fake.requests).toHaveLength(0);
  });

  test("no LM configured anywhere is a ConfigurationError", async () => {
    await expect(new Predict(Classify).call({ sentence: "x" })).rejects.toThrow(ConfigurationError);
  });

  test("LM.configure: maxRetries and retryDelay (seconds); LMError carries status, retryable, provider", async () => {
    LM.configure((c) => { c.maxRetries = 1; c.retryDelay = 0; c.httpTimeout = 5; });
    fake.fail({ status: 500, times: 5 });
    const err = await call(new LM("openai/gpt-4o-mini", { apiKey: "sk-secret-abc", baseURL: fake.openaiBaseURL })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LMError);
    expect((err as LMError).status).toBe(500);
    expect((err as LMError).retryable).toBe(true);
    expect((err as LMError).provider).toBe("openai");
    expect(String((err as Error).message)).not.toContain("sk-secret-abc");
    expect(fake.requests).toHaveLength(2);
  });

  test("LM.configure httpTimeout (seconds) bounds a hanging provider", async () => {
    LM.configure((c) => { c.maxRetries = 0; c.httpTimeout = 0.3; });
    fake.hang();
    const started = Date.now();
    await expect(call(new LM("openai/gpt-4o-mini", { apiKey: "k", baseURL: fake.openaiBaseURL }))).rejects.toThrow(LMError);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test("structuredOutputs: true with Strategy.Strict sends a schema; Strategy.Compatible never does", async () => {
    configure((c) => { c.strategy = Strategy.Strict; });
    fake.reply({ sentiment: "positive" });
    await call(new LM("openai/gpt-4o-mini", { apiKey: "k", baseURL: fake.openaiBaseURL, structuredOutputs: true }));
    expect(fake.requests[0]!.schema).toBeDefined();
    configure((c) => { c.strategy = Strategy.Compatible; });
    fake.reply("```json\n{\"sentiment\": \"negative\"}\n```");
    const r = await call(new LM("openai/gpt-4o-mini", { apiKey: "k", baseURL: fake.openaiBaseURL, structuredOutputs: true }));
    expect(r.sentiment).toBe("negative");
    expect(fake.requests[1]!.schema).toBeUndefined();
  });

  test.each([
    ["openai/gpt-4o-mini", "openai"], ["anthropic/claude-3-5-haiku-latest", "anthropic"], ["ollama/llama3.2", "ollama"],
  ])("%s: structuredOutputs true sends the provider a schema; the default (Enhanced Prompting) does not", async (id, wire) => {
    const baseURL = wire === "openai" ? fake.openaiBaseURL : fake.url;
    fake.reply({ sentiment: "positive" }).reply({ sentiment: "negative" });
    expect((await call(new LM(id, { apiKey: "k", baseURL }))).sentiment).toBe("positive");
    expect((await call(new LM(id, { apiKey: "k", baseURL, structuredOutputs: true }))).sentiment).toBe("negative");
    expect(fake.requests.map((r) => [r.wire, r.schema !== undefined])).toEqual([[wire, false], [wire, true]]);
  });

  test("cache is off unless asked for; { path } replays without a provider call", async () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-api-cache-"));
    try {
      fake.reply({ sentiment: "positive" }).reply({ sentiment: "positive" });
      const plain = new LM("openai/gpt-4o-mini", { apiKey: "k", baseURL: fake.openaiBaseURL });
      await call(plain); await call(plain);
      expect(fake.requests).toHaveLength(2);
      fake.reset();
      fake.reply({ sentiment: "negative" });
      const cached = new LM("openai/gpt-4o-mini", { apiKey: "k", baseURL: fake.openaiBaseURL, cache: { path: join(dir, "c.sqlite") } });
      expect((await call(cached)).sentiment).toBe("negative");
      expect((await call(cached)).sentiment).toBe("negative");
      expect(fake.requests).toHaveLength(1);
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});

describe("strategies and resolution order", () => {
  test("a custom StrategyInterface's extractJson(signature, lmResponse) decides the parsed reply", async () => {
    const seen: unknown[] = [];
    class Fixed extends StrategyInterface {
      extractJson(signature: unknown, lmResponse: unknown): unknown {
        seen.push(signature, lmResponse);
        return { sentiment: "neutral" };
      }
    }
    configure((c) => { c.strategy = new Fixed(); });
    const r = await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM(["RAW-REPLY-TEXT"]) });
    expect(r.sentiment).toBe("neutral");
    expect(seen[0]).toBe(Classify);
    expect(JSON.stringify(seen[1])).toContain("RAW-REPLY-TEXT");
  });

  test("per-call, then module's configure, then parent's, then withLM, then global configure", async () => {
    const lmNamed = (label: "positive" | "negative" | "neutral") => new ScriptedLM(() => ({ sentiment: label }));
    class Inner extends Module {
      p = new Predict(Classify);
      async forward(i: { sentence: string }, o?: { lm?: ScriptedLM }) { return this.p.call(i, o ?? {}); }
    }
    class Outer extends Module {
      inner = new Inner();
      async forward(i: { sentence: string }) { return this.inner.call(i); }
    }
    const input = { sentence: "x" };
    configure((c) => { c.lm = lmNamed("positive"); });
    const outer = new Outer();
    expect((await outer.call(input)).sentiment).toBe("positive");                        // global
    expect((await withLM(lmNamed("negative"), () => outer.call(input))).sentiment).toBe("negative"); // withLM over global
    outer.configure((c) => { c.lm = lmNamed("neutral"); });
    expect((await withLM(lmNamed("negative"), () => outer.call(input))).sentiment).toBe("neutral"); // parent over withLM
    outer.inner.configure((c) => { c.lm = lmNamed("positive"); });
    expect((await outer.call(input)).sentiment).toBe("positive");                         // own over parent
    const perCall = new Predict(Classify);
    perCall.configure((c) => { c.lm = lmNamed("negative"); });
    expect((await perCall.call(input, { lm: lmNamed("neutral") })).sentiment).toBe("neutral"); // per call over own
  });

  test("withLM follows async context: concurrent scopes never see each other's LM", async () => {
    const slow = (label: "positive" | "negative", ms: number) => new ScriptedLM(async () => { await new Promise((r) => setTimeout(r, ms)); return { sentiment: label }; });
    const p = new Predict(Classify);
    const [a, b] = await Promise.all([
      withLM(slow("positive", 40), async () => { await new Promise((r) => setTimeout(r, 10)); return p.call({ sentence: "x" }); }),
      withLM(slow("negative", 5), () => p.call({ sentence: "y" })),
    ]);
    expect([a.sentiment, b.sentiment]).toEqual(["positive", "negative"]);
  });
});
