import { beforeEach, describe, expect, it } from "@jest/globals";
import { LM } from "../../lib/lm/lm.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, TEST_KEY, withFakeProvider } from "./helpers.js";

const messages = [
  { role: "system" as const, content: "You classify sentiment." },
  { role: "user" as const, content: "I love it" },
];
const schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { sentiment: { type: "string", enum: ["positive", "negative"] }, note: { type: "string" } },
  required: ["sentiment"],
  additionalProperties: false,
};

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

describe("OpenAI through the openai SDK", () => {
  it("sends messages, temperature and max_completion_tokens, and reads content and usage", async () => {
    fake.reply("positive", { usage: { inputTokens: 12, outputTokens: 3 } });
    const lm = lmFor("openai", fake, { temperature: 0.2, maxTokens: 50 });
    const r = await lm.chat({ messages });
    const sent = fake.requests[0]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.body.model).toBe("gpt-4o-mini");
    expect(sent.body.messages).toEqual(messages);
    expect(sent.body.temperature).toBe(0.2);
    expect(sent.body.max_completion_tokens).toBe(50);
    expect(sent.body.response_format).toBeUndefined();
    expect(sent.headers["authorization"]).toBe(`Bearer ${TEST_KEY}`);
    expect(r).toMatchObject({ content: "positive", usage: { inputTokens: 12, outputTokens: 3 }, provider: "openai", model: "gpt-4o-mini", cached: false, finishReason: "stop" });
    expect(r.estimatedCost).toBeCloseTo((12 * 0.15 + 3 * 0.6) / 1e6, 12);
  });

  it("asks for strict json_schema output with a strict-compatible schema", async () => {
    fake.reply({ sentiment: "positive", note: null });
    const r = await lmFor("openai", fake).chat({ messages, responseSchema: { name: "Classify output", schema } });
    const format = fake.requests[0]!.body.response_format;
    expect(format.type).toBe("json_schema");
    expect(format.json_schema.name).toBe("Classify_output");
    expect(format.json_schema.strict).toBe(true);
    expect(format.json_schema.schema.$schema).toBeUndefined();
    expect(format.json_schema.schema.required).toEqual(["sentiment", "note"]);
    expect(format.json_schema.schema.properties.note).toEqual({ type: ["string", "null"] });
    expect(JSON.parse(r.content)).toEqual({ sentiment: "positive", note: null });
  });

  it("lets a per-call temperature and maxTokens override the LM's", async () => {
    await lmFor("openai", fake, { temperature: 1, maxTokens: 10 }).chat({ messages, temperature: 0, maxTokens: 99 });
    expect(fake.requests[0]!.body).toMatchObject({ temperature: 0, max_completion_tokens: 99 });
  });
});

describe("Anthropic through @anthropic-ai/sdk", () => {
  it("moves the system message to `system`, defaults max_tokens to 4096 and reads usage", async () => {
    fake.reply("positive", { usage: { inputTokens: 20, outputTokens: 4 } });
    const r = await lmFor("anthropic", fake, { temperature: 0.3 }).chat({ messages });
    const sent = fake.requests[0]!;
    expect(sent.path).toBe("/v1/messages");
    expect(sent.body.system).toBe("You classify sentiment.");
    expect(sent.body.messages).toEqual([{ role: "user", content: "I love it" }]);
    expect(sent.body.max_tokens).toBe(4096);
    // API version 2026-10-21 rejects sampling parameters, so temperature is never sent.
    expect(sent.body.temperature).toBeUndefined();
    expect(sent.headers["anthropic-version"]).toBe("2026-10-21");
    expect(r).toMatchObject({ content: "positive", usage: { inputTokens: 20, outputTokens: 4 }, provider: "anthropic", finishReason: "end_turn" });
    expect(r.estimatedCost).toBeCloseTo((20 * 0.8 + 4 * 4) / 1e6, 12);
  });

  it("sends maxTokens as max_tokens", async () => {
    await lmFor("anthropic", fake, { maxTokens: 300 }).chat({ messages });
    expect(fake.requests[0]!.body.max_tokens).toBe(300);
  });

  it("forces a tool call for structured output and returns the tool input as JSON text", async () => {
    fake.reply({ sentiment: "negative" });
    const r = await lmFor("anthropic", fake).chat({ messages, responseSchema: { name: "ClassifyOutput", schema } });
    const body = fake.requests[0]!.body;
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0].name).toBe("ClassifyOutput");
    expect(body.tools[0].input_schema.$schema).toBeUndefined();
    expect(body.tools[0].input_schema.properties).toEqual(schema.properties);
    expect(body.tool_choice).toEqual({ type: "tool", name: "ClassifyOutput" });
    expect(JSON.parse(r.content)).toEqual({ sentiment: "negative" });
    expect(r.finishReason).toBe("tool_use");
  });

  it("raises OutputError when the reply lacks the forced tool call", async () => {
    fake.reply("not json at all");
    await expect(lmFor("anthropic", fake).chat({ messages, responseSchema: { name: "ClassifyOutput", schema } }))
      .rejects.toMatchObject({ name: "OutputError", raw: "not json at all" });
  });
});

describe("Ollama through the ollama SDK", () => {
  it("sends messages, options.temperature and options.num_predict, non-streaming, and reads eval counts", async () => {
    fake.reply("positive", { usage: { inputTokens: 30, outputTokens: 5 } });
    const r = await lmFor("ollama", fake, { temperature: 0.1, maxTokens: 64 }).chat({ messages });
    const sent = fake.requests[0]!;
    expect(sent.path).toBe("/api/chat");
    expect(sent.body.messages).toEqual(messages);
    expect(sent.body.stream).toBe(false);
    expect(sent.body.options).toEqual({ temperature: 0.1, num_predict: 64 });
    expect(sent.headers["authorization"]).toBeUndefined();
    expect(r).toMatchObject({ content: "positive", usage: { inputTokens: 30, outputTokens: 5 }, estimatedCost: 0, provider: "ollama", model: "llama3.2:3b" });
  });

  it("passes the JSON schema as `format` for structured output", async () => {
    fake.reply({ sentiment: "positive" });
    const r = await lmFor("ollama", fake).chat({ messages, responseSchema: { name: "ClassifyOutput", schema } });
    const { $schema: _drop, ...expected } = schema;
    expect(fake.requests[0]!.body.format).toEqual(expected);
    expect(JSON.parse(r.content)).toEqual({ sentiment: "positive" });
  });

  it("takes its host from OLLAMA_HOST when no baseURL is given", async () => {
    const saved = process.env["OLLAMA_HOST"];
    process.env["OLLAMA_HOST"] = fake.url;
    try {
      await new LM("ollama/qwen2.5:0.5b").chat({ messages });
      expect(fake.requests[0]!.body.model).toBe("qwen2.5:0.5b");
    } finally {
      if (saved === undefined) delete process.env["OLLAMA_HOST"];
      else process.env["OLLAMA_HOST"] = saved;
    }
  });
});
