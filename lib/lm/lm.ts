import { configuredLabUrl, configuredStorePath, globalConfig } from "../config.js";
import { ConfigurationError, LMError } from "../errors.js";
import { redactString, registerSecret, shownUrl } from "../instrument/redact.js";
import { BaseLM, type BaseLMOptions } from "./base.js";
import type { BatchClientOptions } from "./batch.js";
import { currentBatchRound, PendingBatchRequest } from "./batch-scope.js";
import { cacheKey, cacheRequestJson, endpointId, ResponseCache, type CacheKeyParts, type CacheOptions } from "./cache.js";
import { configurePolicy, currentPolicy, resetPolicy, type LMPolicy } from "./policy.js";
import { estimateCost } from "./prices.js";
import { loadProvider, PROVIDER_INFO, type ProviderInfo } from "./providers/info.js";
import type { Provider, ProviderReply } from "./providers/index.js";
import { callProvider } from "./provider-call.js";
import { replayText } from "./stream-text.js";
import type { ChatOptions, LMRequest, LMResponse, ReasoningOption } from "./types.js";
import { checkReasoning } from "./reasoning.js";

/** Options of `new LM(id, options)`: key, server, response cache, and the prompt and sampling settings every LM has. */
export interface LMOptions extends BaseLMOptions {
  /** Read from `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` when omitted; Ollama needs none. */
  apiKey?: string;
  /** Another server speaking the provider's API (OpenAI-compatible servers, an Ollama host). */
  baseURL?: string;
  /** Answer identical requests from memory and the SQLite store: `true` or `{ path }`. Off by default. */
  cache?: boolean | CacheOptions;
  /**
   * The model's reasoning: `{ effort: "low" | "medium" | "high" }` or `{ budgetTokens }` (at least
   * 1024), sent as OpenAI `reasoning_effort`, Anthropic `thinking` (an effort becomes a budget of
   * 1024 / 4096 / 16384 tokens) or Ollama `think`. Part of the response cache key.
   */
  reasoning?: ReasoningOption;
  /** Marks the static prefix of each prompt (system text and demo turns) as cacheable where the provider needs it (Anthropic `cache_control`). */
  promptCache?: boolean;
}

export type { LMPolicy } from "./policy.js";

/**
 * A language model behind a provider's official SDK: `new LM("openai/gpt-4o-mini")`,
 * `new LM("anthropic/claude-sonnet-4-20250514")`, `new LM("ollama/llama3.2:3b")`.
 * Every call goes through one retry/timeout policy (`LM.configure`), reports token usage and an
 * estimated cost, and can be answered from a response cache.
 */
export class LM extends BaseLM {
  readonly provider: string;
  readonly model: string;
  readonly #definition: ProviderInfo;
  // Private fields: the key never shows up in `console.log(lm)`, JSON or a stack of properties.
  readonly #apiKey: string | undefined;
  /** Resolved at construction (option, environment, default), so calls and cache keys agree on the server. */
  readonly #baseURL: string;
  /** The server as the cache key names it (computed once: it is part of every cached call's key). */
  readonly #endpoint: string;
  /** The server as messages name it: scheme, host, port and path, never credentials. */
  readonly #shownEndpoint: string;
  /** The provider, built at the first call (its module loads then). */
  #client: Promise<Provider> | undefined;
  readonly #cacheOption: boolean | CacheOptions | undefined;
  #cache: ResponseCache | undefined;
  #cacheSetting: true | CacheOptions | undefined;
  /** The reasoning setting, checked at construction. */
  readonly reasoning: ReasoningOption | undefined;
  /** Whether the static prefix is marked cacheable (Anthropic). */
  readonly promptCache: boolean;

  /** Sets the retry/timeout policy of every LM (seconds): `httpTimeout`, `maxRetries`, `retryDelay`. */
  static configure(fn: (config: LMPolicy) => void): void {
    configurePolicy(fn);
  }

  /** Restores the default policy (httpTimeout 60 s, maxRetries 3, retryDelay 1 s). */
  static resetConfiguration(): void {
    resetPolicy();
  }

  /** The current retry/timeout policy. */
  static get configuration(): Readonly<LMPolicy> {
    return { ...currentPolicy() };
  }

  constructor(id: string, options: LMOptions = {}) {
    super(options);
    // Before the id is read: a message about a bad id must not echo a key pasted into it.
    registerSecret(options.apiKey);
    for (const known of Object.values(PROVIDER_INFO)) if (known.apiKeyEnv) registerSecret(process.env[known.apiKeyEnv]);
    const { provider, model, definition } = parseId(id);
    this.provider = provider;
    this.model = model;
    this.#definition = definition;
    this.#baseURL = definition.resolveBaseURL(options.baseURL);
    this.#endpoint = endpointId(this.#baseURL);
    this.#shownEndpoint = shownUrl(this.#baseURL);
    registerSecret(urlPassword(this.#baseURL));
    const apiKey = options.apiKey ?? (definition.apiKeyEnv ? process.env[definition.apiKeyEnv] : undefined);
    if (definition.apiKeyEnv !== undefined && !apiKey) {
      throw new ConfigurationError(
        `LM "${id}": no API key for ${provider}. Set ${definition.apiKeyEnv} in the environment or pass { apiKey } to new LM(...).`,
      );
    }
    this.#apiKey = apiKey || undefined;
    this.#cacheOption = options.cache;
    if (options.reasoning !== undefined && definition.capabilities?.reasoning === false) {
      throw new ConfigurationError(`LM "${id}": ${provider} takes no reasoning setting on its OpenAI-compatible endpoint; leave reasoning unset`);
    }
    this.reasoning = checkReasoning(id, provider, options.reasoning);
    this.promptCache = options.promptCache === true;
  }

  /** Loads the provider's module and builds the provider; a failed load is not kept, so the next call tries again. */
  #newClient(): Promise<Provider> {
    const client = loadProvider(this.provider).then((d) => d.create({ apiKey: this.#apiKey, baseURL: this.#baseURL }));
    client.catch(() => { if (this.#client === client) this.#client = undefined; });
    return client;
  }

  /**
   * The response cache in force: the LM's own `cache` option, else the global `configure((c) => c.cache = ...)`,
   * read at call time so a cache configured after the LM was built still applies.
   */
  #cacheInForce(): ResponseCache | undefined {
    const setting = this.#cacheOption ?? globalConfig.cache;
    if (!setting) return undefined;
    if (this.#cache === undefined || this.#cacheSetting !== setting) {
      const options = setting === true ? {} : setting;
      this.#cache = new ResponseCache({ ...options, path: options.path ?? configuredLabUrl() ?? configuredStorePath() });
      this.#cacheSetting = setting;
    }
    return this.#cache;
  }

  /**
   * OpenAI, Anthropic and Ollama have a native structured output (json_schema, forced tool use,
   * `format`); a profile has one when its flag says so. Anthropic with `reasoning` has none here:
   * its API refuses a forced tool call while thinking, so predictors use Enhanced Prompting.
   */
  supportsStructuredOutputs(): boolean {
    if (this.provider === "anthropic" && this.reasoning !== undefined) return false;
    return this.#definition.capabilities?.structuredOutputs ?? true;
  }

  /** Whether replies are cached, and where. */
  get cachePath(): string | undefined {
    return this.#cacheInForce()?.path;
  }

  /** A batch client with this LM's key, server and settings (loaded on first use). */
  async #batchClient(temperature: number | undefined, maxTokens: number | undefined, options: Pick<BatchClientOptions, "pollInterval" | "maxRequestsPerBatch">) {
    const { BatchClient } = await import("./batch.js");
    return new BatchClient(this.id, {
      ...(this.#apiKey === undefined ? {} : { apiKey: this.#apiKey }), baseURL: this.#baseURL,
      ...(temperature === undefined ? {} : { temperature }), ...(maxTokens === undefined ? {} : { maxTokens }), ...options,
    });
  }

  /**
   * One call. Inside a batch round: the reply a batch brought, else the response cache, else the
   * request waits for the next batch. Otherwise: the response cache when it is on, else the provider,
   * under the retry and timeout policy. With `options.onDelta` the provider call streams, and a
   * cached reply is replayed as a stream; a streamed call does not join (nor lead) in-flight
   * coalescing of identical calls, whose callers would otherwise wait for the whole reply.
   */
  protected async complete(request: LMRequest, options: ChatOptions = {}): Promise<LMResponse> {
    const { provider, model } = this;
    const capabilities = this.#definition.capabilities;
    // A profile's refusals come before any request (and before the cache: a reply must not hide them).
    if (request.responseSchema !== undefined && capabilities?.structuredOutputs === false) {
      throw new ConfigurationError(`LM "${this.id}": ${provider} has no native structured output in typelm; use structuredOutputs: false (Enhanced Prompting), which Strategy.Strict picks for it`);
    }
    if (options.onDelta !== undefined && capabilities?.streaming === false) {
      throw new ConfigurationError(`LM "${this.id}": ${provider} does not stream; call without onDelta`);
    }
    const temperature = request.temperature ?? this.temperature;
    const maxTokens = request.maxTokens ?? this.maxTokens;
    // `request.rolloutId` is not a provider parameter: it reaches the cache key below and nothing else.
    // Media the provider cannot take is refused here, before the cache, a batch or the provider sees the request.
    if (request.messages.some((m) => m.media !== undefined && m.media.length > 0)) {
      (await import("./media-check.js")).checkRequestMedia(provider, model, request.messages);
    }

    const round = currentBatchRound();
    let viaBatch = false;
    const parts: CacheKeyParts = {
      provider, endpoint: this.#endpoint, model, messages: request.messages, temperature, maxTokens,
      responseSchema: request.responseSchema,
      // Only when set: without it the key is byte-for-byte that of earlier versions. Its own key
      // also keeps calls of different rollouts out of each other's in-flight coalescing.
      ...(request.rolloutId === undefined ? {} : { rolloutId: request.rolloutId }),
      // Only when set, likewise: a reasoning model answers differently at another effort.
      ...(this.reasoning === undefined ? {} : { reasoning: this.reasoning }),
    };
    const extra = { ...(this.reasoning === undefined ? {} : { reasoning: this.reasoning }), ...(this.promptCache ? { promptCache: true } : {}) };
    const call = async (): Promise<ProviderReply> => {
      const client = await (this.#client ??= this.#newClient());
      // Loading the SDK is not part of any attempt: a slow first import must not count as a timeout.
      await client.ready();
      return callProvider(client, request, { model, temperature, maxTokens, ...extra }, { provider, model, endpoint: this.#shownEndpoint }, options);
    };

    const cache = this.#cacheInForce();
    let reply: ProviderReply;
    if (request.tools !== undefined || request.toolExchanges !== undefined) {
      // Native tool turns go to the provider live: neither the response cache nor a batch round keys on tools yet.
      reply = await call();
    } else if (round !== undefined) {
      // Inside a batch round: the reply a batch of this run brought (paid in this run, so it is
      // priced each time an example's final run uses it), else the cache (replies of earlier runs),
      // else the request waits for the next batch. No in-flight coalescing here: every example that
      // needs a request must see it is waiting, so it runs again once the batch is back.
      const requestJson = cacheRequestJson(parts);
      const key = cacheKey(requestJson);
      const answer = round.answer(key);
      if (answer === undefined) {
        const hit = cache === undefined ? undefined : await cache.get(key);
        if (hit !== undefined) return { ...hit, provider, model, estimatedCost: 0, cached: true };
        round.collect({
          key, lm: { provider, model, endpoint: this.#shownEndpoint }, request, settings: { model, temperature, maxTokens, ...extra },
          client: (options) => this.#batchClient(temperature, maxTokens, options),
        });
        throw new PendingBatchRequest(key);
      }
      if (!answer.ok) throw new LMError(answer.error, { retryable: false, provider });
      reply = answer.reply;
      viaBatch = true;
      // Batch replies enter the LM cache like live ones.
      if (cache !== undefined) await cache.set(key, parts, requestJson, reply);
    } else if (cache === undefined) {
      reply = await call();
    } else if (options.onDelta !== undefined) {
      const requestJson = cacheRequestJson(parts);
      const key = cacheKey(requestJson);
      const hit = await cache.get(key);
      if (hit !== undefined) {
        await replayText(hit.content, options.onDelta, {}, options.signal);
        return { ...hit, provider, model, estimatedCost: 0, cached: true };
      }
      reply = await call();
      await cache.set(key, parts, requestJson, reply);
    } else {
      const requestJson = cacheRequestJson(parts);
      const outcome = await cache.getOrCall(cacheKey(requestJson), parts, requestJson, call);
      reply = outcome.reply;
      if (outcome.cached) return { ...reply, provider, model, estimatedCost: 0, cached: true };
    }
    return {
      content: reply.content,
      usage: reply.usage,
      provider,
      model,
      // A reply that came through a batch is priced at the batch price.
      estimatedCost: estimateCost(provider, model, reply.usage, { batch: viaBatch }),
      cached: false,
      finishReason: reply.finishReason,
      ...(reply.toolCalls === undefined ? {} : { toolCalls: reply.toolCalls }),
    };
  }

  /** All three providers take native tool definitions (OpenAI and Ollama `tools`, Anthropic `tools`). */
  supportsToolCalling(): boolean {
    return true;
  }
}

/** The password a base URL carries (`http://user:pw@host`), so it is masked wherever it turns up (if 8+ characters). */
function urlPassword(baseURL: string): string | undefined {
  try {
    return decodeURIComponent(new URL(baseURL).password) || undefined;
  } catch {
    return undefined;
  }
}

/** Splits `provider/model` on the first `/` only: `openai/ft:gpt-4o:org/x` keeps `ft:gpt-4o:org/x`. */
function parseId(id: unknown): { provider: string; model: string; definition: ProviderInfo } {
  const valid = Object.keys(PROVIDER_INFO).join(", ");
  const expected = `expected "<provider>/<model>" with provider one of ${valid} (e.g. "openai/gpt-4o-mini")`;
  if (typeof id !== "string") throw new ConfigurationError(`LM id: ${expected}; received ${typeof id}`);
  // The id is echoed back, and it may hold a key passed in the wrong place.
  const shown = JSON.stringify(redactString(id));
  const slash = id.indexOf("/");
  const provider = slash < 0 ? "" : id.slice(0, slash).trim();
  const model = slash < 0 ? "" : id.slice(slash + 1).trim();
  if (provider === "" || model === "") {
    throw new ConfigurationError(`LM id ${shown}: ${expected}; the provider or model part is missing`);
  }
  const definition = PROVIDER_INFO[provider];
  if (definition === undefined) {
    throw new ConfigurationError(`LM id ${shown}: unknown provider "${redactString(provider)}"; valid providers: ${valid}`);
  }
  return { provider, model, definition };
}
