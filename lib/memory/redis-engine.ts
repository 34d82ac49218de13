/**
 * Memory records in Redis, through an ioredis client you provide.
 *
 * Key layout (`ns` is the namespace, default "typelm:memory"; <id>, <userId> and <tag> are
 * percent-encoded by redis-keys.ts, so "x:by-time" or "a:tag:b" as a user id get keys of their own):
 *   ns:mem:<id>                  hash   id, text, userId, tags (JSON array), createdAt, updatedAt (ISO 8601)
 *   ns:user:<userId>             set    ids of the user's records
 *   ns:user:<userId>:tag:<tag>   set    ids of the user's records carrying <tag>
 *   ns:user:<userId>:by-time     zset   ids scored by a creation sequence (newest = highest)
 *   ns:seq                       string the creation sequence (INCR)
 *
 * Why:
 * - A search with tags intersects the user's tag sets (SINTER), so it reads only candidates of
 *   that user; without tags it pages through that user's time index. Nothing scans the keyspace.
 * - The time index is scored by INCR ns:seq rather than by milliseconds: it orders like createdAt
 *   but never ties, so "newest first" holds for records stored within the same millisecond.
 * - `store` is one MULTI transaction: the hash and its indexes appear together.
 * - `update` and `delete` are Lua scripts, so each is atomic: an update changes only the fields it
 *   was given (two concurrent updates, one of the text and one of the tags, both survive) and does
 *   nothing once the record is gone (an update racing a delete cannot re-create it half-indexed).
 *   The script cannot encode tag names into keys itself, so the caller reads the record's tags,
 *   passes their keys, and the script checks the tags are still those (compare-and-set); when
 *   another writer changed them in between, it returns the current tags and the caller retries.
 *   (WATCH is not used: it is per connection, and one ioredis client is shared by concurrent callers.)
 */
import { nodeCrypto } from "../load-sync.js";
import type { Redis } from "ioredis";
import { TypelmError } from "../errors.js";
import {
  DEFAULT_SEARCH_LIMIT,
  type MemoryChanges,
  type MemoryRecord,
  type MemorySearch,
  type MemoryStore,
  type NewMemory,
  matchesSearch,
} from "./record.js";
import { RedisKeys } from "./redis-keys.js";

/** How many ids one round trip reads while paging through a user's records. */
const PAGE = 100;

/**
 * Compare-and-set attempts before giving up. Each failed attempt means another writer changed the
 * record's tags, so N concurrent tag updates of one record need at most N attempts.
 */
const MAX_ATTEMPTS = 1000;

/** What the scripts return when the record is gone. */
const MISSING = 0;

/**
 * KEYS: record, then the keys of the old tags (ARGV[6] of them), then the keys of the new tags.
 * ARGV: id, expected tags JSON, new tags JSON or "" (tags unchanged), "1" + text or "" (text
 * unchanged), updatedAt, count of old tag keys.
 * Returns 0 when the record is gone, {"conflict", current tags JSON} when its tags are no longer the
 * expected ones, else the record's fields (HGETALL).
 */
const UPDATE_SCRIPT = `
local record = KEYS[1]
if redis.call('EXISTS', record) == 0 then return 0 end
if ARGV[3] ~= '' then
  local tags = redis.call('HGET', record, 'tags')
  if tags ~= ARGV[2] then return {'conflict', tags} end
  local old = tonumber(ARGV[6])
  for i = 2, old + 1 do redis.call('SREM', KEYS[i], ARGV[1]) end
  for i = old + 2, #KEYS do redis.call('SADD', KEYS[i], ARGV[1]) end
  redis.call('HSET', record, 'tags', ARGV[3])
end
if ARGV[4] ~= '' then redis.call('HSET', record, 'text', string.sub(ARGV[4], 2)) end
redis.call('HSET', record, 'updatedAt', ARGV[5])
return redis.call('HGETALL', record)
`;

/**
 * KEYS: record, user set, time index, then the keys of the record's tags.
 * ARGV: id, expected tags JSON. Returns 0 when the record is gone, {"conflict", current tags JSON}
 * when its tags are no longer the expected ones, else 1.
 */
const DELETE_SCRIPT = `
local record = KEYS[1]
if redis.call('EXISTS', record) == 0 then return 0 end
local tags = redis.call('HGET', record, 'tags')
if tags ~= ARGV[2] then return {'conflict', tags} end
redis.call('DEL', record)
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
for i = 4, #KEYS do redis.call('SREM', KEYS[i], ARGV[1]) end
return 1
`;

/** The Redis store behind `RedisStore` (redis-store.ts), loaded at its first operation. */
export class RedisEngine implements MemoryStore {
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    namespace = "typelm:memory",
  ) {
    this.keys = new RedisKeys(namespace);
  }

  async store(memory: NewMemory): Promise<MemoryRecord> {
    const now = new Date();
    const record: MemoryRecord = { id: nodeCrypto().randomUUID(), text: memory.text, userId: memory.userId, tags: [...memory.tags], createdAt: now, updatedAt: now };
    const sequence = await this.redis.incr(this.keys.sequence);
    const transaction = this.redis
      .multi()
      .hset(this.keys.record(record.id), toHash(record))
      .sadd(this.keys.user(record.userId), record.id)
      .zadd(this.keys.time(record.userId), sequence, record.id);
    for (const tag of record.tags) transaction.sadd(this.keys.tag(record.userId, tag), record.id);
    await exec(transaction);
    return record;
  }

  async retrieve(id: string): Promise<MemoryRecord | null> {
    return fromHash(await this.redis.hgetall(this.keys.record(id)));
  }

  async search(search: MemorySearch): Promise<MemoryRecord[]> {
    const limit = search.limit ?? DEFAULT_SEARCH_LIMIT;
    if (limit <= 0) return [];
    const ids = search.tags && search.tags.length > 0 ? await this.idsWithTags(search.userId, search.tags) : null;
    const found: MemoryRecord[] = [];
    for (let offset = 0; found.length < limit; offset += PAGE) {
      const page = ids ? ids.slice(offset, offset + PAGE) : await this.redis.zrevrange(this.keys.time(search.userId), offset, offset + PAGE - 1);
      if (page.length === 0) break;
      for (const record of await this.load(search.userId, page)) {
        if (matchesSearch(record, search)) found.push(record);
        if (found.length >= limit) break;
      }
    }
    return found;
  }

  /** The user's ids carrying every tag, newest first. */
  private async idsWithTags(userId: string, tags: string[]): Promise<string[]> {
    const ids = await this.redis.sinter(...tags.map((tag) => this.keys.tag(userId, tag)));
    if (ids.length === 0) return [];
    const scores = await this.redis.zmscore(this.keys.time(userId), ...ids);
    return ids
      .map((id, i) => ({ id, score: scores[i] == null ? -Infinity : Number(scores[i]) }))
      .sort((a, b) => b.score - a.score)
      .map((entry) => entry.id);
  }

  /** Reads records in one pipeline, keeping order; ids whose hash is gone are unindexed. */
  private async load(userId: string, ids: string[]): Promise<MemoryRecord[]> {
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.record(id));
    const replies = (await pipeline.exec()) ?? [];
    const records: MemoryRecord[] = [];
    const stale: string[] = [];
    replies.forEach(([error, hash], i) => {
      if (error) throw error;
      const record = fromHash(hash as Record<string, string>);
      if (record) records.push(record);
      else stale.push(ids[i]!);
    });
    if (stale.length > 0) {
      await this.redis.multi().srem(this.keys.user(userId), ...stale).zrem(this.keys.time(userId), ...stale).exec();
    }
    return records;
  }

  async update(id: string, changes: MemoryChanges): Promise<MemoryRecord | null> {
    const key = this.keys.record(id);
    const newTags = changes.tags === undefined ? undefined : [...changes.tags];
    const updatedAt = new Date().toISOString();
    const text = changes.text === undefined ? "" : `1${changes.text}`;
    if (newTags === undefined) {
      // Only the text: no index changes, so no tags to compare.
      const reply = await this.redis.eval(UPDATE_SCRIPT, 1, key, id, "", "", text, updatedAt, "0");
      return reply === MISSING ? null : fromReply(reply);
    }
    return this.compareAndSet(id, "update", async (userId, tagsJson, tags) => {
      const oldKeys = tags.map((tag) => this.keys.tag(userId, tag));
      const newKeys = newTags.map((tag) => this.keys.tag(userId, tag));
      const args = [id, tagsJson, JSON.stringify(newTags), text, updatedAt, String(oldKeys.length)];
      return this.redis.eval(UPDATE_SCRIPT, 1 + oldKeys.length + newKeys.length, key, ...oldKeys, ...newKeys, ...args);
    }, (reply) => fromReply(reply));
  }

  async delete(id: string): Promise<boolean> {
    const deleted = await this.compareAndSet(id, "delete", async (userId, tagsJson, tags) => {
      const tagKeys = tags.map((tag) => this.keys.tag(userId, tag));
      return this.redis.eval(DELETE_SCRIPT, 3 + tagKeys.length, this.keys.record(id), this.keys.user(userId), this.keys.time(userId), ...tagKeys, id, tagsJson);
    }, () => true);
    return deleted ?? false;
  }

  /**
   * Runs a script that needs the keys of the record's current tags: reads the tags, runs, and when
   * the script reports that the tags changed meanwhile, runs again with the tags it reported.
   * Returns null when the record is (or became) missing.
   */
  private async compareAndSet<T>(
    id: string,
    operation: string,
    run: (userId: string, tagsJson: string, tags: string[]) => Promise<unknown>,
    done: (reply: unknown) => T,
  ): Promise<T | null> {
    const hash = await this.redis.hmget(this.keys.record(id), "userId", "tags");
    const userId = hash[0];
    let tagsJson = hash[1];
    if (userId == null || tagsJson == null) return null;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const reply = await run(userId, tagsJson, JSON.parse(tagsJson) as string[]);
      if (reply === MISSING) return null;
      if (Array.isArray(reply) && reply[0] === "conflict") {
        tagsJson = String(reply[1]);
        continue;
      }
      return done(reply);
    }
    throw new TypelmError(
      `RedisStore ${operation} of memory "${id}": its tags changed under ${MAX_ATTEMPTS} attempts in a row; ` +
        "another writer is updating this record's tags continuously. Retry later, or update it from one place.",
    );
  }
}

type Transaction = ReturnType<Redis["multi"]>;

async function exec(transaction: Transaction): Promise<[Error | null, unknown][]> {
  const replies = await transaction.exec();
  if (!replies) throw new TypelmError("RedisStore: a MULTI transaction was aborted (EXEC returned null)");
  for (const [error] of replies) if (error) throw error;
  return replies;
}

function toHash(record: MemoryRecord): Record<string, string> {
  return {
    id: record.id,
    text: record.text,
    userId: record.userId,
    tags: JSON.stringify(record.tags),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** A record from a script's HGETALL reply (a flat field, value, field, value ... list). */
function fromReply(reply: unknown): MemoryRecord | null {
  const flat = reply as string[];
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return fromHash(hash);
}

function fromHash(hash: Record<string, string> | null | undefined): MemoryRecord | null {
  if (!hash || hash.id === undefined) return null;
  return {
    id: hash.id,
    text: hash.text ?? "",
    userId: hash.userId ?? "",
    tags: JSON.parse(hash.tags ?? "[]") as string[],
    createdAt: new Date(hash.createdAt ?? 0),
    updatedAt: new Date(hash.updatedAt ?? 0),
  };
}
