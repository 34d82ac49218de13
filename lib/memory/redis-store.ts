/**
 * Memory records in Redis, through an ioredis client you provide.
 *
 * Key layout (`ns` is the namespace, default "typelm:memory"):
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
 * - Each write is one MULTI transaction, so concurrent writers never lose a record or leave it
 *   half-indexed. Update and delete read the old tags first; a concurrent change can leave a stale
 *   id in a tag set, so every candidate is re-checked against its hash before it is returned (ids
 *   whose hash is gone are removed from the user's indexes when met). (WATCH is not used: it is per connection, and one ioredis
 *   client is shared by concurrent callers.)
 */
import { randomUUID } from "node:crypto";
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

/** How many ids one round trip reads while paging through a user's records. */
const PAGE = 100;

export class RedisStore implements MemoryStore {
  constructor(
    private readonly redis: Redis,
    private readonly namespace = "typelm:memory",
  ) {}

  private recordKey(id: string): string {
    return `${this.namespace}:mem:${id}`;
  }
  private userKey(userId: string): string {
    return `${this.namespace}:user:${userId}`;
  }
  private tagKey(userId: string, tag: string): string {
    return `${this.namespace}:user:${userId}:tag:${tag}`;
  }
  private timeKey(userId: string): string {
    return `${this.namespace}:user:${userId}:by-time`;
  }

  async store(memory: NewMemory): Promise<MemoryRecord> {
    const now = new Date();
    const record: MemoryRecord = { id: randomUUID(), text: memory.text, userId: memory.userId, tags: [...memory.tags], createdAt: now, updatedAt: now };
    const sequence = await this.redis.incr(`${this.namespace}:seq`);
    const transaction = this.redis
      .multi()
      .hset(this.recordKey(record.id), toHash(record))
      .sadd(this.userKey(record.userId), record.id)
      .zadd(this.timeKey(record.userId), sequence, record.id);
    for (const tag of record.tags) transaction.sadd(this.tagKey(record.userId, tag), record.id);
    await exec(transaction);
    return record;
  }

  async retrieve(id: string): Promise<MemoryRecord | null> {
    return fromHash(await this.redis.hgetall(this.recordKey(id)));
  }

  async search(search: MemorySearch): Promise<MemoryRecord[]> {
    const limit = search.limit ?? DEFAULT_SEARCH_LIMIT;
    if (limit <= 0) return [];
    const ids = search.tags && search.tags.length > 0 ? await this.idsWithTags(search.userId, search.tags) : null;
    const found: MemoryRecord[] = [];
    for (let offset = 0; found.length < limit; offset += PAGE) {
      const page = ids ? ids.slice(offset, offset + PAGE) : await this.redis.zrevrange(this.timeKey(search.userId), offset, offset + PAGE - 1);
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
    const ids = await this.redis.sinter(...tags.map((tag) => this.tagKey(userId, tag)));
    if (ids.length === 0) return [];
    const scores = await this.redis.zmscore(this.timeKey(userId), ...ids);
    return ids
      .map((id, i) => ({ id, score: scores[i] == null ? -Infinity : Number(scores[i]) }))
      .sort((a, b) => b.score - a.score)
      .map((entry) => entry.id);
  }

  /** Reads records in one pipeline, keeping order; ids whose hash is gone are unindexed. */
  private async load(userId: string, ids: string[]): Promise<MemoryRecord[]> {
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.recordKey(id));
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
      await this.redis.multi().srem(this.userKey(userId), ...stale).zrem(this.timeKey(userId), ...stale).exec();
    }
    return records;
  }

  async update(id: string, changes: MemoryChanges): Promise<MemoryRecord | null> {
    const current = await this.retrieve(id);
    if (!current) return null;
    const updated: MemoryRecord = {
      ...current,
      text: changes.text ?? current.text,
      tags: changes.tags ? [...changes.tags] : current.tags,
      updatedAt: new Date(),
    };
    const transaction = this.redis.multi().hset(this.recordKey(id), toHash(updated));
    for (const tag of current.tags) {
      if (!updated.tags.includes(tag)) transaction.srem(this.tagKey(current.userId, tag), id);
    }
    for (const tag of updated.tags) transaction.sadd(this.tagKey(current.userId, tag), id);
    await exec(transaction);
    return updated;
  }

  async delete(id: string): Promise<boolean> {
    const current = await this.retrieve(id);
    if (!current) return false;
    const transaction = this.redis
      .multi()
      .del(this.recordKey(id))
      .srem(this.userKey(current.userId), id)
      .zrem(this.timeKey(current.userId), id);
    for (const tag of current.tags) transaction.srem(this.tagKey(current.userId, tag), id);
    const replies = await exec(transaction);
    return replies[0]?.[1] === 1;
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
