/** One behavioural suite every MemoryStore adapter must pass, run against each adapter. */
import { describe, expect, it } from "@jest/globals";
import { ValidationError } from "../../lib/errors.js";
import { MemoryManager } from "../../lib/memory/manager.js";
import type { MemoryStore } from "../../lib/memory/record.js";

export function memoryStoreContract(name: string, makeStore: () => MemoryStore): void {
  describe(`MemoryManager on ${name}`, () => {
    const fresh = () => new MemoryManager(makeStore());
    let userCounter = 0;
    const user = () => `user-${name}-${++userCounter}-${Math.random().toString(36).slice(2)}`;

    it("stores a memory and retrieves it by id", async () => {
      const manager = fresh();
      const u = user();
      const id = await manager.storeMemory("likes tea", { userId: u, tags: ["prefs", "drinks"] });
      const record = await manager.retrieveMemory(id);
      expect(record).toEqual({ id, text: "likes tea", userId: u, tags: ["prefs", "drinks"], createdAt: expect.any(Date), updatedAt: expect.any(Date) });
      expect(record!.createdAt.getTime()).toBe(record!.updatedAt.getTime());
      expect(await manager.retrieveMemory("no-such-id")).toBeNull();
    });

    it("searches newest first, requiring every given tag", async () => {
      const manager = fresh();
      const u = user();
      const a = await manager.storeMemory("first: tea", { userId: u, tags: ["prefs", "drinks"] });
      const b = await manager.storeMemory("second: coffee", { userId: u, tags: ["prefs"] });
      const c = await manager.storeMemory("third: water", { userId: u, tags: ["drinks", "prefs", "health"] });
      expect((await manager.searchMemories({ userId: u })).map((r) => r.id)).toEqual([c, b, a]);
      expect((await manager.searchMemories({ userId: u, tags: ["prefs"] })).map((r) => r.id)).toEqual([c, b, a]);
      expect((await manager.searchMemories({ userId: u, tags: ["drinks", "prefs"] })).map((r) => r.id)).toEqual([c, a]);
      expect((await manager.searchMemories({ userId: u, tags: ["health", "drinks"] })).map((r) => r.id)).toEqual([c]);
      expect(await manager.searchMemories({ userId: u, tags: ["prefs", "unknown"] })).toEqual([]);
    });

    it("filters by a case-insensitive substring query, combined with tags", async () => {
      const manager = fresh();
      const u = user();
      const tea = await manager.storeMemory("Likes green TEA", { userId: u, tags: ["prefs"] });
      const teapot = await manager.storeMemory("owns a teapot", { userId: u, tags: ["things"] });
      await manager.storeMemory("likes coffee", { userId: u, tags: ["prefs"] });
      expect((await manager.searchMemories({ userId: u, query: "tea" })).map((r) => r.id)).toEqual([teapot, tea]);
      expect((await manager.searchMemories({ userId: u, query: "TEA", tags: ["prefs"] })).map((r) => r.id)).toEqual([tea]);
    });

    it("applies the limit after filtering, keeping the newest", async () => {
      const manager = fresh();
      const u = user();
      const ids: string[] = [];
      for (let i = 0; i < 120; i++) ids.push(await manager.storeMemory(`note ${i}${i % 2 ? " odd" : ""}`, { userId: u, tags: i % 3 ? [] : ["third"] }));
      expect((await manager.searchMemories({ userId: u })).length).toBe(50);
      expect((await manager.searchMemories({ userId: u, limit: 3 })).map((r) => r.id)).toEqual([ids[119], ids[118], ids[117]]);
      expect((await manager.searchMemories({ userId: u, query: "odd", limit: 2 })).map((r) => r.text)).toEqual(["note 119 odd", "note 117 odd"]);
      expect((await manager.searchMemories({ userId: u, tags: ["third"], limit: 200 })).length).toBe(40);
      expect((await manager.searchMemories({ userId: u, query: "odd", limit: 200 })).length).toBe(60);
    });

    it("updates text and tags, and the tag index follows", async () => {
      const manager = fresh();
      const u = user();
      const id = await manager.storeMemory("old text", { userId: u, tags: ["a", "b"] });
      const before = (await manager.retrieveMemory(id))!;
      await new Promise((resolve) => setTimeout(resolve, 5));
      const updated = await manager.updateMemory(id, { text: "new text", tags: ["b", "c"] });
      expect(updated).toMatchObject({ id, text: "new text", tags: ["b", "c"], userId: u });
      expect(updated!.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
      expect(updated!.createdAt.getTime()).toBe(before.createdAt.getTime());
      expect(await manager.retrieveMemory(id)).toEqual(updated);
      expect(await manager.searchMemories({ userId: u, tags: ["a"] })).toEqual([]);
      expect((await manager.searchMemories({ userId: u, tags: ["c"] })).map((r) => r.id)).toEqual([id]);
      expect((await manager.updateMemory(id, { text: "only text" }))!.tags).toEqual(["b", "c"]);
      expect(await manager.updateMemory("missing", { text: "x" })).toBeNull();
    });

    it("deletes a record from every index", async () => {
      const manager = fresh();
      const u = user();
      const keep = await manager.storeMemory("keep", { userId: u, tags: ["t"] });
      const gone = await manager.storeMemory("gone", { userId: u, tags: ["t"] });
      expect(await manager.deleteMemory(gone)).toBe(true);
      expect(await manager.deleteMemory(gone)).toBe(false);
      expect(await manager.retrieveMemory(gone)).toBeNull();
      expect((await manager.searchMemories({ userId: u, tags: ["t"] })).map((r) => r.id)).toEqual([keep]);
      expect((await manager.searchMemories({ userId: u })).map((r) => r.id)).toEqual([keep]);
    });

    it("never returns another user's records", async () => {
      const manager = fresh();
      const alice = user();
      const bob = user();
      await manager.storeMemory("alice secret", { userId: alice, tags: ["shared-tag"] });
      const bobs = await manager.storeMemory("bob note", { userId: bob, tags: ["shared-tag"] });
      const found = await manager.searchMemories({ userId: bob, tags: ["shared-tag"], query: "" });
      expect(found.map((r) => r.id)).toEqual([bobs]);
      expect(await manager.searchMemories({ userId: bob, query: "secret" })).toEqual([]);
      expect(await manager.searchMemories({ userId: user() })).toEqual([]);
    });

    it("loses nothing with 200 concurrent writers", async () => {
      const manager = fresh();
      const u = user();
      const ids = await Promise.all(
        Array.from({ length: 200 }, (_, i) => manager.storeMemory(`concurrent ${i}`, { userId: u, tags: i % 2 ? ["odd", "all"] : ["all"] })),
      );
      expect(new Set(ids).size).toBe(200);
      const all = await manager.searchMemories({ userId: u, limit: 1000 });
      expect(all.length).toBe(200);
      expect(new Set(all.map((r) => r.text)).size).toBe(200);
      expect((await manager.searchMemories({ userId: u, tags: ["odd", "all"], limit: 1000 })).length).toBe(100);
    });

    it("keeps concurrent updates of different records", async () => {
      const manager = fresh();
      const u = user();
      const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => manager.storeMemory(`v0 ${i}`, { userId: u, tags: ["x"] })));
      await Promise.all(ids.map((id, i) => manager.updateMemory(id, { text: `v1 ${i}`, tags: ["y"] })));
      const after = await manager.searchMemories({ userId: u, tags: ["y"], limit: 100 });
      expect(after.length).toBe(50);
      expect(after.every((r) => r.text.startsWith("v1 "))).toBe(true);
      expect(await manager.searchMemories({ userId: u, tags: ["x"] })).toEqual([]);
    });

    it("rejects empty text or userId with ValidationError naming the field", async () => {
      const manager = fresh();
      await expect(manager.storeMemory("", { userId: "u" })).rejects.toThrow(ValidationError);
      await expect(manager.storeMemory("  ", { userId: "u" })).rejects.toThrow(/Memory text: expected a non-empty string, received "  "/);
      await expect(manager.storeMemory("text", { userId: "" })).rejects.toThrow(/Memory userId: expected a non-empty string/);
      await expect(manager.storeMemory("text", { userId: "u", tags: ["ok", ""] })).rejects.toThrow(/tags\[1\]/);
      await expect(manager.searchMemories({ userId: "" })).rejects.toThrow(ValidationError);
      await expect(manager.searchMemories({ userId: "u", limit: -1 })).rejects.toThrow(/limit/);
    });
  });
}
