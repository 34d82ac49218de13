/**
 * MemoryManager's work (manager-run.ts) loads at its first call. This file's first calls are made
 * while it loads: they must reach the store in the order they were made.
 */
import { describe, expect, it } from "@jest/globals";
import { ValidationError } from "../../lib/errors.js";
import { InMemoryStore } from "../../lib/memory/in-memory-store.js";
import { MemoryManager } from "../../lib/memory/manager.js";

describe("MemoryManager while its code loads", () => {
  it("stores concurrent first calls in call order, and still rejects bad arguments", async () => {
    const manager = new MemoryManager(new InMemoryStore());
    const results = await Promise.allSettled([
      manager.storeMemory("first", { userId: "u" }),
      manager.storeMemory("", { userId: "u" }),
      manager.storeMemory("second", { userId: "u", tags: ["t"] }),
      manager.storeMemory("third", { userId: "u" }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ValidationError);
    const found = await manager.searchMemories({ userId: "u" });
    // Newest first: the store saw first, second, third in that order.
    expect(found.map((r) => r.text)).toEqual(["third", "second", "first"]);
  });
});
