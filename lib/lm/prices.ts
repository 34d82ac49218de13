import type { TokenUsage } from "./types.js";

/**
 * USD per million tokens. `cacheRead` (input tokens read from the prompt cache), `cacheWrite` (input
 * tokens written to it) and `reasoning` (reasoning output tokens) are given where they differ from
 * `input` / `input` / `output`, which they default to.
 */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

/** An OpenAI model's price: cached input at `cacheRead`, no charge for writing the cache, reasoning at the output rate. */
const gpt = (input: number, output: number, cacheRead?: number): ModelPrice => (cacheRead === undefined ? { input, output } : { input, output, cacheRead });
/** A Claude model's price: cache reads at 0.1x input, cache writes (5-minute) at 1.25x input, thinking at the output rate. */
const claude = (input: number, output: number): ModelPrice => ({ input, output, cacheRead: input / 10, cacheWrite: input * 1.25 });

/**
 * Public list prices, USD per million input / output tokens, as of 2026-11 (standard tier, no
 * long-context surcharge), with the prompt-cache rates: OpenAI's cached input (written for free),
 * Anthropic's cache reads (0.1x input) and 5-minute cache writes (1.25x input). Reasoning tokens are
 * output tokens at the output rate for both. Prices change: treat the estimate as a guide,
 * not an invoice. Dated snapshots (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`) are priced as
 * their base name; fine-tunes and unknown models are not priced (`null`).
 *
 * Batch tier (`{ batch: true }`), as of 2026-11: the OpenAI Batch API charges 50% of these prices
 * for input and output tokens, and Anthropic's Message Batches 50% of them too, for every model in
 * the table (see `BATCH_DISCOUNT`).
 */
const PRICES: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>> = {
  openai: {
    "gpt-4o-mini": gpt(0.15, 0.6, 0.075),
    "gpt-4o": gpt(2.5, 10, 1.25),
    "gpt-4.1": gpt(2, 8, 0.5),
    "gpt-4.1-mini": gpt(0.4, 1.6, 0.1),
    "gpt-4.1-nano": gpt(0.1, 0.4, 0.025),
    "gpt-4-turbo": gpt(10, 30),
    "gpt-3.5-turbo": gpt(0.5, 1.5),
    "gpt-5": gpt(1.25, 10, 0.125),
    "gpt-5-mini": gpt(0.25, 2, 0.025),
    "gpt-5-nano": gpt(0.05, 0.4, 0.005),
    "o1": gpt(15, 60, 7.5),
    "o3": gpt(2, 8, 0.5),
    "o3-mini": gpt(1.1, 4.4, 0.55),
    "o4-mini": gpt(1.1, 4.4, 0.275),
  },
  anthropic: {
    "claude-3-haiku": claude(0.25, 1.25),
    "claude-3-opus": claude(15, 75),
    "claude-3-5-haiku": claude(0.8, 4),
    "claude-3-5-sonnet": claude(3, 15),
    "claude-3-7-sonnet": claude(3, 15),
    "claude-sonnet-4": claude(3, 15),
    "claude-sonnet-4-5": claude(3, 15),
    "claude-opus-4": claude(15, 75),
    "claude-opus-4-1": claude(15, 75),
    "claude-opus-4-5": claude(5, 25),
    "claude-haiku-4-5": claude(1, 5),
  },
  // Provider profiles (2026-11). Gemini: ai.google.dev/gemini-api/docs/pricing as quoted by public
  // price guides read 2026-11 (prompts up to 200k tokens; context-cache reads at 10% of input).
  gemini: {
    "gemini-2.5-pro": { input: 1.25, output: 10, cacheRead: 0.125 },
    "gemini-2.5-flash": { input: 0.3, output: 2.5, cacheRead: 0.03 },
    "gemini-2.5-flash-lite": { input: 0.1, output: 0.4, cacheRead: 0.01 },
  },
  // Groq: groq.com/pricing as quoted by public guides read 2026-11 (gpt-oss-120b's cache hits at $0.075).
  groq: {
    "openai/gpt-oss-120b": gpt(0.15, 0.6, 0.075),
    "llama-3.3-70b-versatile": gpt(0.59, 0.79),
    "llama-3.1-8b-instant": gpt(0.05, 0.08),
  },
  // Together: together.ai/pricing as listed by a public model library read 2026-11 (Llama 70B Turbo, $0.88 both ways).
  together: {
    "meta-llama/Llama-3.3-70B-Instruct-Turbo": gpt(0.88, 0.88),
    "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo": gpt(0.88, 0.88),
  },
};

/**
 * OpenRouter "passes through the pricing of the underlying providers" (openrouter.ai/docs/faq, read
 * 2026-11), so `openrouter/<vendor>/<model>` is priced as the vendor's model in this table (`google`
 * is Gemini; OpenRouter writes Claude versions with dots: `claude-sonnet-4.5` is `claude-sonnet-4-5`).
 */
function openrouterPrice(model: string): ModelPrice | undefined {
  const slash = model.indexOf("/");
  if (slash < 0) return undefined;
  const vendor = model.slice(0, slash);
  // A variant (`:free`, `:nitro`) has its own price: not in this table.
  const name = model.slice(slash + 1);
  if (name.includes(":")) return undefined;
  if (vendor === "openai") return standardPriceOf("openai", name);
  if (vendor === "anthropic") return standardPriceOf("anthropic", name.replace(/(\d)\.(\d)/g, "$1-$2"));
  if (vendor === "google") return standardPriceOf("gemini", name);
  return undefined;
}

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
const LOCAL_PROVIDERS = new Set(["ollama", "vllm", "lmstudio"]);

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
  if (share === undefined) return undefined;
  const scaled: ModelPrice = { input: price.input * share, output: price.output * share };
  if (price.cacheRead !== undefined) scaled.cacheRead = price.cacheRead * share;
  if (price.cacheWrite !== undefined) scaled.cacheWrite = price.cacheWrite * share;
  if (price.reasoning !== undefined) scaled.reasoning = price.reasoning * share;
  return scaled;
}

function standardPriceOf(provider: string, model: string): ModelPrice | undefined {
  if (provider === "openrouter") return openrouterPrice(model);
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

/** Token counts `estimateCost` takes: input and output, with the cache and reasoning breakdowns when known (0 otherwise). */
export type PricedUsage = Pick<TokenUsage, "inputTokens" | "outputTokens"> & Partial<TokenUsage>;

/**
 * Estimated USD cost of one call: 0 for local providers, null when the model's price is unknown.
 * Each kind of token is priced at its own rate: cache reads at `cacheRead`, cache writes at
 * `cacheWrite`, the rest of the input at `input`; reasoning tokens at `reasoning`, the rest of the
 * output at `output`. `{ batch: true }` prices it as a request of the provider's batch service.
 */
export function estimateCost(provider: string, model: string, usage: PricedUsage, options: PriceOptions = {}): number | null {
  if (LOCAL_PROVIDERS.has(provider)) return 0;
  const price = priceOf(provider, model, options);
  if (price === undefined) return null;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const reasoning = usage.reasoningTokens ?? 0;
  const plainInput = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  const plainOutput = Math.max(0, usage.outputTokens - reasoning);
  return (
    plainInput * price.input + cacheRead * (price.cacheRead ?? price.input) + cacheWrite * (price.cacheWrite ?? price.input) +
    plainOutput * price.output + reasoning * (price.reasoning ?? price.output)
  ) / 1_000_000;
}

/** What the cache reads of `usage` saved: their price at the input rate minus at the cache-read rate (USD; null when unpriced). */
export function cacheSavings(provider: string, model: string, usage: PricedUsage, options: PriceOptions = {}): number | null {
  if (LOCAL_PROVIDERS.has(provider)) return 0;
  const price = priceOf(provider, model, options);
  if (price === undefined) return null;
  return ((usage.cacheReadTokens ?? 0) * (price.input - (price.cacheRead ?? price.input))) / 1_000_000;
}
