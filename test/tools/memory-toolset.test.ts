import { beforeEach, describe, expect, it } from "@jest/globals";
import { Memory } from "../../lib/memory/memory.js";
import { MemoryToolset } from "../../lib/tools/memory-toolset.js";
import type { Tool } from "../../lib/tools/tool.js";

function byName(tools: Tool[]): Record<string, Tool> {
  return Object.fromEntries(tools.map((t) => [t.name, t]));
}

beforeEach(() => Memory.reset());

describe("MemoryToolset", () => {
  it("offers store_memory, retrieve_memory and search_memories", () => {
    expect(MemoryToolset.toTools().map((t) => t.name)).toEqual(["store_memory", "retrieve_memory", "search_memories"]);
    expect(Object.keys(MemoryToolset.tools)).toEqual(["store_memory", "retrieve_memory", "search_memories"]);
  });

  it("unbound tools let the model name the user", async () => {
    const tools = byName(MemoryToolset.toTools());
    expect(tools.store_memory!.jsonSchema().required).toEqual(["text", "userId"]);
    const stored = await tools.store_memory!.invoke({ text: "likes tea", userId: "u1", tags: ["prefs"] });
    expect(stored).toEqual({ ok: true, value: { id: expect.any(String) } });
    const id = (stored as { value: { id: string } }).value.id;
    const retrieved = await tools.retrieve_memory!.invoke({ id });
    expect(retrieved).toEqual({
      ok: true,
      value: { id, text: "likes tea", userId: "u1", tags: ["prefs"], createdAt: expect.any(String), updatedAt: expect.any(String) },
    });
    const found = await tools.search_memories!.invoke({ userId: "u1", query: "TEA" });
    expect(found.ok && (found.value as unknown[]).length).toBe(1);
    expect(await tools.retrieve_memory!.invoke({ id: "nope" })).toEqual({ ok: false, error: 'Tool "retrieve_memory" failed: no memory with id "nope"' });
  });

  it("bound tools have no userId argument and cannot reach another user", async () => {
    const otherId = await Memory.manager.storeMemory("bob's secret", { userId: "bob", tags: ["prefs"] });
    const tools = byName(MemoryToolset.toTools({ userId: "alice" }));
    expect(Object.keys(tools)).toEqual(["store_memory", "retrieve_memory", "search_memories"]);
    for (const t of Object.values(tools)) expect(Object.keys(t.jsonSchema().properties)).not.toContain("userId");

    const stored = await tools.store_memory!.invoke({ text: "alice likes tea", tags: ["prefs"], userId: "bob" });
    const id = (stored as { value: { id: string } }).value.id;
    expect((await Memory.manager.retrieveMemory(id))!.userId).toBe("alice");

    const search = await tools.search_memories!.invoke({ tags: ["prefs"], userId: "bob" });
    expect(search).toEqual({ ok: true, value: [expect.objectContaining({ id, userId: "alice" })] });
    expect(await tools.retrieve_memory!.invoke({ id: otherId })).toEqual({
      ok: false,
      error: `Tool "retrieve_memory" failed: no memory with id "${otherId}"`,
    });
    expect((await tools.retrieve_memory!.invoke({ id })).ok).toBe(true);
  });

  it("uses the store configured at call time", async () => {
    const tools = byName(MemoryToolset.toTools({ userId: "u" }));
    Memory.configure((c) => {
      c.storageAdapter = "in_memory";
    });
    await tools.store_memory!.invoke({ text: "after configure" });
    expect((await Memory.manager.searchMemories({ userId: "u" }))[0]!.text).toBe("after configure");
  });

  it("rejects an empty bound userId", () => {
    expect(() => MemoryToolset.toTools({ userId: "" })).toThrow(/userId: expected a non-empty string/);
  });
});
