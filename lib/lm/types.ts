import type { SignatureClass } from "../signature/signature.js";
import type { ChatMessage, DataFormat, SchemaFormat } from "../prompt/formats.js";
import type { ToolCall, ToolDefinition, ToolExchange } from "./tool-calls.js";

// The prompt layer defines messages and formats; the LM layer sends them.
export type { ChatMessage, DataFormat, MediaAttachment, Role, SchemaFormat } from "../prompt/formats.js";

/** `cache: true` uses the lab store file (`c.lab.path`, else .typelm/lab.sqlite); `{ path }` another file (or ":memory:"). */
export interface CacheOptions {
  /** SQLite file; default `.typelm/lab.sqlite` in the working directory. */
  path?: string;
  /** Replies kept in the in-memory LRU in front of the file; default 1000. */
  maxEntries?: number;
}

/** A JSON Schema document (plain object). */
export type JsonSchema = Record<string, unknown>;

/** One request to a language model, as built by a predictor. */
export interface LMRequest {
  messages: ChatMessage[];
  /** The signature class being predicted (absent for free-form chat). */
  signature?: SignatureClass;
  /** The input values after defaults (absent for free-form chat). */
  inputs?: Record<string, unknown>;
  /**
   * When set, the provider is asked for native structured output matching this schema
   * (OpenAI json_schema, Anthropic tool/output format, Ollama `format`).
   */
  responseSchema?: { name: string; schema: JsonSchema };
  /** Per-call overrides of the LM's own settings. */
  temperature?: number;
  maxTokens?: number;
  /**
   * Makes this request distinct from an otherwise identical one with another (or no) `rolloutId`:
   * it enters the response cache key (only when set) and is never sent to the provider.
   */
  rolloutId?: string | number;
  /** Native tool calling: the functions the model may call (OpenAI `tools`, Anthropic `tools`, Ollama `tools`). */
  tools?: ToolDefinition[];
  /** Native tool calling: earlier assistant tool calls and their results, replayed in the provider's own form. */
  toolExchanges?: ToolExchange[];
}

/**
 * Tokens of one model call as the provider counted them (an estimate for the test doubles).
 * `inputTokens` is every prompt token, cached or not: it includes `cacheReadTokens` and
 * `cacheWriteTokens` (OpenAI's `prompt_tokens` already does; Anthropic's `input_tokens` does not, so
 * its cache counts are added). `outputTokens` includes `reasoningTokens`. The three breakdowns are 0
 * when the provider reports none.
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Output tokens spent on reasoning (OpenAI `reasoning_tokens`); 0 when not reported separately. */
  reasoningTokens: number;
  /** Input tokens read from the provider's prompt cache (priced at its cache-read rate). */
  cacheReadTokens: number;
  /** Input tokens written to the provider's prompt cache (Anthropic; priced at its cache-write rate). */
  cacheWriteTokens: number;
}

/** Reasoning setting of an LM: an effort level, or a budget of thinking tokens. */
export type ReasoningOption = { effort: "low" | "medium" | "high" } | { budgetTokens: number };

/** What a language model answered. */
export interface LMResponse {
  /** The reply text (for native structured output: the JSON text). */
  content: string;
  usage: TokenUsage;
  provider: string;
  model: string;
  /** USD; 0 for local models and cache hits; null when the model's price is unknown. */
  estimatedCost: number | null;
  /** True when the answer came from the response cache without a provider call. */
  cached: boolean;
  /** Provider-specific stop reason, when given. */
  finishReason?: string | undefined;
  /** Streamed calls: milliseconds from the request to the first text chunk (for a cache hit, to the first replayed chunk). */
  firstTokenMs?: number | undefined;
  /** Native tool calling: the tool calls the reply asked for (absent or empty when it made none). */
  toolCalls?: ToolCall[] | undefined;
}

/**
 * Options of one call. With `onDelta` the call streams: each piece of reply text is handed to
 * `onDelta` as it arrives, in order, and their concatenation equals the resolved `content`.
 * When `onDelta` throws, the provider request is aborted at once and `chat` rejects with what it
 * threw; when `signal` aborts, the request is aborted and `chat` rejects with an `AbortError`.
 * A model that cannot stream calls `onDelta` once with the whole reply.
 */
export interface ChatOptions {
  /** Aborts the call (and its provider request); the call then rejects with an `AbortError`. */
  signal?: AbortSignal | undefined;
  /** Streams the call: receives each piece of reply text as it arrives; throwing aborts the provider request. */
  onDelta?: ((text: string) => void) | undefined;
}

/** Settings every language model exposes to the predictors that use it. */
export interface LMSettings {
  schemaFormat: SchemaFormat;
  dataFormat: DataFormat;
  structuredOutputs: boolean;
  temperature: number | undefined;
  maxTokens: number | undefined;
}

/** Anything a predictor can call: `LM` for real providers and `ScriptedLM` for tests. */
export interface LanguageModel extends LMSettings {
  readonly provider: string;
  readonly model: string;
  /** `provider/model`. */
  readonly id: string;
  /** Whether this provider/model can produce native structured output for `responseSchema`. */
  supportsStructuredOutputs(): boolean;
  /** Whether this model takes native tool definitions (`LMRequest.tools`); absent means no (test doubles). */
  supportsToolCalling?(): boolean;
  /** Sends one request (messages, optional response schema and sampling) and resolves with the reply, its usage and estimated cost; streams it through `options.onDelta` when given. */
  chat(request: LMRequest, options?: ChatOptions): Promise<LMResponse>;
}
