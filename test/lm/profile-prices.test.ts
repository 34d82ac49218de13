// Prices of the provider profiles' common models, each worked out by hand from the price table's
// sources (USD per million tokens): Gemini and Groq with their cache-read rates, OpenRouter at its
// vendors' prices, vLLM and LM Studio free, anything else unpriced (null), and no batch price.
import { describe, expect, it } from "@jest/globals";
import { estimateCost, priceOf } from "../../lib/lm/prices.js";

const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 500_000 };

describe("profile prices", () => {
  it("prices Gemini, Groq and Together models at their own rates, cache reads included", () => {
    // gemini-2.5-flash: 500k x 0.30 + 500k x 0.03 + 1M x 2.50
    expect(estimateCost("gemini", "gemini-2.5-flash", usage)).toBeCloseTo(0.15 + 0.015 + 2.5, 10);
    // gpt-oss-120b on Groq: 500k x 0.15 + 500k x 0.075 + 1M x 0.60
    expect(estimateCost("groq", "openai/gpt-oss-120b", usage)).toBeCloseTo(0.075 + 0.0375 + 0.6, 10);
    // No cache rate listed: every input token at 0.88.
    expect(estimateCost("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", usage)).toBeCloseTo(0.88 + 0.88, 10);
  });

  it("prices an OpenRouter model as its vendor's, Claude's dotted versions included, and not a :free variant", () => {
    expect(priceOf("openrouter", "openai/gpt-4o-mini")).toEqual({ input: 0.15, output: 0.6, cacheRead: 0.075 });
    expect(priceOf("openrouter", "anthropic/claude-sonnet-4.5")).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    expect(priceOf("openrouter", "google/gemini-2.5-pro")).toEqual({ input: 1.25, output: 10, cacheRead: 0.125 });
    expect(priceOf("openrouter", "meta-llama/llama-3.3-70b-instruct:free")).toBeUndefined();
    expect(priceOf("openrouter", "openai/gpt-4o-mini:free")).toBeUndefined();
    expect(estimateCost("openrouter", "mistralai/mistral-small", usage)).toBeNull();
  });

  it("charges nothing on vLLM and LM Studio, and null for an unknown model elsewhere", () => {
    expect(estimateCost("vllm", "anything", usage)).toBe(0);
    expect(estimateCost("lmstudio", "anything", usage)).toBe(0);
    expect(estimateCost("gemini", "gemini-9-ultra", usage)).toBeNull();
    expect(estimateCost("groq", "unknown-model", usage)).toBeNull();
  });

  it("has no batch price for a profile (no batch service)", () => {
    expect(priceOf("gemini", "gemini-2.5-flash", { batch: true })).toBeUndefined();
    expect(estimateCost("openrouter", "openai/gpt-4o-mini", usage, { batch: true })).toBeNull();
  });
});
