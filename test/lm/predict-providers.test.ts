import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { configure, resetConfiguration } from "../../lib/config.js";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { LM } from "../../lib/lm/lm.js";
import { ChainOfThought } from "../../lib/predict/chain-of-thought.js";
import { Predict } from "../../lib/predict/predict.js";
import { Signature } from "../../lib/signature/signature.js";
import { Strategy, StrategyInterface } from "../../lib/strategy/strategy.js";
import type { LMResponse } from "../../lib/lm/types.js";
import type { SignatureClass } from "../../lib/signature/signature.js";
import type { FakeProvider, FakeRequest } from "../../lib/testing/fake-provider.js";
import { captureLogLines, lmFor, PROVIDER_NAMES, withFakeProvider, type ProviderName } from "./helpers.js";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string().describe("text to classify") };
  static override output = {
    sentiment: z.enum(["positive", "negative", "neutral"]),
    confidence: z.number().describe("between 0 and 1"),
    note: z.string().optional(),
    scores: z.record(z.string(), z.number()),
  };
}

const answer = { sentiment: "positive", confidence: 0.9, scores: { joy: 0.8 } };
const reasoned = { reasoning: "The speaker loves it.", ...answer };

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
afterEach(() => resetConfiguration());

/** The schema a request asked for natively, whatever the wire format (undefined in Enhanced Prompting). */
function nativeSchema(req: FakeRequest): Record<string, any> | undefined {
  return req.schema as Record<string, any> | undefined;
}

/** Asserts the parameters each provider carries, given the LM was built with temperature 0.2 and maxTokens 321. */
function expectParameters(provider: ProviderName, req: FakeRequest): void {
  if (provider === "openai") expect(req.body).toMatchObject({ model: "gpt-4o-mini", temperature: 0.2, max_completion_tokens: 321 });
  if (provider === "anthropic") {
    expect(req.body).toMatchObject({ model: "claude-3-5-haiku-20241022", max_tokens: 321 });
    expect(req.body.temperature).toBeUndefined(); // rejected by Anthropic API 2026-10-21
  }
  if (provider === "ollama") expect(req.body).toMatchObject({ model: "llama3.2:3b", options: { temperature: 0.2, num_predict: 321 } });
}

/** Classify's output schema, written out: what Anthropic's tool and Ollama's `format` must carry. */
const CLASSIFY_PROPERTIES = {
  sentiment: { type: "string", enum: ["positive", "negative", "neutral"] },
  confidence: { type: "number", description: "between 0 and 1" },
  note: { type: "string" },
  scores: { type: "object", additionalProperties: { type: "number" } },
};
const CLASSIFY_SCHEMA = { type: "object", properties: CLASSIFY_PROPERTIES, required: ["sentiment", "confidence", "scores"] };
const REASONING = { type: "string", description: "Step by step reasoning process" };
const COT_SCHEMA = {
  type: "object",
  properties: { reasoning: REASONING, ...CLASSIFY_PROPERTIES },
  required: ["reasoning", "sentiment", "confidence", "scores"],
};

/**
 * Asserts how the signature's output schema reached the provider in structured mode. Classify has a
 * record, which OpenAI's strict mode cannot express, so OpenAI gets the schema with `strict: false`.
 */
function expectStructuredSchema(provider: ProviderName, req: FakeRequest, signature: SignatureClass, expected: Record<string, unknown>): void {
  expect(nativeSchema(req)).toEqual(expected);
  if (provider === "openai") {
    expect(req.body.response_format).toEqual({ type: "json_schema", json_schema: { name: signature.name, strict: false, schema: expected } });
  }
  if (provider === "anthropic") expect(req.body.tool_choice).toEqual({ type: "tool", name: signature.name });
  if (provider === "ollama") expect(req.body.format).toEqual(expected);
}

function expectEnhancedPrompting(req: FakeRequest): void {
  expect(nativeSchema(req)).toBeUndefined();
  expect(req.body.response_format).toBeUndefined();
  expect(req.body.tools).toBeUndefined();
  expect(req.body.format).toBeUndefined();
  const system = req.messages.find((m) => m.role === "system")!.content;
  expect(system).toContain("Classify the sentiment of a sentence.");
  expect(system).toContain("sentiment");
  expect(system).toContain("confidence");
}

describe.each(PROVIDER_NAMES)("Predict and ChainOfThought through the %s SDK", (provider) => {
  const lm = (structuredOutputs: boolean) => lmFor(provider, fake, { temperature: 0.2, maxTokens: 321, structuredOutputs });

  it("Predict in Enhanced Prompting sends the signature in the prompt and parses the JSON reply", async () => {
    fake.reply(`Here you go:\n\`\`\`json\n${JSON.stringify(answer)}\n\`\`\``);
    const r = await new Predict(Classify).call({ sentence: "I love it" }, { lm: lm(false) });
    const req = fake.requests[0]!;
    expectEnhancedPrompting(req);
    expectParameters(provider, req);
    expect(req.messages.at(-1)).toMatchObject({ role: "user" });
    expect(req.messages.at(-1)!.content).toContain("I love it");
    expect(r.sentiment).toBe("positive");
    expect(r.confidence).toBe(0.9);
    expect(r.scores).toEqual({ joy: 0.8 });
  });

  it("Predict in structured mode asks for the output schema natively and returns typed values", async () => {
    fake.reply(answer);
    const r = await new Predict(Classify).call({ sentence: "I love it" }, { lm: lm(true) });
    const req = fake.requests[0]!;
    expectStructuredSchema(provider, req, Classify, CLASSIFY_SCHEMA);
    expectParameters(provider, req);
    expect(req.messages.at(-1)!.content).toContain("I love it");
    expect(r.sentiment).toBe("positive");
    expect(r.confidence).toBe(0.9);
    expect(r.note ?? null).toBeNull();
    expect(r.scores).toEqual({ joy: 0.8 });
  });

  it("ChainOfThought in Enhanced Prompting returns the reasoning with the answer", async () => {
    fake.reply(JSON.stringify(reasoned));
    const r = await new ChainOfThought(Classify).call({ sentence: "I love it" }, { lm: lm(false) });
    const req = fake.requests[0]!;
    expectEnhancedPrompting(req);
    expectParameters(provider, req);
    expect(req.messages.find((m) => m.role === "system")!.content).toContain("reasoning");
    expect(r.reasoning).toBe("The speaker loves it.");
    expect(r.sentiment).toBe("positive");
  });

  it("ChainOfThought in structured mode puts reasoning first in the native schema", async () => {
    fake.reply(reasoned);
    const cot = new ChainOfThought(Classify);
    const r = await cot.call({ sentence: "I love it" }, { lm: lm(true) });
    const req = fake.requests[0]!;
    expectStructuredSchema(provider, req, cot.signature, COT_SCHEMA);
    expectParameters(provider, req);
    expect(r.reasoning).toBe("The speaker loves it.");
    expect(r.confidence).toBe(0.9);
  });

  it("Strategy.Compatible uses Enhanced Prompting even when the LM asks for structured outputs", async () => {
    configure((c) => {
      c.strategy = Strategy.Compatible;
    });
    fake.reply(JSON.stringify(answer));
    const r = await new Predict(Classify).call({ sentence: "meh" }, { lm: lm(true) });
    expectEnhancedPrompting(fake.requests[0]!);
    expect(r.sentiment).toBe("positive");
  });

  it("a custom StrategyInterface receives the provider's response", async () => {
    const seen: LMResponse[] = [];
    class FirstLine extends StrategyInterface {
      extractJson(_signature: SignatureClass, response: LMResponse): unknown {
        seen.push(response);
        return JSON.parse(response.content.split("\n")[0]!);
      }
    }
    configure((c) => {
      c.strategy = new FirstLine();
    });
    fake.reply(`${JSON.stringify(answer)}\nand some chatter`, { usage: { inputTokens: 11, outputTokens: 6 } });
    const r = await new Predict(Classify).call({ sentence: "I love it" }, { lm: lm(false) });
    expect(r.sentiment).toBe("positive");
    expect(seen[0]).toMatchObject({ provider, usage: { inputTokens: 11, outputTokens: 6 }, cached: false });
    expect(seen[0]!.content).toContain("and some chatter");
    // StrategyInterface's default useStructuredOutputs follows the LM: Enhanced Prompting here.
    expectEnhancedPrompting(fake.requests[0]!);
  });
});

describe("LM as the global model", () => {
  it("serves Predict through configure((c) => c.lm = new LM(...))", async () => {
    configure((c) => {
      c.lm = new LM("ollama/llama3.2:3b", { baseURL: fake.url });
    });
    fake.reply(JSON.stringify(answer));
    const r = await new Predict(Classify).call({ sentence: "I love it" });
    expect(r.sentiment).toBe("positive");
    expect(fake.requests).toHaveLength(1);
  });
});

describe("OpenAI strict structured output", () => {
  class Label extends Signature {
    static override description = "Label a sentence.";
    static override input = { sentence: z.string() };
    static override output = {
      sentiment: z.enum(["positive", "negative"]),
      tags: z.array(z.object({ name: z.string(), weight: z.number().optional() })),
      note: z.string().optional(),
    };
  }
  const lm = () => lmFor("openai", fake, { structuredOutputs: true });
  const fallbacks: TypelmEvent[] = [];
  let off: () => void = () => undefined;
  beforeEach(() => {
    fallbacks.length = 0;
    off = Instrumentation.subscribe("lm.structured.fallback", (e) => fallbacks.push(e));
  });
  afterEach(() => off());

  it("sends strict: true with every property required, optional ones nullable, and closed objects", async () => {
    fake.reply({ sentiment: "positive", tags: [{ name: "joy", weight: null }], note: null });
    const r = await new Predict(Label).call({ sentence: "I love it" }, { lm: lm() });
    expect(fake.requests[0]!.body.response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "Label",
        strict: true,
        schema: {
          type: "object",
          properties: {
            sentiment: { type: "string", enum: ["positive", "negative"] },
            tags: {
              type: "array",
              items: {
                type: "object",
                properties: { name: { type: "string" }, weight: { type: ["number", "null"] } },
                required: ["name", "weight"],
                additionalProperties: false,
              },
            },
            note: { type: ["string", "null"] },
          },
          required: ["sentiment", "tags", "note"],
          additionalProperties: false,
        },
      },
    });
    expect(fallbacks).toEqual([]);
    expect(r.sentiment).toBe("positive");
    expect(r.note ?? null).toBeNull();
  });

  it("falls back to strict: false for a record, which strict mode cannot express, and says so at debug level", async () => {
    const lines = captureLogLines();
    fake.reply(answer);
    const r = await new Predict(Classify).call({ sentence: "I love it" }, { lm: lm() });
    const format = fake.requests[0]!.body.response_format;
    expect(format).toEqual({ type: "json_schema", json_schema: { name: "Classify", strict: false, schema: CLASSIFY_SCHEMA } });
    expect(fallbacks.map((e) => e.payload)).toEqual([
      expect.objectContaining({
        provider: "openai", model: "gpt-4o-mini", schema: "Classify", strict: false,
        reason: "/properties/scores: a record (additionalProperties is a value schema); strict mode needs additionalProperties: false",
      }),
    ]);
    expect(lines.filter((l) => l.includes("lm.structured.fallback"))).toEqual([expect.stringContaining(" DEBUG lm.structured.fallback")]);
    expect(r.scores).toEqual({ joy: 0.8 });
  });
});
