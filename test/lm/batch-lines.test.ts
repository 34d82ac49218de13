import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { ConfigurationError, LMError, ValidationError } from "../../lib/errors.js";
import { BatchClient, BatchSplitter } from "../../lib/lm/batch.js";
import { LM } from "../../lib/lm/lm.js";
import { PROVIDERS } from "../../lib/lm/providers/index.js";
import type { LMRequest } from "../../lib/lm/types.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_MODELS, TEST_KEY, withFakeProvider } from "./helpers.js";

const schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { sentiment: { type: "string", enum: ["positive", "negative"] } },
  required: ["sentiment"],
  additionalProperties: false,
};
const structured: LMRequest = {
  messages: [
    { role: "system", content: "You classify sentiment." },
    { role: "user", content: "I love it" },
  ],
  responseSchema: { name: "Classify", schema },
};

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

describe("a batch line carries the body the live call sends", () => {
  it("OpenAI: custom_id, POST /v1/chat/completions and the chat completion body the SDK sent live", async () => {
    fake.reply({ sentiment: "positive" });
    await lmFor("openai", fake, { temperature: 0.2, maxTokens: 50 }).chat(structured);
    const live = fake.requests[0]!.body;
    expect(live.response_format.json_schema.strict).toBe(true);

    const client = new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, baseURL: fake.openaiBaseURL, temperature: 0.2, maxTokens: 50 });
    const { line, text } = client.line({ customId: "ex-1", request: structured });
    expect(line).toEqual({ custom_id: "ex-1", method: "POST", url: "/v1/chat/completions", body: live });
    expect(JSON.parse(text)).toEqual(line);
  });

  it("Anthropic: custom_id and, as params, the Messages body the SDK sent live (system, max_tokens, forced tool)", async () => {
    fake.reply({ sentiment: "positive" });
    await lmFor("anthropic", fake).chat(structured);
    const live = fake.requests[0]!.body;
    expect(live.tool_choice).toEqual({ type: "tool", name: "Classify" });
    expect(live.system).toBe("You classify sentiment.");

    const client = new BatchClient(PROVIDER_MODELS.anthropic, { apiKey: TEST_KEY, baseURL: fake.url });
    const { line } = client.line({ customId: "ex-1", request: structured });
    expect(line).toEqual({ custom_id: "ex-1", params: live });
  });

  it("applies a request's own temperature and maxTokens over the client's, as the live call does", async () => {
    const request: LMRequest = { messages: [{ role: "user", content: "hi" }], temperature: 0.9, maxTokens: 7 };
    fake.reply("hello");
    await lmFor("openai", fake, { temperature: 0, maxTokens: 100 }).chat(request);
    const live = fake.requests[0]!.body;
    expect(live).toMatchObject({ temperature: 0.9, max_completion_tokens: 7 });

    const client = new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, baseURL: fake.openaiBaseURL, temperature: 0, maxTokens: 100 });
    expect((client.line({ customId: "a", request }).line as { body: unknown }).body).toEqual(live);
  });

  it("never sends a rolloutId: it is a cache key, not a provider parameter", () => {
    const client = new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY });
    const { text } = client.line({ customId: "a", request: { messages: [{ role: "user", content: "hi" }], rolloutId: "r-7" } });
    expect(text).not.toContain("r-7");
    expect(text).not.toContain("rollout");
  });

  it("counts a line's size in UTF-8 bytes with its newline", () => {
    const client = new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY });
    const { text, bytes } = client.line({ customId: "a", request: { messages: [{ role: "user", content: "café ☕" }] } });
    expect(bytes).toBe(Buffer.byteLength(text, "utf8") + 1);
    expect(bytes).toBe(text.length + 1 + 1 + 2); // é is 2 bytes, ☕ is 3
  });
});

describe("BatchSplitter", () => {
  const starts = (limits: { maxRequests: number; maxBytes: number }, sizes: number[]): number[] => {
    const splitter = new BatchSplitter(limits);
    return sizes.flatMap((size, i) => (splitter.add(size) ? [i] : []));
  };

  it("starts a new batch after maxRequests lines", () => {
    expect(starts({ maxRequests: 3, maxBytes: 1_000 }, [10, 10, 10, 10, 10, 10, 10])).toEqual([3, 6]);
  });

  it("starts a new batch when a line would pass maxBytes, and fills a batch exactly to it", () => {
    expect(starts({ maxRequests: 100, maxBytes: 25 }, [10, 15, 10, 10, 10, 20])).toEqual([2, 4, 5]);
  });

  it("never makes an empty batch: the first line always opens the first one", () => {
    expect(starts({ maxRequests: 1, maxBytes: 5 }, [50, 50])).toEqual([1]);
  });
});

describe("BatchClient configuration", () => {
  it("uses each provider's documented limits: OpenAI 50,000 requests / 200 MB, Anthropic 100,000 / 256 MB", () => {
    expect(new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY }).limits).toEqual({ maxRequests: 50_000, maxBytes: 200_000_000 });
    expect(new BatchClient(PROVIDER_MODELS.anthropic, { apiKey: TEST_KEY }).limits).toEqual({ maxRequests: 100_000, maxBytes: 256_000_000 });
  });

  it("lowers the request limit to maxRequestsPerBatch, never raises it past the provider's", () => {
    expect(new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, maxRequestsPerBatch: 1_000 }).limits.maxRequests).toBe(1_000);
    expect(new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, maxRequestsPerBatch: 80_000 }).limits.maxRequests).toBe(50_000);
  });

  it("refuses a maxRequestsPerBatch or pollInterval that is not positive, naming the option", () => {
    for (const bad of [0, 1.5, -3, Number.NaN]) {
      expect(() => new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, maxRequestsPerBatch: bad })).toThrow(ValidationError);
    }
    expect(() => new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, pollInterval: 0 })).toThrow(/pollInterval: expected a positive number/);
    expect(() => new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, maxRequestsPerBatch: 0 })).toThrow(/maxRequestsPerBatch: expected a positive integer, received 0/);
  });

  it("Ollama has no batch service: a ConfigurationError that points to a load balancer", () => {
    expect(PROVIDERS["ollama"]!.batch).toBeUndefined();
    const attempt = (): BatchClient => new BatchClient(PROVIDER_MODELS.ollama);
    expect(attempt).toThrow(ConfigurationError);
    expect(attempt).toThrow(/Ollama has no batch service/);
    expect(attempt).toThrow(/several Ollama servers at a load balancer/);
  });

  describe("without a key in the environment", () => {
    const saved = process.env["OPENAI_API_KEY"];
    beforeEach(() => {
      delete process.env["OPENAI_API_KEY"];
    });
    afterEach(() => {
      if (saved !== undefined) process.env["OPENAI_API_KEY"] = saved;
    });

    it("refuses an OpenAI batch client with no API key, as LM does", () => {
      expect(() => new BatchClient(PROVIDER_MODELS.openai)).toThrow(/no API key for openai. Set OPENAI_API_KEY/);
    });
  });
});

describe("submit checks custom ids before anything is sent", () => {
  // A closed port: any request would fail with an LMError, not the ValidationError asserted.
  const client = (): BatchClient => new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, baseURL: "http://127.0.0.1:9/v1" });
  const request: LMRequest = { messages: [{ role: "user", content: "hi" }] };

  it("refuses an id outside 1-64 characters of a-z A-Z 0-9 _ -", async () => {
    for (const customId of ["", "has space", "x".repeat(65), "é"]) {
      const error = await client().submit([{ customId, request }]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe("customId");
    }
  });

  it("refuses an id given twice, naming it", async () => {
    const error = await client().submit([{ customId: "ex-1", request }, { customId: "ex-2", request }, { customId: "ex-1", request }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe('Batch request customId "ex-1" appears twice; expected each request\'s id to be unique');
  });

  it("sends nothing and returns no batch for no requests", async () => {
    await expect(client().submit([])).resolves.toEqual([]);
  });

  it("an upload that cannot connect is an LMError naming the upload and the server, without the key", async () => {
    LM.configure((c) => { c.maxRetries = 0; });
    const error = await client().submit([{ customId: "ex-1", request }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as Error).message).toMatch(/^openai batch upload: openai request for model "gpt-4o-mini" failed: connection to http:\/\/127\.0\.0\.1:9\/v1 failed/);
    expect((error as Error).message).not.toContain(TEST_KEY);
  });
});
