// The fake provider's conformance checks run against every provider profile (Gemini, OpenRouter,
// Groq, Together, vLLM, LM Studio), each pointed by `baseURL` at the loopback fake through the real
// `openai` SDK: chat with usage and cost, streaming with usage (cached and reasoning tokens),
// structured output where the profile's flag says so and a ConfigurationError before any request
// where not, reasoning likewise, the key variable and server address each profile takes, and no key
// in an error or a log line.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { resetConfiguration } from "../../lib/config.js";
import { ConfigurationError } from "../../lib/errors.js";
import { LM } from "../../lib/lm/lm.js";
import { PROFILES, profileCapabilities } from "../../lib/lm/profiles.js";
import { PROVIDER_INFO } from "../../lib/lm/providers/info.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { captureLogLines, TEST_KEY, withFakeProvider } from "./helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
const saved = { ...process.env };
beforeEach(() => LM.resetConfiguration());
afterEach(() => {
  process.env = { ...saved };
  resetConfiguration();
});

const messages = [
  { role: "system" as const, content: "You answer briefly." },
  { role: "user" as const, content: "What is 2 + 2?" },
];
const schema = {
  type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false,
};

/**
 * Each profile with a priced model (its cost worked out by hand from the price table's sources,
 * USD per million tokens) and the documented defaults. vLLM and LM Studio run on the user's own
 * hardware: cost 0 whatever the model.
 */
const CASES = {
  gemini: { model: "gemini-2.5-flash", key: "GEMINI_API_KEY", url: "https://generativelanguage.googleapis.com/v1beta/openai/", structured: true, reasoning: true,
    // 1000 input (600 cached at 0.03, 400 at 0.30) + 200 output at 2.50
    cost: (400 * 0.3 + 600 * 0.03 + 200 * 2.5) / 1e6 },
  openrouter: { model: "openai/gpt-4o-mini", key: "OPENROUTER_API_KEY", url: "https://openrouter.ai/api/v1", structured: true, reasoning: false,
    // gpt-4o-mini's own price: 400 x 0.15 + 600 x 0.075 + 200 x 0.6
    cost: (400 * 0.15 + 600 * 0.075 + 200 * 0.6) / 1e6 },
  groq: { model: "llama-3.3-70b-versatile", key: "GROQ_API_KEY", url: "https://api.groq.com/openai/v1", structured: false, reasoning: true,
    // no cache-read rate listed for this model: 1000 x 0.59 + 200 x 0.79
    cost: (1000 * 0.59 + 200 * 0.79) / 1e6 },
  together: { model: "meta-llama/Llama-3.3-70B-Instruct-Turbo", key: "TOGETHER_API_KEY", url: "https://api.together.ai/v1", structured: true, reasoning: false,
    cost: (1200 * 0.88) / 1e6 },
  vllm: { model: "Qwen/Qwen2.5-7B-Instruct", key: undefined, url: undefined, structured: true, reasoning: false, cost: 0 },
  lmstudio: { model: "qwen2.5-7b-instruct", key: undefined, url: undefined, structured: true, reasoning: false, cost: 0 },
} as const;
type ProfileName = keyof typeof CASES;
const NAMES = Object.keys(CASES) as ProfileName[];
const scripted = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 600, reasoningTokens: 50 };

const lmOf = (name: ProfileName, options: ConstructorParameters<typeof LM>[1] = {}) =>
  new LM(`${name}/${CASES[name].model}`, { apiKey: TEST_KEY, baseURL: fake.openaiBaseURL, ...options });

it("covers every profile the library knows", () => {
  expect(Object.keys(PROFILES).sort()).toEqual([...NAMES].sort());
});

describe.each(NAMES)("profile %s", (name) => {
  const c = CASES[name];

  it("chats through the openai SDK: its model, key and messages; content, usage and cost", async () => {
    fake.reply("4", { usage: scripted });
    const r = await lmOf(name).chat({ messages });
    const sent = fake.requests[0]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.body.model).toBe(c.model);
    expect(sent.body.messages).toEqual(messages);
    expect(sent.headers["authorization"]).toBe(`Bearer ${TEST_KEY}`);
    expect(r).toMatchObject({ content: "4", provider: name, model: c.model, cached: false, finishReason: "stop" });
    expect(r.usage).toEqual({ inputTokens: 1000, outputTokens: 200, cacheReadTokens: 600, cacheWriteTokens: 0, reasoningTokens: 50 });
    expect(r.estimatedCost).toBeCloseTo(c.cost, 12);
  });

  it("streams, with the usage chunk's cached and reasoning tokens", async () => {
    fake.reply("four, as asked", { usage: scripted, stream: { chunkChars: 3 } });
    const pieces: string[] = [];
    const r = await lmOf(name).chat({ messages }, { onDelta: (p) => pieces.push(p) });
    expect(fake.requests[0]!.body.stream).toBe(true);
    expect(fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("four, as asked");
    expect(r.usage).toMatchObject({ cacheReadTokens: 600, reasoningTokens: 50 });
  });

  it(`${c.structured ? "asks for json_schema output" : "refuses a response schema before any request"}`, async () => {
    const lm = lmOf(name, { structuredOutputs: true });
    expect(lm.supportsStructuredOutputs()).toBe(c.structured);
    expect(profileCapabilities(lm.id)?.structuredOutputs).toBe(c.structured);
    if (c.structured) {
      fake.reply({ answer: "4" });
      const r = await lm.chat({ messages, responseSchema: { name: "Answer", schema } });
      expect(fake.requests[0]!.body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "Answer", strict: true } });
      expect(JSON.parse(r.content)).toEqual({ answer: "4" });
    } else {
      await expect(lm.chat({ messages, responseSchema: { name: "Answer", schema } })).rejects.toThrow(ConfigurationError);
      await expect(lm.chat({ messages, responseSchema: { name: "Answer", schema } })).rejects.toThrow(/no native structured output/);
      expect(fake.requests).toHaveLength(0);
    }
  });

  it(`${c.reasoning ? "sends a reasoning effort as reasoning_effort" : "refuses a reasoning setting when the LM is built"}`, async () => {
    if (c.reasoning) {
      await lmOf(name, { reasoning: { effort: "low" } }).chat({ messages });
      expect(fake.requests[0]!.body.reasoning_effort).toBe("low");
      // A token budget has no OpenAI-wire equivalent.
      expect(() => lmOf(name, { reasoning: { budgetTokens: 2048 } })).toThrow(/takes a reasoning effort, not a token budget/);
    } else {
      expect(() => lmOf(name, { reasoning: { effort: "low" } })).toThrow(ConfigurationError);
      expect(() => lmOf(name, { reasoning: { effort: "low" } })).toThrow(/takes no reasoning setting/);
    }
    expect(fake.requests.length).toBe(c.reasoning ? 1 : 0);
  });

  it("has no batch service", async () => {
    const { BatchClient } = await import("../../lib/lm/batch.js");
    expect(() => new BatchClient(`${name}/${c.model}`, { apiKey: TEST_KEY, baseURL: fake.openaiBaseURL })).toThrow(/has no batch service/);
  });

  if (c.key !== undefined) {
    const key = c.key;
    it(`reads ${key}, refuses a missing key by its name, and goes to the documented server`, async () => {
      delete process.env[key];
      expect(() => new LM(`${name}/${c.model}`)).toThrow(new RegExp(`no API key for ${name}. Set ${key}`));
      expect(PROVIDER_INFO[name]!.resolveBaseURL(undefined)).toBe(c.url);
      process.env[key] = "env-key-SECRET-987654";
      await new LM(`${name}/${c.model}`, { baseURL: fake.openaiBaseURL }).chat({ messages });
      expect(fake.requests[0]!.headers["authorization"]).toBe("Bearer env-key-SECRET-987654");
    });
  } else {
    const variable = name === "vllm" ? "VLLM_BASE_URL" : "LMSTUDIO_BASE_URL";
    it(`takes its server from ${variable} or baseURL, refuses neither, and sends no OpenAI key`, async () => {
      delete process.env[variable];
      expect(() => new LM(`${name}/${c.model}`)).toThrow(ConfigurationError);
      expect(() => new LM(`${name}/${c.model}`)).toThrow(new RegExp(`no server address. Set ${variable}`));
      process.env[variable] = fake.openaiBaseURL;
      // An OpenAI key in the environment must not travel to someone else's server.
      process.env["OPENAI_API_KEY"] = "sk-openai-SECRET-555555";
      await new LM(`${name}/${c.model}`).chat({ messages });
      expect(fake.requests[0]!.headers["authorization"]).not.toContain("sk-openai-SECRET-555555");
    });
  }

  it("keeps the key out of the error and the log lines of a failed call", async () => {
    LM.configure((p) => { p.maxRetries = 0; });
    const lines = captureLogLines("json");
    fake.fail({ status: 401, body: { error: { message: `invalid key ${TEST_KEY}`, type: "invalid_request_error" } } });
    const error = await lmOf(name).chat({ messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).not.toContain(TEST_KEY);
    expect(JSON.stringify(error)).not.toContain(TEST_KEY);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toContain(TEST_KEY);
  });
});

describe("profileCapabilities", () => {
  it("answers for an id or a provider name, for the three SDK providers too, and not for an unknown one", () => {
    expect(profileCapabilities("groq/llama-3.3-70b-versatile")).toEqual({ structuredOutputs: false, tools: true, images: true, streaming: true, reasoning: true });
    expect(profileCapabilities("groq")).toBe(profileCapabilities("groq/x"));
    expect(profileCapabilities("anthropic/claude-sonnet-4-5")?.structuredOutputs).toBe(true);
    expect(profileCapabilities("nosuch/model")).toBeUndefined();
  });

  it("lets baseURL override a profile's own server", () => {
    expect(PROVIDER_INFO["gemini"]!.resolveBaseURL("http://proxy.local/v1")).toBe("http://proxy.local/v1");
  });
});
