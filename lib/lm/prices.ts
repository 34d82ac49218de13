import type { TokenUsage } from "./types.js";

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

/**
 * Public list prices, USD per million input / output tokens, as of 2026-11 (standard tier: no
 * prompt-caching discount, no long-context surcharge). Prices change: treat the estimate as a guide,
 * not an invoice. Dated snapshots (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`) are priced as
 * their base name; fine-tunes and unknown models are not priced (`null`).
 *
 * Batch tier (`{ batch: true }`), as of 2026-11: the OpenAI Batch API charges 50% of these prices
 * for input and output tokens, and Anthropic's Message Batches 50% of them too, for every model in
 * the table (see `BATCH_DISCOUNT`).
 */
const PRICES: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>> = {
  openai: {
    "gpt-4o-mini": { input: 0.15, output: 0.6 },
    "gpt-4o": { input: 2.5, output: 10 },
    "gpt-4.1": { input: 2, output: 8 },
    "gpt-4.1-mini": { input: 0.4, output: 1.6 },
    "gpt-4.1-nano": { input: 0.1, output: 0.4 },
    "gpt-4-turbo": { input: 10, output: 30 },
    "gpt-3.5-turbo": { input: 0.5, output: 1.5 },
    "gpt-5": { input: 1.25, output: 10 },
    "gpt-5-mini": { input: 0.25, output: 2 },
    "gpt-5-nano": { input: 0.05, output: 0.4 },
    "o1": { input: 15, output: 60 },
    "o3": { input: 2, output: 8 },
    "o3-mini": { input: 1.1, output: 4.4 },
    "o4-mini": { input: 1.1, output: 4.4 },
  },
  anthropic: {
    "claude-3-haiku": { input: 0.25, output: 1.25 },
    "claude-3-opus": { input: 15, output: 75 },
    "claude-3-5-haiku": { input: 0.8, output: 4 },
    "claude-3-5-sonnet": { input: 3, output: 15 },
    "claude-3-7-sonnet": { input: 3, output: 15 },
    "claude-sonnet-4": { input: 3, output: 15 },
    "claude-sonnet-4-5": { input: 3, output: 15 },
    "claude-opus-4": { input: 15, output: 75 },
    "claude-opus-4-1": { input: 15, output: 75 },
    "claude-opus-4-5": { input: 5, output: 25 },
    "claude-haiku-4-5": { input: 1, output: 5 },
  },
};

/**
 * Share of the standard price a provider's batch service charges, as of 2026-11: OpenAI Batch API
 * 50% off input and output; Anthropic Message Batches 50% off. A provider missing here has no batch
 * service, so no batch price.
 */
const BATCH_DISCOUNT: Readonly<Record<string, number>> = { openai: 0.5, anthropic: 0.5 };

/** Which price applies: the standard one, or the provider's batch service's (`batch: true`). */
export interface PriceOptions {
  batch?: boolean;
}

/** Providers that run on the user's own machine: no charge per token. */
const LOCAL_PROVIDERS = new Set(["ollama"]);

/** What may follow a priced name and still be the same model: a date snapshot or `-latest`. */
const SNAPSHOT_SUFFIX = /^-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$/;

/**
 * The list price of `provider/model` (the batch price with `{ batch: true }`), or undefined when it
 * is not in the table or the provider has no batch service.
 */
export function priceOf(provider: string, model: string, options: PriceOptions = {}): ModelPrice | undefined {
  const price = standardPriceOf(provider, model);
  if (price === undefined || !options.batch) return price;
  const share = BATCH_DISCOUNT[provider];
  return share === undefined ? undefined : { input: price.input * share, output: price.output * share };
}

function standardPriceOf(provider: string, model: string): ModelPrice | undefined {
  const table = PRICES[provider];
  if (table === undefined) return undefined;
  const exact = table[model];
  if (exact !== undefined) return exact;
  // Longest matching base name wins, so `gpt-4o-mini-2024-07-18` is not priced as `gpt-4o`.
  let best: { name: string; price: ModelPrice } | undefined;
  for (const [name, price] of Object.entries(table)) {
    if (!model.startsWith(name) || !SNAPSHOT_SUFFIX.test(model.slice(name.length))) continue;
    if (best === undefined || name.length > best.name.length) best = { name, price };
  }
  return best?.price;
}

/**
 * Estimated USD cost of one call: 0 for local providers, null when the model's price is unknown.
 * `{ batch: true }` prices it as a request of the provider's batch service.
 */
export function estimateCost(provider: string, model: string, usage: TokenUsage, options: PriceOptions = {}): number | null {
  if (LOCAL_PROVIDERS.has(provider)) return 0;
  const price = priceOf(provider, model, options);
  if (price === undefined) return null;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}
