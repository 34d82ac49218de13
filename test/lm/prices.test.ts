import { describe, expect, it } from "@jest/globals";
import { estimateCost, priceOf } from "../../lib/lm/prices.js";

describe("estimateCost", () => {
  it("prices a call from the per-million table", () => {
    expect(estimateCost("openai", "gpt-4o-mini", { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBeCloseTo(0.75, 10);
    expect(estimateCost("openai", "gpt-4o", { inputTokens: 2000, outputTokens: 500 })).toBeCloseTo(0.01, 10);
    expect(estimateCost("anthropic", "claude-sonnet-4", { inputTokens: 1000, outputTokens: 1000 })).toBeCloseTo(0.018, 10);
  });

  it("prices dated snapshots as their base model, preferring the longest name", () => {
    expect(priceOf("openai", "gpt-4o-mini-2024-07-18")).toEqual({ input: 0.15, output: 0.6, cacheRead: 0.075 });
    expect(priceOf("openai", "gpt-4o-2024-08-06")).toEqual({ input: 2.5, output: 10, cacheRead: 1.25 });
    expect(priceOf("openai", "gpt-4.1-nano-2025-04-14")).toMatchObject({ input: 0.1, output: 0.4 });
    expect(priceOf("openai", "o3-mini-2025-01-31")).toMatchObject({ input: 1.1, output: 4.4 });
    expect(priceOf("anthropic", "claude-3-5-haiku-20241022")).toMatchObject({ input: 0.8, output: 4 });
    expect(priceOf("anthropic", "claude-3-5-sonnet-latest")).toMatchObject({ input: 3, output: 15 });
    expect(priceOf("anthropic", "claude-sonnet-4-20250514")).toMatchObject({ input: 3, output: 15 });
    expect(priceOf("anthropic", "claude-opus-4-1-20250805")).toMatchObject({ input: 15, output: 75 });
    expect(priceOf("anthropic", "claude-haiku-4-5-20251001")).toMatchObject({ input: 1, output: 5 });
  });

  it("is 0 for Ollama whatever the model", () => {
    expect(estimateCost("ollama", "llama3.2:3b", { inputTokens: 10_000, outputTokens: 10_000 })).toBe(0);
  });

  it("is null for unknown models, fine-tunes and variants that are not snapshots", () => {
    expect(estimateCost("openai", "my-local-model", { inputTokens: 1, outputTokens: 1 })).toBeNull();
    expect(estimateCost("openai", "ft:gpt-4o-mini:org::abc", { inputTokens: 1, outputTokens: 1 })).toBeNull();
    expect(priceOf("openai", "gpt-4o-audio-preview")).toBeUndefined();
    expect(estimateCost("mistral", "large", { inputTokens: 1, outputTokens: 1 })).toBeNull();
  });
});
