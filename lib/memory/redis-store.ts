// The Redis memory store as typelm exports it: the store itself (key layout, transactions, Lua
// scripts; see redis-engine.ts) loads at the first operation, so `import "typelm"` does not compile it.
import type { Redis } from "ioredis";
import type { MemoryChanges, MemoryRecord, MemorySearch, MemoryStore, NewMemory } from "./record.js";
import type { RedisEngine } from "./redis-engine.js";

/**
 * An ioredis client (`new Redis(url)` from the ioredis package), described by the commands the store
 * sends. Declared here instead of imported from ioredis, so that typelm's type declarations compile in
 * a project without ioredis (an optional package).
 */
export interface RedisClient {
  /** INCR: the record sequence. */
  incr(...args: never[]): unknown;
  /** HGETALL: a record. */
  hgetall(...args: never[]): unknown;
  /** HMGET: a record's owner and tags. */
  hmget(...args: never[]): unknown;
  /** ZREVRANGE: a user's records, newest first. */
  zrevrange(...args: never[]): unknown;
  /** ZMSCORE: the times of records found by tag. */
  zmscore(...args: never[]): unknown;
  /** SINTER: the records holding every tag searched for. */
  sinter(...args: never[]): unknown;
  /** EVAL: the update and delete scripts. */
  eval(...args: never[]): unknown;
  /** MULTI: a transaction. */
  multi(...args: never[]): unknown;
  /** A pipeline of reads. */
  pipeline(...args: never[]): unknown;
}

/** Memory records in Redis, through an ioredis client you provide (namespace default "typelm:memory"). */
export class RedisStore implements MemoryStore {
  #engine: Promise<RedisEngine> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly namespace = "typelm:memory",
  ) {}

  #store(): Promise<RedisEngine> {
    return (this.#engine ??= import("./redis-engine.js").then(({ RedisEngine }) => new RedisEngine(this.redis as Redis, this.namespace)));
  }

  /** Stores a new record (one MULTI transaction: the hash and its indexes appear together). */
  async store(memory: NewMemory): Promise<MemoryRecord> {
    return (await this.#store()).store(memory);
  }

  /** The record with this id, or null. */
  async retrieve(id: string): Promise<MemoryRecord | null> {
    return (await this.#store()).retrieve(id);
  }

  /** A user's records matching the tags and text, newest first. */
  async search(search: MemorySearch): Promise<MemoryRecord[]> {
    return (await this.#store()).search(search);
  }

  /** Changes only the given fields, atomically; null when the record is gone. */
  async update(id: string, changes: MemoryChanges): Promise<MemoryRecord | null> {
    return (await this.#store()).update(id, changes);
  }

  /** Deletes the record and its index entries, atomically; false when it was not there. */
  async delete(id: string): Promise<boolean> {
    return (await this.#store()).delete(id);
  }
}
