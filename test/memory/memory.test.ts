import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { Redis } from "ioredis";
import { ConfigurationError } from "../../lib/errors.js";
import { InMemoryStore } from "../../lib/memory/in-memory-store.js";
import { Memory } from "../../lib/memory/memory.js";
import { RedisStore } from "../../lib/memory/redis-store.js";
import { REDIS_INSTALL_HINT, type RedisTestServer, redisServerInstalled, startRedisServer } from "../helpers/redis.js";
import { memoryStoreContract } from "./store-contract.js";

memoryStoreContract("InMemoryStore", () => new InMemoryStore());

const haveRedis = redisServerInstalled();
if (!haveRedis && process.env.CI === "true") {
  describe("RedisStore", () => {
    it("needs redis-server, which CI must install", () => {
      throw new Error(`redis-server is not installed; run: ${REDIS_INSTALL_HINT}`);
    });
  });
} else if (!haveRedis) {
  // A visible skip rather than a silent one.
  console.warn(`Skipping the RedisStore tests: redis-server is not installed. Install it with: ${REDIS_INSTALL_HINT}`);
  describe.skip("RedisStore (redis-server not installed)", () => {
    it("skipped", () => undefined);
  });
} else {
  describe("RedisStore", () => {
    let server: RedisTestServer;
    let redis: Redis;
    beforeAll(async () => {
      server = await startRedisServer();
      redis = server.client();
    });
    afterAll(async () => {
      await server?.stop();
    });

    memoryStoreContract("RedisStore", () => new RedisStore(redis, server.namespace));

    it("lays records out under the namespace as documented", async () => {
      const store = new RedisStore(redis, `${server.namespace}:layout`);
      const record = await store.store({ text: "hello", userId: "u1", tags: ["a", "b"] });
      const ns = `${server.namespace}:layout`;
      expect(await redis.hgetall(`${ns}:mem:${record.id}`)).toEqual({
        id: record.id,
        text: "hello",
        userId: "u1",
        tags: '["a","b"]',
        createdAt: record.createdAt.toISOString(),
        updatedAt: record.updatedAt.toISOString(),
      });
      expect(await redis.smembers(`${ns}:user:u1`)).toEqual([record.id]);
      expect(await redis.smembers(`${ns}:user:u1:tag:a`)).toEqual([record.id]);
      expect(await redis.zrange(`${ns}:user:u1:by-time`, "0", "-1")).toEqual([record.id]);
    });

    it("is what Memory.manager uses when configured for redis", async () => {
      Memory.configure((c) => {
        c.storageAdapter = "redis";
        c.redisClient = redis;
        c.redisNamespace = `${server.namespace}:configured`;
      });
      try {
        const id = await Memory.manager.storeMemory("via configure", { userId: "u", tags: ["t"] });
        expect(await redis.exists(`${server.namespace}:configured:mem:${id}`)).toBe(1);
        expect((await Memory.manager.searchMemories({ userId: "u", tags: ["t"] }))[0]!.text).toBe("via configure");
      } finally {
        Memory.reset();
      }
    });
  });
}

describe("Memory configuration", () => {
  it("defaults to an in-memory store", async () => {
    Memory.reset();
    expect(Memory.config.storageAdapter).toBe("in_memory");
    const id = await Memory.manager.storeMemory("likes tea", { userId: "u1", tags: ["prefs"] });
    expect((await Memory.manager.retrieveMemory(id))!.text).toBe("likes tea");
  });

  it("rejects redis without a client and keeps the previous configuration", () => {
    Memory.reset();
    const before = Memory.manager;
    expect(() => Memory.configure((c) => { c.storageAdapter = "redis"; })).toThrow(ConfigurationError);
    expect(Memory.config.storageAdapter).toBe("in_memory");
    expect(Memory.manager).toBe(before);
  });
});
