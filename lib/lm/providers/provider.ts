import type { LMRequest, TokenUsage } from "../types.js";

/** The settings of one call, after per-call overrides and defaults are applied. */
export interface CallSettings {
  model: string;
  temperature: number | undefined;
  maxTokens: number | undefined;
  /** Time allowed for this attempt, in ms (the signal aborts when it runs out). */
  timeoutMs: number;
}

/** What a provider answered, before the LM adds cost, cache and event bookkeeping. */
export interface ProviderReply {
  content: string;
  usage: TokenUsage;
  finishReason: string | undefined;
}

/**
 * One provider behind its official SDK. `complete` makes exactly one HTTP request (the SDK's own
 * retries are off) and lets SDK errors propagate: the LM's retry policy classifies them.
 */
export interface Provider {
  /** Loads the SDK and builds the client; called before the first attempt's timer starts. */
  ready(): Promise<void>;
  complete(request: LMRequest, settings: CallSettings, signal: AbortSignal): Promise<ProviderReply>;
}

/** How the LM finds, configures and builds a provider. Adding a provider means one file and one line in `index.ts`. */
export interface ProviderDefinition {
  name: string;
  /** Environment variable holding the API key; absent when the provider needs none. */
  apiKeyEnv?: string;
  /**
   * The server a call goes to: `baseURL` when given, else the provider's environment variable or
   * default address. `create` receives this value, and the response cache keys on it.
   */
  resolveBaseURL(baseURL: string | undefined): string;
  /** Builds the provider; the SDK itself is loaded lazily on the first `complete`. */
  create(config: { apiKey: string | undefined; baseURL: string }): Provider;
}

/** A name the providers accept for a schema/tool: `^[a-zA-Z0-9_-]{1,64}$`. */
export function schemaName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return cleaned.length > 0 ? cleaned : "response";
}

/** The schema without its `$schema` marker, which tool and format parameters do not want. */
export function withoutMeta(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}
