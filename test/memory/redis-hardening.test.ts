/** RedisStore under concurrent writers, and with user ids and tags that look like parts of its keys. */
import { describe, expect, it } from "@jest/globals";
import { MemoryManager } from "../../lib/memory/manager.js";
import { encodeKeyPart } from "../../lib/memory/redis-keys.js";
import { RedisStore } from "../../lib/memory/redis-store.js";
import { describeWithRedis } from "./with-redis.js";

/** A small seeded generator (mulberry32), so a failing case can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pieces that look like key syntax, glob and hash-tag characters, spaces, escapes and unicode. */
const PIECES = [":", "*", "{", "}", " ", "%", "%3A", "?", "[", "é", "日本", "😀", "a", "b", "x", "u", "tag", "by-time", "user", "mem", "seq"];

function generate(next: () => number, count: number): string[] {
  const out = new Set<string>();
  while (out.size < count) {
    const length = 1 + Math.floor(next() * 5);
    out.add(Array.from({ length }, () => PIECES[Math.floor(next() * PIECES.length)]!).join(""));
  }
  return [...out];
}

describe("encodeKeyPart", () => {
  it("maps distinct strings to distinct parts free of ':', '*', '{', '}' and spaces", () => {
    const next = random(7);
    const inputs = [...generate(next, 3000), "\uD800", "\uDC00x", "%uD800", "", "x:by-time", "a:tag:b"];
    const encoded = new Map<string, string>();
    for (const input of inputs) {
      const part = encodeKeyPart(input);
      expect(part).toMatch(/^[A-Za-z0-9._~%-]*$/);
      expect(encoded.get(part) ?? input).toBe(input);
      encoded.set(part, input);
    }
    expect(encoded.size).toBe(new Set(inputs).size);
  });

  it("writes the expected escapes", () => {
    expect(encodeKeyPart("user-1_a.b~c")).toBe("user-1_a.b~c");
    expect(encodeKeyPart("x:by-time")).toBe("x%3Aby-time");
    expect(encodeKeyPart("{a} *%")).toBe("%7Ba%7D%20%2A%25");
    expect(encodeKeyPart("é😀")).toBe("%C3%A9%F0%9F%98%80");
    expect(encodeKeyPart("\uD800")).toBe("%uD800");
  });
});

describeWithRedis("RedisStore hardening", ({ redis, connect, namespace }) => {
  let suffix = 0;
  const fresh = () => {
    const ns = `${namespace()}:h${++suffix}`;
    return { ns, manager: new MemoryManager(new RedisStore(redis(), ns)) };
  };

  it("keeps every field through 50 concurrent mixed updates of one record over two connections, and the tag index agrees", async () => {
    const { ns, manager } = fresh();
    const other = new MemoryManager(new RedisStore(connect(), ns));
    const id = await manager.storeMemory("text 0", { userId: "u", tags: ["tag-0"] });
    const texts = Array.from({ length: 25 }, (_, i) => `text ${i + 1}`);
    const tagLists = Array.from({ length: 25 }, (_, i) => [`tag-${i + 1}`, "common"]);
    await Promise.all(
      texts.flatMap((text, i) => [
        (i % 2 ? manager : other).updateMemory(id, { text }),
        (i % 2 ? other : manager).updateMemory(id, { tags: tagLists[i] }),
      ]),
    );
    const record = (await manager.retrieveMemory(id))!;
    // Neither kind of update may undo the other: the text is one that was written, and so are the tags.
    expect(texts).toContain(record.text);
    expect(tagLists).toContainEqual(record.tags);
    for (const tag of ["tag-0", ...tagLists.flat()]) {
      const found = await manager.searchMemories({ userId: "u", tags: [tag] });
      expect({ tag, ids: found.map((r) => r.id) }).toEqual({ tag, ids: record.tags.includes(tag) ? [id] : [] });
    }
  });

  it("keeps both changes when one update sets the text and another the tags at the same moment", async () => {
    const { manager } = fresh();
    for (let round = 0; round < 10; round++) {
      const id = await manager.storeMemory("before", { userId: "u", tags: ["old"] });
      const updates = [manager.updateMemory(id, { text: "after" }), manager.updateMemory(id, { tags: ["new"] })];
      await Promise.all(round % 2 ? updates.reverse() : updates);
      expect(await manager.retrieveMemory(id)).toMatchObject({ text: "after", tags: ["new"] });
    }
  });

  it("leaves no key behind when updates race a delete", async () => {
    const { ns, manager } = fresh();
    const orders: Array<Array<"text" | "tags" | "delete">> = [
      ["text", "delete"], ["delete", "text"], ["tags", "delete"], ["delete", "tags"], ["tags", "delete", "text", "tags"],
    ];
    for (const order of orders) {
      const id = await manager.storeMemory("doomed", { userId: "u", tags: ["a", "b"] });
      const results = await Promise.all(
        order.map((op) =>
          op === "delete" ? manager.deleteMemory(id) : manager.updateMemory(id, op === "text" ? { text: "revived?" } : { tags: ["b", "c"] }),
        ),
      );
      expect(results[order.indexOf("delete")]).toBe(true);
      expect({ order, record: await manager.retrieveMemory(id) }).toEqual({ order, record: null });
      // Empty sets vanish in Redis, so only the creation sequence may remain.
      expect({ order, keys: (await redis().keys(`${ns}:*`)).sort() }).toEqual({ order, keys: [`${ns}:seq`] });
    }
  });

  it("never mixes users or tags whose names look like each other's keys", async () => {
    const { manager } = fresh();
    const next = random(42);
    const users = [...new Set(["x", "x:by-time", "a", "a:tag:b", "a:tag", "b", ...generate(next, 40)])];
    const tags = [...new Set(["b", "by-time", "tag:b", ...generate(next, 12)])];
    const expected = new Map<string, Array<{ id: string; tags: string[] }>>();
    for (const user of users) {
      const mine: Array<{ id: string; tags: string[] }> = [];
      const count = 1 + Math.floor(next() * 3);
      for (let i = 0; i < count; i++) {
        const picked = [...new Set(Array.from({ length: Math.floor(next() * 3) }, () => tags[Math.floor(next() * tags.length)]!))];
        if (user === "a") picked.push("b"); // a's tag set "b" would be user "a:tag:b"'s set without encoding
        const unique = [...new Set(picked)];
        mine.push({ id: await manager.storeMemory(`${user} #${i}`, { userId: user, tags: unique }), tags: unique });
      }
      expected.set(user, mine);
    }
    for (const [user, mine] of expected) {
      const all = await manager.searchMemories({ userId: user, limit: 100 });
      expect({ user, ids: all.map((r) => r.id).sort() }).toEqual({ user, ids: mine.map((m) => m.id).sort() });
      for (const tag of tags) {
        const tagged = await manager.searchMemories({ userId: user, tags: [tag], limit: 100 });
        const want = mine.filter((m) => m.tags.includes(tag)).map((m) => m.id).sort();
        expect({ user, tag, ids: tagged.map((r) => r.id).sort() }).toEqual({ user, tag, ids: want });
      }
    }
    // Deleting through odd names removes exactly that user's keys.
    for (const { id } of expected.get("x:by-time")!) expect(await manager.deleteMemory(id)).toBe(true);
    expect((await manager.searchMemories({ userId: "x" })).length).toBe(expected.get("x")!.length);
    expect(await manager.searchMemories({ userId: "x:by-time" })).toEqual([]);
  });
});
