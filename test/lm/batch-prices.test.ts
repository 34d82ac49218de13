import { describe, expect, it } from "@jest/globals";
import { estimateCost, priceOf } from "../../lib/lm/prices.js";

const usage = { inputTokens: 123_457, outputTokens: 9_871 };

describe("batch prices", () => {
  it.each([
    ["openai", "gpt-4o-mini"],
    ["openai", "gpt-4.1-2025-04-14"],
    ["openai", "o3-mini"],
    ["anthropic", "claude-sonnet-4-20250514"],
    ["anthropic", "claude-3-5-haiku-20241022"],
    ["anthropic", "claude-opus-4-1"],
  ])("a %s/%s batch request costs exactly half the standard one on the same usage", (provider, model) => {
    const standard = estimateCost(provider, model, usage);
    const batch = estimateCost(provider, model, usage, { batch: true });
    expect(standard).not.toBeNull();
    expect(standard).toBeGreaterThan(0);
    expect(batch).toBe(standard! / 2);
  });

  it("halves the input and output prices of the table, and leaves the standard price as it was", () => {
    expect(priceOf("openai", "gpt-4o", { batch: true })).toEqual({ input: 1.25, output: 5, cacheRead: 0.625 });
    expect(priceOf("anthropic", "claude-sonnet-4", { batch: true })).toEqual({ input: 1.5, output: 7.5, cacheRead: 0.15, cacheWrite: 1.875 });
    expect(priceOf("openai", "gpt-4o")).toMatchObject({ input: 2.5, output: 10 });
    expect(priceOf("openai", "gpt-4o", { batch: false })).toMatchObject({ input: 2.5, output: 10 });
    expect(estimateCost("openai", "gpt-4o-mini", { inputTokens: 1_000_000, outputTokens: 1_000_000 }, { batch: true })).toBe(0.375);
  });

  it("stays null for a model without a price", () => {
    expect(estimateCost("openai", "ft:gpt-4o-mini:org::abc", usage, { batch: true })).toBeNull();
    expect(estimateCost("anthropic", "claude-unknown", usage, { batch: true })).toBeNull();
    expect(priceOf("openai", "my-local-model", { batch: true })).toBeUndefined();
  });

  it("keeps a local Ollama model free", () => {
    expect(estimateCost("ollama", "llama3.2:3b", usage, { batch: true })).toBe(0);
  });
});
