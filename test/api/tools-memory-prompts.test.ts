/** API.md "Tools and toolsets", "Memory" and "Prompts" — imports by package name (dist/). */
import { afterAll, describe, expect, test } from "@jest/globals";
import { z } from "zod";
import {
  CalculatorTool, Memory, MemoryToolset, Predict, Prompt, ReAct, Sandbox, Signature, ToonDecodeError, Tool, Toolset, tool,
} from "typelm";
import { ScriptedLM } from "typelm/testing";
import { redisServerInstalled, startRedisServer } from "../helpers/redis.js";

class Weather extends Tool {
  name = "weather";
  description = "Current weather for a city";
  input = { city: z.string(), units: z.enum(["c", "f"]).default("c") };
  async call({ city, units }: { city: string; units: "c" | "f" }) { return `18 ${units} in ${city}`; }
}
class Files extends Toolset {
  static override toolsetName = "files";
  static override tools = {
    read_file: { description: "Read a file", input: { path: z.string() }, call: async ({ path }: any) => `contents of ${path}` },
  };
}

describe("tools", () => {
  test("a Tool subclass: jsonSchema() from the zod shape; arguments validated, defaults applied", async () => {
    const w = new Weather();
    const s = w.jsonSchema() as any;
    expect(s.type).toBe("object");
    expect(Object.keys(s.properties)).toEqual(["city", "units"]);
    expect(s.properties.units.enum).toEqual(["c", "f"]);
    expect(s.required).toEqual(["city"]);
    expect(await w.invoke({ city: "Oslo" })).toEqual({ ok: true, value: "18 c in Oslo" });
    const bad = await w.invoke({ city: 3 });
    expect(bad.ok).toBe(false);
  });

  test("tool({...}) and Toolset.toTools()", async () => {
    const echo = tool({ name: "echo", description: "Echo", input: { text: z.string() }, call: async ({ text }) => text });
    expect(echo.name).toBe("echo");
    expect(await echo.call({ text: "hi" })).toBe("hi");
    const tools = Files.toTools();
    expect(tools.map((t) => t.name)).toEqual(["read_file"]);
    expect(tools[0]).toBeInstanceOf(Tool);
    expect(await tools[0]!.invoke({ path: "/a" })).toEqual({ ok: true, value: "contents of /a" });
  });

  test("CalculatorTool: 2 * (3 + 4) → 14, never eval", async () => {
    const c = new CalculatorTool();
    expect(await c.call({ expression: "2 * (3 + 4)" })).toBe(14);
    const out = await c.invoke({ expression: "process.exit(1)" });
    expect(out.ok).toBe(false);
  });

  test("MemoryToolset.toTools(): store_memory, retrieve_memory, search_memories; { userId } binds the user", async () => {
    Memory.configure((c) => { c.storageAdapter = "in_memory"; });
    expect(MemoryToolset.toTools().map((t) => t.name).sort()).toEqual(["retrieve_memory", "search_memories", "store_memory"]);
    const bound = MemoryToolset.toTools({ userId: "u-bound" });
    const store = bound.find((t) => t.name === "store_memory")!;
    expect(JSON.stringify(store.jsonSchema())).not.toContain("userId");
    await store.invoke({ text: "bound note", userId: "someone-else" });
    const mine = await Memory.manager.searchMemories({ userId: "u-bound", query: "bound note" });
    expect(mine.map((r) => r.text)).toEqual(["bound note"]);
    expect(await Memory.manager.searchMemories({ userId: "someone-else", query: "bound note" })).toEqual([]);
  });
});

describe("Sandbox", () => {
  test("create/run/dispose: { output, result, error }; state persists; code errors never throw", async () => {
    const sb = await Sandbox.create({ timeoutMs: 2000, memoryLimitBytes: 32 * 1024 * 1024 });
    try {
      const a = await sb.run("var x = 20; console.log('hello'); x + 1");
      expect(a.output).toContain("hello");
      expect(a.result).toBe(21);
      expect(a.error).toBeNull();
      const b = await sb.run("x * 2");
      expect(b.result).toBe(40);
      const c = await sb.run("throw new Error('boom')");
      expect(c.error).toMatch(/boom/);
      const d = await sb.run("while (true) {}");
      expect(typeof d.error).toBe("string");
    } finally { sb.dispose(); }
  });

  test("memoryLimitBytes bounds the guest: an over-large allocation is an error, not a crash", async () => {
    const sb = await Sandbox.create({ timeoutMs: 5000, memoryLimitBytes: 8 * 1024 * 1024 });
    try {
      const r = await sb.run("const a = []; for (let i = 0; i < 1e7; i++) a.push('x' + i); a.length");
      expect(typeof r.error).toBe("string");
    } finally { sb.dispose(); }
  });
});

describe("Memory", () => {
  const roundTrip = async () => {
    const id = await Memory.manager.storeMemory("likes tea", { userId: "u1", tags: ["prefs"] });
    await new Promise((r) => setTimeout(r, 5));
    await Memory.manager.storeMemory("likes green tea more", { userId: "u1", tags: ["prefs"] });
    await Memory.manager.storeMemory("likes tea too", { userId: "u2", tags: ["prefs"] });
    const rec = await Memory.manager.retrieveMemory(id);
    expect(rec).toMatchObject({ id, text: "likes tea", userId: "u1", tags: ["prefs"] });
    expect(rec!.createdAt).toBeDefined();
    expect(rec!.updatedAt).toBeDefined();
    expect(await Memory.manager.retrieveMemory("no-such-id")).toBeNull();
    const found = await Memory.manager.searchMemories({ userId: "u1", tags: ["prefs"], query: "tea", limit: 50 });
    expect(found.map((r) => r.text)).toEqual(["likes green tea more", "likes tea"]);
    expect(found.every((r) => r.userId === "u1")).toBe(true);
    expect((await Memory.manager.searchMemories({ userId: "u1", limit: 1 })).map((r) => r.text)).toEqual(["likes green tea more"]);
  };

  test("in_memory adapter: store, retrieve (null when absent), search newest first, never another user's", async () => {
    Memory.configure((c) => { c.storageAdapter = "in_memory"; });
    await roundTrip();
  });

  const redis = redisServerInstalled() ? test : test.skip;
  let stop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    Memory.configure((c) => { c.storageAdapter = "in_memory"; c.redisClient = undefined; });
    await stop?.();
  });
  redis("redis adapter (ioredis, a real server): the same contract", async () => {
    const server = await startRedisServer();
    const client = server.client();
    stop = async () => { client.disconnect(); await server.stop(); };
    Memory.configure((c) => { c.storageAdapter = "redis"; c.redisClient = client; c.redisNamespace = server.namespace; });
    await roundTrip();
    expect((await client.keys(`${server.namespace}*`)).length).toBeGreaterThan(0);
  }, 30_000);
});

describe("Prompt", () => {
  class Classify extends Signature {
    static override description = "Classify the sentiment of a sentence.";
    static override input = { sentence: z.string() };
    static override output = { sentiment: z.enum(["positive", "negative", "neutral"]), confidence: z.number().optional() };
  }

  test("fromSignature: system() and user(inputs); JSON Schema by default, BAML on request", () => {
    const json = Prompt.fromSignature(Classify);
    expect(json.system()).toContain("Classify the sentiment of a sentence.");
    expect(json.system()).toContain('"enum"');
    expect(json.user({ sentence: "USER-INPUT-TEXT" })).toContain("USER-INPUT-TEXT");
    const baml = Prompt.fromSignature(Classify, { schemaFormat: "baml" }).system();
    expect(baml).toMatch(/class \w*Output \{/);
    expect(baml).toMatch(/sentiment "positive" \| "negative" \| "neutral"/);
    expect(baml).not.toContain('"enum"');
  });

  test("TOON schema format, and dataFormat toon: fenced values, decoded replies, ToonDecodeError", async () => {
    const toonSchema = Prompt.fromSignature(Classify, { schemaFormat: "toon" }).system();
    expect(toonSchema).toContain("sentiment");
    expect(toonSchema).not.toContain('"enum"');
    const lm = new ScriptedLM([{ sentiment: "negative" }, "```toon\nsentiment: [unclosed\n  - : :\n```"], { dataFormat: "toon" });
    const r = await new Predict(Classify).call({ sentence: "TOON-INPUT" }, { lm });
    expect(r.sentiment).toBe("negative");
    const sent = lm.requests[0]!.messages.map((m) => m.content).join("\n");
    expect(sent).toContain("```toon");
    await expect(new Predict(Classify).call({ sentence: "x" }, { lm })).rejects.toThrow(ToonDecodeError);
  });

  test("an agent invalid tool argument is an observation; ReAct accepts Tool, tool() and toolset tools", async () => {
    const lm = new ScriptedLM([
      { thought: "t", action: "weather", toolInput: { city: "Oslo" } },
      { thought: "t", action: "read_file", toolInput: { path: "/x" } },
      { thought: "t", action: "finish", toolInput: {} },
      { answer: "done" },
    ]);
    const Q = Signature.define({ name: "Q", description: "Answer.", input: { question: z.string() }, output: { answer: z.string() } });
    const r = await new ReAct(Q, { tools: [new Weather(), ...Files.toTools()] }).call({ question: "q" }, { lm });
    expect(r.history.map((h) => h.observation)).toEqual(["18 c in Oslo", "contents of /x", null]);
  });
});
