// Anthropic reasoning (`thinking` with `budget_tokens`) with a response schema. Anthropic's API
// refuses a forced tool call while thinking (only tool_choice "auto" or "none" combine with it), and
// the fake provider refuses it as the real API does. typelm offers the answer tool with "auto"
// when the LM reasons (the reply is the tool's input, or the text), and predictors under
// Strategy.Strict use Enhanced Prompting for an Anthropic LM with reasoning. All through the SDK.
import { beforeEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { LM } from "../../lib/lm/lm.js";
import { Predict } from "../../lib/predict/predict.js";
import { Signature } from "../../lib/signature/signature.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, TEST_KEY, withFakeProvider } from "./helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

const messages = [
  { role: "system" as const, content: "You answer briefly." },
  { role: "user" as const, content: "What is 2 + 2?" },
];
const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };

class Sum extends Signature {
  static override description = "Add the two numbers.";
  static override input = { question: z.string() };
  static override output = { answer: z.string() };
}

describe("the fake provider, as Anthropic's API", () => {
  it("refuses thinking with a forced tool call (400, invalid_request_error), and accepts it with tool_choice auto", async () => {
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const client = new Anthropic({ apiKey: TEST_KEY, baseURL: fake.url, maxRetries: 0 });
    const base = {
      model: "claude-3-5-haiku-20241022", max_tokens: 4096, messages: [{ role: "user" as const, content: "2 + 2?" }],
      thinking: { type: "enabled" as const, budget_tokens: 2048 },
      tools: [{ name: "Answer", input_schema: schema as never }],
    };
    const refused = await client.messages.create({ ...base, tool_choice: { type: "tool", name: "Answer" } }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, error: { error: { type: "invalid_request_error", message: "Thinking may not be enabled when tool_choice forces tool use." } } });
    const any = await client.messages.create({ ...base, tool_choice: { type: "any" } }).catch((e: unknown) => e);
    expect(any).toMatchObject({ status: 400 });
    const accepted = await client.messages.create({ ...base, tool_choice: { type: "auto" } });
    expect(accepted.type).toBe("message");
  });
});

describe.each([["unstreamed", false], ["streamed", true]] as const)("an Anthropic LM with reasoning and a response schema, %s", (_name, streamed) => {
  it("offers the answer tool with tool_choice auto beside thinking, and reads the reply", async () => {
    fake.reply(JSON.stringify({ answer: "4" }));
    const lm = lmFor("anthropic", fake, { reasoning: { budgetTokens: 2048 } });
    const r = await lm.chat({ messages, responseSchema: { name: "Answer", schema } }, streamed ? { onDelta: () => undefined } : {});
    const body = fake.requests[0]!.body;
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(body.tool_choice).toEqual({ type: "auto" });
    expect(body.tools.map((t: { name: string }) => t.name)).toEqual(["Answer"]);
    expect(JSON.parse(r.content)).toEqual({ answer: "4" });
  });
});

describe("Predict under Strategy.Strict with structuredOutputs on", () => {
  it("an Anthropic LM with reasoning uses Enhanced Prompting: no tool, the signature in the prompt", async () => {
    fake.reply(JSON.stringify({ answer: "4" }));
    const lm = lmFor("anthropic", fake, { reasoning: { effort: "low" }, structuredOutputs: true });
    expect(lm.supportsStructuredOutputs()).toBe(false);
    const r = await new Predict(Sum).call({ question: "2 + 2?" }, { lm });
    const body = fake.requests[0]!.body;
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expect(fake.requests[0]!.messages[0]!.content).toContain("answer");
    expect(r.answer).toBe("4");
  });

  it("without reasoning, the same LM still forces the answer tool", async () => {
    fake.reply({ answer: "4" });
    const lm = lmFor("anthropic", fake, { structuredOutputs: true });
    expect(lm.supportsStructuredOutputs()).toBe(true);
    const r = await new Predict(Sum).call({ question: "2 + 2?" }, { lm });
    expect(fake.requests[0]!.body.tool_choice).toEqual({ type: "tool", name: "Sum" });
    expect(r.answer).toBe("4");
  });
});

describe("Predict through a profile under Strategy.Strict with structuredOutputs on", () => {
  const lm = (name: string) => new LM(`${name}/some-model`, { apiKey: TEST_KEY, baseURL: fake.openaiBaseURL, structuredOutputs: true });

  it("asks Gemini for json_schema output", async () => {
    fake.reply({ answer: "4" });
    const r = await new Predict(Sum).call({ question: "2 + 2?" }, { lm: lm("gemini") });
    expect(fake.requests[0]!.body.response_format?.type).toBe("json_schema");
    expect(r.answer).toBe("4");
  });

  it("uses Enhanced Prompting on Groq, whose flag says no structured output", async () => {
    fake.reply(JSON.stringify({ answer: "4" }));
    const r = await new Predict(Sum).call({ question: "2 + 2?" }, { lm: lm("groq") });
    expect(fake.requests[0]!.body.response_format).toBeUndefined();
    expect(r.answer).toBe("4");
  });
});

describe("the fake provider's Anthropic replies with thinking on", () => {
  const usage = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 600, cacheWriteTokens: 100 };

  it("open with a thinking block, which the LM leaves out of the reply, streamed and not", async () => {
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const client = new Anthropic({ apiKey: TEST_KEY, baseURL: fake.url, maxRetries: 0 });
    fake.reply("4");
    const raw = await client.messages.create({
      model: "claude-3-5-haiku-20241022", max_tokens: 4096, messages: [{ role: "user", content: "2 + 2?" }],
      thinking: { type: "enabled", budget_tokens: 2048 },
    });
    expect(raw.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    const lm = lmFor("anthropic", fake, { reasoning: { budgetTokens: 2048 } });
    fake.reply("4", { usage }).reply("4", { usage });
    const pieces: string[] = [];
    const streamed = await lm.chat({ messages }, { onDelta: (p) => pieces.push(p) });
    const unstreamed = await lm.chat({ messages });
    for (const r of [streamed, unstreamed]) {
      expect(r.content).toBe("4");
      expect(r.usage).toEqual({ inputTokens: 1000, outputTokens: 200, cacheReadTokens: 600, cacheWriteTokens: 100, reasoningTokens: 0 });
    }
    expect(pieces.join("")).toBe("4");
  });

  it("stream a message_delta whose usage is cumulative, cache counts included, as the Messages API does", async () => {
    fake.reply("4", { usage });
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: "POST", headers: { "content-type": "application/json", "x-api-key": TEST_KEY },
      body: JSON.stringify({ model: "claude-3-5-haiku-20241022", max_tokens: 100, stream: true, messages: [{ role: "user", content: "2 + 2?" }] }),
    });
    const events = (await response.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
    const delta = events.find((e) => e.type === "message_delta");
    expect(delta.usage).toEqual({ input_tokens: 300, output_tokens: 200, cache_read_input_tokens: 600, cache_creation_input_tokens: 100 });
  });
});
