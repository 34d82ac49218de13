// The memory manager for a configuration (lib/memory/memory.ts): the in-memory store, or Redis through
// the client given. The bundle loads this module at the first build (scripts/deferred-modules.mjs).
import { ConfigurationError, preview } from "../errors.js";
import { requireInstalled } from "../optional-packages.js";
import { InMemoryStore } from "./in-memory-store.js";
import { MemoryManager } from "./manager.js";
import { RedisStore } from "./redis-store.js";
import type { MemoryConfig } from "./memory.js";

/** A manager on the store `config` names; a `ConfigurationError` for an unknown adapter or Redis without a client. */
export function buildManager(config: MemoryConfig): MemoryManager {
  if (config.storageAdapter === "in_memory") return new MemoryManager(new InMemoryStore());
  if (config.storageAdapter === "redis") {
    if (!config.redisClient) {
      // typelm never loads ioredis itself (the client is yours), but without it there is no client to give.
      requireInstalled("ioredis", 'Memory with storageAdapter "redis" (c.redisClient, an ioredis client)');
      throw new ConfigurationError('Memory: storageAdapter "redis" needs c.redisClient (an ioredis client), received undefined');
    }
    return new MemoryManager(new RedisStore(config.redisClient, config.redisNamespace));
  }
  throw new ConfigurationError(`Memory storageAdapter: expected "in_memory" or "redis", received ${preview(config.storageAdapter)}`);
}
