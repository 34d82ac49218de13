// The response cache's work (lib/lm/cache.ts keeps the `ResponseCache` an LM builds, with its checks):
// the in-memory LRU, the calls in flight shared by identical requests, and the `lm_cache` table of the
// SQLite file or of a team's PostgreSQL database. Loaded at a cache's first lookup, not at `import "typelm"`.
import { tokenUsage } from "./usage.js";
import { openStore } from "../store/db.js";
import type { LMCacheRow } from "../store/lm-cache.js";
import { isPostgresUrl } from "../store/pg-url.js";
import type { CachedReply, CacheKeyParts, CacheOutcome } from "./cache.js";

/** The `lm_cache` table of the SQLite file (synchronous) or of a team's PostgreSQL database. */
interface CacheTable {
  get(key: string): LMCacheRow | undefined | Promise<LMCacheRow | undefined>;
  put(row: LMCacheRow): void | Promise<void>;
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
 * Lookups and provider calls in progress, per store file and key, shared by every LM of the process:
 * identical requests made at once (an evaluation's threads) wait for one provider call.
 */
const inFlight = new Map<string, Promise<CacheOutcome>>();

/** The lookups and writes of one `ResponseCache`: its LRU in front of its table. */
export class ResponseCacheRun {
  readonly #path: string;
  readonly #maxEntries: number;
  readonly #memory = new Map<string, CachedReply>();
  readonly #scope: string;
  #table: Promise<CacheTable> | undefined;
  readonly #location: string;

  /** `location`: the file or the database URL (with its credentials); `path` as shown; `scope`: whose in-flight calls it joins. */
  constructor(location: string, path: string, scope: string, maxEntries: number) {
    this.#location = location;
    this.#path = path;
    this.#scope = scope;
    this.#maxEntries = maxEntries;
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

  /** The cached reply for `key` (from memory, else the table), or undefined. */
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
    return (this.#table ??= Promise.all([openStore(this.#path), import("../store/lm-cache.js")]).then(([db, m]) => new m.LMCacheTable(db)));
  }
}
