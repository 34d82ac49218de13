// The Redis memory store as typelm exports it: the store itself (key layout, transactions, Lua
// scripts; see redis-engine.ts) loads at the first operation, so `import "typelm"` does not compile it.
import type { Redis } from "ioredis";
import type { MemoryChanges, MemoryRecord, MemorySearch, MemoryStore, NewMemory } from "./record.js";
import type { RedisEngine } from "./redis-engine.js";

/** Memory records in Redis, through an ioredis client you provide (namespace default "typelm:memory"). */
export class RedisStore implements MemoryStore {
  #engine: Promise<RedisEngine> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly namespace = "typelm:memory",
  ) {}

  #store(): Promise<RedisEngine> {
    return (this.#engine ??= import("./redis-engine.js").then(({ RedisEngine }) => new RedisEngine(this.redis, this.namespace)));
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
