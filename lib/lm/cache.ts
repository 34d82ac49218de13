import { createHash } from "node:crypto";
import { DEFAULT_STORE_PATH, openStore } from "../store/db.js";
import { LMCacheTable } from "../store/lm-cache.js";
import type { ChatMessage, JsonSchema, TokenUsage } from "./types.js";

/** `cache: true` uses the default store file; `{ path }` another file (or ":memory:"). */
export interface CacheOptions {
  /** SQLite file; default `.typelm/lab.sqlite` in the working directory. */
  path?: string;
  /** Replies kept in the in-memory LRU in front of the file; default 1000. */
  maxEntries?: number;
}

/** Everything that decides a reply, and nothing else: never the API key, headers or base URL. */
export interface CacheKeyParts {
  provider: string;
  model: string;
  messages: ChatMessage[];
  temperature: number | undefined;
  maxTokens: number | undefined;
  responseSchema: { name: string; schema: JsonSchema } | undefined;
}

export interface CachedReply {
  content: string;
  usage: TokenUsage;
  finishReason: string | undefined;
}

/** JSON with object keys sorted at every level, so equal requests give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/** The request as stored and hashed. Version-tagged so a change of key recipe never serves stale rows. */
export function cacheRequestJson(parts: CacheKeyParts): string {
  return canonicalJson({
    v: 1,
    provider: parts.provider,
    model: parts.model,
    messages: parts.messages.map((m) => ({ role: m.role, content: m.content })),
    temperature: parts.temperature ?? null,
    maxTokens: parts.maxTokens ?? null,
    responseSchema: parts.responseSchema ?? null,
  });
}

export function cacheKey(requestJson: string): string {
  return createHash("sha256").update(requestJson).digest("hex");
}

/**
 * Reply cache of one LM: an in-memory LRU in front of the `lm_cache` table of the SQLite store.
 * The file makes an experiment replayable by a later process; the LRU spares it repeated reads.
 */
export class ResponseCache {
  readonly path: string;
  readonly #maxEntries: number;
  readonly #memory = new Map<string, CachedReply>();
  #table: Promise<LMCacheTable> | undefined;

  constructor(options: CacheOptions = {}) {
    this.path = options.path ?? DEFAULT_STORE_PATH;
    this.#maxEntries = options.maxEntries ?? 1000;
  }

  async get(key: string): Promise<CachedReply | undefined> {
    const hit = this.#memory.get(key);
    if (hit !== undefined) {
      this.#remember(key, hit); // refresh recency
      return hit;
    }
    const row = (await this.#tableOnce()).get(key);
    if (row === undefined) return undefined;
    const reply: CachedReply = {
      content: row.content, usage: { inputTokens: row.inputTokens, outputTokens: row.outputTokens }, finishReason: row.finishReason,
    };
    this.#remember(key, reply);
    return reply;
  }

  async set(key: string, parts: CacheKeyParts, requestJson: string, reply: CachedReply): Promise<void> {
    this.#remember(key, reply);
    (await this.#tableOnce()).put({
      key, provider: parts.provider, model: parts.model, requestJson, content: reply.content,
      inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens, finishReason: reply.finishReason,
      createdAt: new Date().toISOString(),
    });
  }

  #remember(key: string, reply: CachedReply): void {
    this.#memory.delete(key);
    this.#memory.set(key, reply);
    if (this.#memory.size > this.#maxEntries) {
      const oldest = this.#memory.keys().next().value;
      if (oldest !== undefined) this.#memory.delete(oldest);
    }
  }

  #tableOnce(): Promise<LMCacheTable> {
    return (this.#table ??= openStore(this.path).then((db) => new LMCacheTable(db)));
  }
}
