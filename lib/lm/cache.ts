import { nodeCrypto } from "../load-sync.js";
import { shownUrl } from "../instrument/redact.js";
import { responseCacheSite } from "./cache-impl.js";
import type { ResponseCacheRun } from "./cache-run.js";
import type { CacheOptions, ChatMessage, JsonSchema, ReasoningOption, TokenUsage } from "./types.js";

export type { CacheOptions } from "./types.js";
export { cacheKey, cacheRequestJson } from "./cache-impl.js";

/** Everything that decides a reply, and nothing else: never the API key or headers. */
export interface CacheKeyParts {
  provider: string;
  /**
   * The server asked (`endpointId` of the resolved base URL): two OpenAI-compatible servers, or two
   * Ollama hosts, serving a model of the same name are different models.
   */
  endpoint: string;
  model: string;
  messages: ChatMessage[];
  temperature: number | undefined;
  maxTokens: number | undefined;
  responseSchema: { name: string; schema: JsonSchema } | undefined;
  /** The request's `rolloutId`; when absent the key is exactly that of a request without one. */
  rolloutId?: string | number | undefined;
  /** The LM's reasoning setting; when absent the key is exactly that of an LM without one. */
  reasoning?: ReasoningOption | undefined;
}

export interface CachedReply {
  content: string;
  usage: TokenUsage;
  finishReason: string | undefined;
}

/**
 * How a base URL enters the key and the stored row: scheme, host and path, without a trailing `/`
 * (`shownUrl`, then normalised by the URL parser). Credentials a URL can carry (`user:pass@`, a
 * `?key=` query) are never written down; when present, a SHA-256 of the whole URL stands in for
 * them so that different URLs still get different keys.
 */
export function endpointId(baseURL: string): string {
  const hash = `sha256:${nodeCrypto().createHash("sha256").update(baseURL).digest("hex")}`;
  const shown = shownUrl(baseURL);
  let url: URL;
  try {
    url = new URL(shown);
  } catch {
    return hash;
  }
  const base = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
  return shown === baseURL ? base : `${base}#${hash}`;
}

/** A reply and whether it came without a provider call of this request (cache hit, or another caller's call). */
export interface CacheOutcome {
  reply: CachedReply;
  cached: boolean;
}

/**
 * Reply cache of one LM: an in-memory LRU in front of the `lm_cache` table of the SQLite store.
 * The file makes an experiment replayable by a later process; the LRU spares it repeated reads.
 */
export class ResponseCache {
  /** The file (or ":memory:"), or the database's URL without its credentials. */
  readonly path: string;
  readonly #maxEntries: number;
  /** Which in-flight calls this cache may join: same file, or (":memory:", private) only its own. */
  readonly #scope: string;
  /** The file, or the database URL as configured (with its credentials). */
  readonly #location: string;
  /** The lookups, the LRU and the table, loaded at the first read or write (cache-run.ts). */
  #run: Promise<ResponseCacheRun> | undefined;

  /** `path` is resolved by the caller (the LM reads the configured store path), so this layer reads no configuration. */
  constructor(options: CacheOptions & { path: string }) {
    const site = responseCacheSite(options.path);
    this.#location = site.location;
    this.path = site.path;
    this.#maxEntries = options.maxEntries ?? 1000;
    this.#scope = site.scope;
  }

  /**
   * The cached reply for `key`, else the reply of an identical call already in flight, else `call()`'s
   * reply, stored only when complete (a cut-off or refused reply is not). A failed call fails every
   * caller waiting on it, and nothing is stored.
   */
  getOrCall(key: string, parts: CacheKeyParts, requestJson: string, call: () => Promise<CachedReply>): Promise<CacheOutcome> {
    return this.#work().then((run) => run.getOrCall(key, parts, requestJson, call));
  }

  /** The cached reply for `key` (from memory, else the table), or undefined. */
  async get(key: string): Promise<CachedReply | undefined> {
    return (await this.#work()).get(key);
  }

  /** Stores a complete reply; a cut-off or refused one is not stored, so the next call asks again. */
  async set(key: string, parts: CacheKeyParts, requestJson: string, reply: CachedReply): Promise<void> {
    return (await this.#work()).set(key, parts, requestJson, reply);
  }

  #work(): Promise<ResponseCacheRun> {
    return (this.#run ??= import("./cache-run.js").then((m) => new m.ResponseCacheRun(this.#location, this.path, this.#scope, this.#maxEntries)));
  }
}
