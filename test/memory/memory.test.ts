import { beforeAll, describe, expect, it } from "@jest/globals";
import type { Redis } from "ioredis";
import { ConfigurationError } from "../../lib/errors.js";
import { InMemoryStore } from "../../lib/memory/in-memory-store.js";
import { Memory } from "../../lib/memory/memory.js";
import { RedisStore } from "../../lib/memory/redis-store.js";
import { memoryStoreContract } from "./store-contract.js";
import { describeWithRedis } from "./with-redis.js";

memoryStoreContract("InMemoryStore", () => new InMemoryStore());

describeWithRedis("RedisStore", ({ redis: client, namespace }) => {
  let redis: Redis;
  beforeAll(() => {
    redis = client();
  });

  memoryStoreContract("RedisStore", () => new RedisStore(redis, namespace()));

  it("lays records out under the namespace as documented", async () => {
    const store = new RedisStore(redis, `${namespace()}:layout`);
    const record = await store.store({ text: "hello", userId: "u1", tags: ["a", "b"] });
    const ns = `${namespace()}:layout`;
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

  it("percent-encodes user ids and tags in keys, leaving plain ones as they are", async () => {
    const ns = `${namespace()}:encoded`;
    const store = new RedisStore(redis, ns);
    const record = await store.store({ text: "hello", userId: "x:by-time", tags: ["a b", "ü*{}"] });
    expect(await redis.smembers(`${ns}:user:x%3Aby-time`)).toEqual([record.id]);
    expect(await redis.zrange(`${ns}:user:x%3Aby-time:by-time`, "0", "-1")).toEqual([record.id]);
    expect(await redis.smembers(`${ns}:user:x%3Aby-time:tag:a%20b`)).toEqual([record.id]);
    expect(await redis.smembers(`${ns}:user:x%3Aby-time:tag:%C3%BC%2A%7B%7D`)).toEqual([record.id]);
    expect(await redis.hget(`${ns}:mem:${record.id}`, "userId")).toBe("x:by-time");
  });

  it("is what Memory.manager uses when configured for redis", async () => {
    Memory.configure((c) => {
      c.storageAdapter = "redis";
      c.redisClient = redis;
      c.redisNamespace = `${namespace()}:configured`;
    });
    try {
      const id = await Memory.manager.storeMemory("via configure", { userId: "u", tags: ["t"] });
      expect(await redis.exists(`${namespace()}:configured:mem:${id}`)).toBe(1);
      expect((await Memory.manager.searchMemories({ userId: "u", tags: ["t"] }))[0]!.text).toBe("via configure");
    } finally {
      Memory.reset();
    }
  });
});

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
