import { tokenUsage } from "./usage.js";
import { nodeCrypto } from "../load-sync.js";
import { canonicalJson } from "../canonical-json.js";
import { shownUrl } from "../instrument/redact.js";
import { resolve } from "node:path";
import { openStore } from "../store/db.js";
import type { LMCacheRow } from "../store/lm-cache.js";
import { isPostgresUrl, storeKind } from "../store/pg-url.js";
import type { CacheOptions, ChatMessage, JsonSchema, ReasoningOption, TokenUsage } from "./types.js";

export type { CacheOptions } from "./types.js";

/** The `lm_cache` table of the SQLite file (synchronous) or of a team's PostgreSQL database. */
interface CacheTable {
  get(key: string): LMCacheRow | undefined | Promise<LMCacheRow | undefined>;
  put(row: LMCacheRow): void | Promise<void>;
}

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

/**
 * Stop reasons of a reply the model finished on its own (OpenAI/Ollama `stop`, Anthropic `end_turn`,
 * `tool_use` for forced tool use, `stop_sequence`). Anything else (`length`, `max_tokens`, `refusal`,
 * `content_filter`, or no reason at all) may be a cut-off or a refusal and is never cached.
 */
const COMPLETE_FINISH_REASONS = new Set(["stop", "end_turn", "tool_use", "stop_sequence"]);

function isCompleteReply(reply: Pick<CachedReply, "finishReason">): boolean {
  return reply.finishReason !== undefined && COMPLETE_FINISH_REASONS.has(reply.finishReason);
}

/**
 * The request as stored and hashed. Version-tagged so a change of key recipe never serves stale rows.
 * `rolloutId` is added only when set, so a request without one keeps the key (and stored text) it
 * always had and existing cache files still answer it.
 */
export function cacheRequestJson(parts: CacheKeyParts): string {
  return canonicalJson({
    v: 2,
    provider: parts.provider,
    endpoint: parts.endpoint,
    model: parts.model,
    // A message's media enter as each value's type and sha256 (never its base64 text); a message
    // without media keeps the key it always had.
    messages: parts.messages.map((m) => (m.media?.length
      ? { role: m.role, content: m.content, media: m.media.map((a) => ({ kind: a.value.kind, mediaType: a.value.mediaType, sha256: a.value.sha256 })) }
      : { role: m.role, content: m.content })),
    temperature: parts.temperature ?? null,
    maxTokens: parts.maxTokens ?? null,
    responseSchema: parts.responseSchema ?? null,
    ...(parts.rolloutId === undefined ? {} : { rolloutId: parts.rolloutId }),
    ...(parts.reasoning === undefined ? {} : { reasoning: parts.reasoning }),
  });
}

export function cacheKey(requestJson: string): string {
  return nodeCrypto().createHash("sha256").update(requestJson).digest("hex");
}

/** A reply and whether it came without a provider call of this request (cache hit, or another caller's call). */
export interface CacheOutcome {
  reply: CachedReply;
  cached: boolean;
}

/**
 * Lookups and provider calls in progress, per store file and key, shared by every LM of the process:
 * identical requests made at once (an evaluation's threads) wait for one provider call.
 */
const inFlight = new Map<string, Promise<CacheOutcome>>();
let memoryStores = 0;

/**
 * Reply cache of one LM: an in-memory LRU in front of the `lm_cache` table of the SQLite store.
 * The file makes an experiment replayable by a later process; the LRU spares it repeated reads.
 */
export class ResponseCache {
  readonly path: string;
  readonly #maxEntries: number;
  readonly #memory = new Map<string, CachedReply>();
  /** Which in-flight calls this cache may join: same file, or (":memory:", private) only its own. */
  readonly #scope: string;
  #table: Promise<CacheTable> | undefined;
  /** The file, or the database URL as configured (with its credentials). */
  readonly #location: string;

  /** `path` is resolved by the caller (the LM reads the configured store path), so this layer reads no configuration. */
  constructor(options: CacheOptions & { path: string }) {
    // Another scheme or a keyword string is refused without being shown (it may carry a password).
    if (options.path !== ":memory:") storeKind(options.path, "The response cache");
    this.#location = options.path;
    // A database URL is shown (lm.cachePath) without its user and password.
    this.path = isPostgresUrl(options.path) ? shownUrl(options.path) : options.path;
    this.#maxEntries = options.maxEntries ?? 1000;
    this.#scope = this.path === ":memory:" ? `:memory:${++memoryStores}` : isPostgresUrl(this.#location) ? this.#location : resolve(this.path);
  }

  /**
   * The cached reply for `key`, else the reply of an identical call already in flight, else `call()`'s
   * reply, stored only when complete (see `isCompleteReply`). A failed call fails every caller
   * waiting on it, and nothing is stored.
   */
  getOrCall(key: string, parts: CacheKeyParts, requestJson: string, call: () => Promise<CachedReply>): Promise<CacheOutcome> {
    const flightKey = `${this.#scope}\0${key}`;
    const running = inFlight.get(flightKey);
    if (running !== undefined) return running.then(({ reply }) => ({ reply, cached: true }));
    const outcome = (async (): Promise<CacheOutcome> => {
      const hit = await this.get(key);
      if (hit !== undefined) return { reply: hit, cached: true };
      const reply = await call();
      await this.set(key, parts, requestJson, reply);
      return { reply, cached: false };
    })();
    inFlight.set(flightKey, outcome);
    const forget = (): void => {
      if (inFlight.get(flightKey) === outcome) inFlight.delete(flightKey);
    };
    outcome.then(forget, forget);
    return outcome;
  }

  async get(key: string): Promise<CachedReply | undefined> {
    const hit = this.#memory.get(key);
    if (hit !== undefined) {
      this.#remember(key, hit); // refresh recency
      return hit;
    }
    const row = await (await this.#tableOnce()).get(key);
    if (row === undefined) return undefined;
    const reply: CachedReply = {
      content: row.content, usage: tokenUsage(row.inputTokens, row.outputTokens), finishReason: row.finishReason,
    };
    this.#remember(key, reply);
    return reply;
  }

  /** Stores a complete reply; a cut-off or refused one is not stored, so the next call asks again. */
  async set(key: string, parts: CacheKeyParts, requestJson: string, reply: CachedReply): Promise<void> {
    if (!isCompleteReply(reply)) return;
    this.#remember(key, reply);
    await (await this.#tableOnce()).put({
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

  #tableOnce(): Promise<CacheTable> {
    // A team's lab on PostgreSQL (c.lab = { url } or TYPELM_LAB_URL with cache: true) shares its replies.
    if (isPostgresUrl(this.#location)) {
      return (this.#table ??= import("../store/pg-lm-cache.js").then((m) => new m.PostgresLMCacheTable(this.#location)));
    }
    // The table's code loads with its first use, not at `import "typelm"`.
    return (this.#table ??= Promise.all([openStore(this.path), import("../store/lm-cache.js")]).then(([db, m]) => new m.LMCacheTable(db)));
  }
}
