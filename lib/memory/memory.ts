/**
 * The process-wide memory configuration: `Memory.configure((c) => { ... })`, then `Memory.manager`.
 * The manager is built on first use after each `configure`, so configuring later takes effect.
 */
import { ConfigurationError, preview } from "../errors.js";
import { requireInstalled } from "../optional.js";
import { InMemoryStore } from "./in-memory-store.js";
import { MemoryManager } from "./manager.js";
import { RedisStore, type RedisClient } from "./redis-store.js";

/** The memory configuration: the storage adapter ("in_memory" or "redis"), the ioredis client and the key namespace. */
export interface MemoryConfig {
  storageAdapter: "in_memory" | "redis";
  /** Required for "redis": an ioredis client (attach an `error` listener: ioredis emits connection errors as events, and an unhandled one ends the process). */
  redisClient: RedisClient | undefined;
  redisNamespace: string;
}

const config: MemoryConfig = { storageAdapter: "in_memory", redisClient: undefined, redisNamespace: "typelm:memory" };
let manager: MemoryManager | null = null;

function buildManager(config: MemoryConfig): MemoryManager {
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

/** The process-wide memory: `Memory.configure((c) => { ... })` chooses the store, `Memory.manager` stores, retrieves, searches, updates and deletes records. */
export const Memory = {
  /** Changes the configuration; the next use of `Memory.manager` gets a manager for the new store. */
  configure(apply: (c: MemoryConfig) => void): void {
    const next = { ...config };
    apply(next);
    // Built before anything changes, so a bad configuration leaves the old one in place.
    const built = buildManager(next);
    Object.assign(config, next);
    manager = built;
  },

  /** The manager for the configured store, built on first use after each `configure`. */
  get manager(): MemoryManager {
    manager ??= buildManager(config);
    return manager;
  },

  /** The current configuration (a copy). */
  get config(): Readonly<MemoryConfig> {
    return { ...config };
  },

  /** Back to the in-memory default with an empty store (for tests). */
  reset(): void {
    Object.assign(config, { storageAdapter: "in_memory", redisClient: undefined, redisNamespace: "typelm:memory" });
    manager = null;
  },
};
