/**
 * The process-wide memory configuration: `Memory.configure((c) => { ... })`, then `Memory.manager`.
 * The manager is built on first use after each `configure`, so configuring later takes effect (by
 * build-manager.ts, which the bundle loads at the first build).
 */
import type { MemoryManager } from "./manager.js";
import type { RedisClient } from "./redis-store.js";
import { buildManager } from "./build-manager.js";

/** The memory configuration: the storage adapter ("in_memory" or "redis"), the ioredis client and the key namespace. */
export interface MemoryConfig {
  storageAdapter: "in_memory" | "redis";
  /** Required for "redis": an ioredis client (attach an `error` listener: ioredis emits connection errors as events, and an unhandled one ends the process). */
  redisClient: RedisClient | undefined;
  redisNamespace: string;
}

const config: MemoryConfig = { storageAdapter: "in_memory", redisClient: undefined, redisNamespace: "typelm:memory" };
let manager: MemoryManager | null = null;

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
