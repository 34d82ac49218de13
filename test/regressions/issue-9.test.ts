/**
 * Issue 9, re-checked independently: one test per reproduced defect, written from the words
 * against the public API (plus the memory store and fake provider the library ships).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  ChainOfThought,
  CodeAct,
  FewShotExample,
  Instrumentation,
  LM,
  MemoryManager,
  Module,
  Predict,
  ProgramOfThought,
  Prompt,
  ReAct,
  RedisStore,
  Sandbox,
  Signature,
  Temporal,
  ValidationError,
  configure,
  resetConfiguration,
  t,
  tool,
  type TypelmEvent,
} from "../../lib/index.js";
import { ScriptedLM, startFakeProvider, type FakeProvider } from "../../lib/testing/index.js";
import { closeStore } from "../../lib/store/db.js";
import { describeWithRedis } from "../memory/with-redis.js";
import { captureLogLines } from "../lm/helpers.js";

afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
  LM.resetConfiguration();
});

describeWithRedis("issue 9: Redis memory", ({ redis, connect, namespace }) => {
  let n = 0;
  const manager = (client = redis(), ns = `${namespace()}:r9-${++n}`) => ({ ns, m: new MemoryManager(new RedisStore(client, ns)) });

  it("Redis memory loses updates: concurrent text and tags updates of one record both survive", async () => {
    const { ns, m } = manager();
    const other = new MemoryManager(new RedisStore(connect(), ns));
    for (let round = 0; round < 20; round++) {
      const id = await m.storeMemory("old text", { userId: "u", tags: ["old"] });
      await Promise.all([m.updateMemory(id, { text: `new text ${round}` }), other.updateMemory(id, { tags: ["new", `r${round}`] })]);
      const record = await m.retrieveMemory(id);
      expect({ text: record?.text, tags: record?.tags }).toEqual({ text: `new text ${round}`, tags: ["new", `r${round}`] });
      expect((await m.searchMemories({ userId: "u", tags: [`r${round}`] })).map((r) => r.id)).toEqual([id]);
    }
    expect(await m.searchMemories({ userId: "u", tags: ["old"] })).toEqual([]);
  });

  it("Redis memory: an update racing a delete leaves no half-indexed record", async () => {
    const { ns, m } = manager();
    const other = new MemoryManager(new RedisStore(connect(), ns));
    for (let round = 0; round < 20; round++) {
      const id = await m.storeMemory(`text ${round}`, { userId: "u", tags: ["a"] });
      await Promise.all([other.updateMemory(id, { text: "changed", tags: ["b", "c"] }), m.deleteMemory(id)]);
      expect(await m.retrieveMemory(id)).toBeNull();
    }
    // Nothing of any deleted record is left under any key of the namespace.
    const keys = await redis().keys(`${ns}:*`);
    const leftovers: Record<string, string[]> = {};
    for (const key of keys) {
      const type = await redis().type(key);
      if (type === "set") leftovers[key] = await redis().smembers(key);
      else if (type === "zset") leftovers[key] = await redis().zrange(key, "0", "-1");
      else if (type === "hash") leftovers[key] = ["hash"];
    }
    expect(Object.values(leftovers).flat()).toEqual([]);
    expect(await m.searchMemories({ userId: "u" })).toEqual([]);
    expect(await m.searchMemories({ userId: "u", tags: ["b"] })).toEqual([]);
  });

  it("Redis keys are not escaped: user ids x:by-time, a:tag:b and ids/tags of ':', '*', '{', spaces, unicode never collide", async () => {
    const { m } = manager();
    // Spaces alone are ids and tags too (only the empty string is refused).
    const users = ["x", "x:by-time", "a", "a:tag:b", "a:tag", ":", "*", "{", "{a}", " ", "  ", "a b", "é", "日本", "😀", "x:", "*:tag:*", "user:x", "%3A"];
    const tags = ["b", "tag:b", ":", "*", "{", "}", " ", "  ", "a b", " x ", "é", "😀", "by-time", "%2A"];
    for (const user of users) {
      for (const tag of tags) await m.storeMemory(`${user}|${tag}`, { userId: user, tags: [tag] });
    }
    for (const user of users) {
      const all = await m.searchMemories({ userId: user, limit: 1000 });
      expect(all.map((r) => r.text).sort()).toEqual(tags.map((tag) => `${user}|${tag}`).sort());
      for (const tag of tags) {
        const found = await m.searchMemories({ userId: user, tags: [tag] });
        expect(found.map((r) => r.text)).toEqual([`${user}|${tag}`]);
      }
    }
  });
});

describe("issue 9: records", () => {
  const Counts = Signature.define({
    name: "Counts9",
    input: { scores: z.record(z.string(), z.record(z.string(), z.boolean())) },
    output: { counts: z.record(z.string(), z.number()) },
  });

  it("A record key named __proto__ in a model's reply is kept, and cannot set a prototype of input records", async () => {
    const lm = new ScriptedLM(['{"counts": {"a": 1, "__proto__": {"polluted": 1}, "b": 2}}'.replace('{"polluted": 1}', "5")]);
    const input = JSON.parse('{"__proto__": {"polluted": true}, "x": {"y": false}}') as Record<string, Record<string, boolean>>;
    const r = await new Predict(Counts).call({ scores: input }, { lm });
    expect(Object.getOwnPropertyNames(r.counts)).toEqual(["a", "__proto__", "b"]);
    expect(Object.getOwnPropertyDescriptor(r.counts, "__proto__")?.value).toBe(5);
    expect(Object.getPrototypeOf(r.counts)).toBe(Object.prototype);
    // The input record as the model saw it, and as the predictor handed it on.
    const user = lm.requests[0]!.messages.find((msg) => msg.role === "user")!.content;
    expect(user).toContain('"__proto__":{"polluted":true}');
    const seen = lm.requests[0]!.inputs!.scores as Record<string, unknown>;
    expect(Object.getPrototypeOf(seen)).toBe(Object.prototype);
    expect(Object.getOwnPropertyNames(seen)).toEqual(["__proto__", "x"]);
    expect((seen as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();

    // A record value under the key is still checked.
    await expect(new Predict(Counts).call({ scores: JSON.parse('{"__proto__": {"y": 9}}') as Record<string, Record<string, boolean>> }, { lm })).rejects.toThrow(
      /Input field "scores.__proto__" of Counts9: expected .*, received \{"y":9\}/,
    );
    // Tool arguments keep it too.
    const got: Array<Record<string, number>> = [];
    const keep = tool({ name: "keep", description: "d", input: { m: z.record(z.string(), z.number()) }, call: ({ m }) => got.push(m) });
    expect(await keep.invoke('{"m": {"__proto__": 4}}')).toEqual({ ok: true, value: 1 });
    expect(Object.getOwnPropertyDescriptor(got[0], "__proto__")?.value).toBe(4);
    expect(Object.getPrototypeOf(got[0])).toBe(Object.prototype);
    expect((await keep.invoke('{"m": {"__proto__": "x"}}')).ok).toBe(false);

    const Nested = Signature.define({ name: "Nested9", output: { m: z.record(z.string(), z.object({ x: z.number() })) } });
    const r2 = await new Predict(Nested).call({}, { lm: new ScriptedLM(['{"m": {"__proto__": {"x": 3}}}']) });
    expect(Object.getPrototypeOf(r2.m)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(r2.m, "__proto__")?.value).toEqual({ x: 3 });
  });
});

describe("issue 9: prompts and modules", () => {
  const Classify = Signature.define({
    name: "Classify9",
    description: "Classify the sentence.",
    input: { sentence: z.string() },
    output: { label: z.enum(["pos", "neg"]) },
  });
  const demo = (sentence: string, label: string) => new FewShotExample({ input: { sentence }, output: { label } });

  it("Stale prompts: p.demos[0] = … in place changes the system prompt; a demo's contents cannot change behind the cache", async () => {
    const p = new Predict(Classify, { demos: [demo("first demo sentence", "pos")] });
    const lm = new ScriptedLM([{ label: "pos" }, { label: "neg" }, { label: "pos" }, { label: "pos" }]);
    const sent = (i: number) => lm.requests[i]!.messages.map((msg) => msg.content).join("\n");
    await p.call({ sentence: "s" }, { lm });
    expect(sent(0)).toContain("first demo sentence");
    p.demos[0] = demo("second demo sentence", "neg");
    await p.call({ sentence: "s" }, { lm });
    expect(sent(1)).toContain("second demo sentence");
    expect(sent(1)).not.toContain("first demo sentence");
    p.demos.push(demo("third demo sentence", "pos"));
    p.demos.reverse();
    await p.call({ sentence: "s" }, { lm });
    expect(sent(2).indexOf("third demo sentence")).toBeLessThan(sent(2).indexOf("second demo sentence"));
    // A demo's values cannot be changed under the cached prompt: either the change is refused, or it shows.
    const values = p.demos[0]!.input as Record<string, unknown>;
    try {
      values.sentence = "mutated behind the cache";
    } catch {
      // frozen: refused in strict mode
    }
    await p.call({ sentence: "s" }, { lm });
    const changed = values.sentence === "mutated behind the cache";
    expect(sent(3).includes("mutated behind the cache")).toBe(changed);
    expect(changed).toBe(false);
  });

  it("Stale prompts, every predictor kind: agent.demos[0] = … and push in place reach the prompts of ReAct, CodeAct, ChainOfThought, ProgramOfThought", () => {
    const Q = Signature.define({ name: "Q9", input: { q: z.string() }, output: { a: z.string() } });
    const qd = (q: string) => new FewShotExample({ input: { q }, output: { a: "x" } });
    const systems = (m: Module) => m.namedPredictors().map(([, p]) => (p as Predict).prompt().system()).join("\n");
    for (const agent of [new ReAct(Q, { tools: [] }), new CodeAct(Q), new ChainOfThought(Q), new ProgramOfThought(Q)] as Module[]) {
      const tuned = agent as unknown as { demos: FewShotExample[] };
      tuned.demos = [qd("original demo question")];
      expect(systems(agent)).toContain("original demo question");
      tuned.demos[0] = qd("replaced demo question");
      tuned.demos.push(qd("pushed demo question"));
      const after = systems(agent);
      expect({ kind: agent.constructor.name, replaced: after.includes("replaced demo question"), pushed: after.includes("pushed demo question"), stale: after.includes("original demo question") })
        .toEqual({ kind: agent.constructor.name, replaced: true, pushed: true, stale: false });
      expect(tuned.demos.map((d) => d.input.q)).toEqual(["replaced demo question", "pushed demo question"]);
      tuned.demos.reverse();
      expect(systems(agent).indexOf("pushed demo question")).toBeLessThan(systems(agent).indexOf("replaced demo question"));
      tuned.demos.splice(0, 1);
      expect(tuned.demos.map((d) => d.input.q)).toEqual(["replaced demo question"]);
      expect(systems(agent)).not.toContain("pushed demo question");
    }
  });

  it("Module.clone() copies a back-reference and a shared sub-module once", () => {
    class Inner extends Module {
      p = new Predict(Classify);
      parent: Module | undefined;
      async forward() {
        return {};
      }
    }
    class Outer extends Module {
      inner = new Inner();
      left: Inner;
      right: Inner;
      constructor() {
        super();
        this.inner.parent = this; // back-reference
        this.left = new Inner();
        this.right = this.left; // one sub-module under two properties
      }
      async forward() {
        return {};
      }
    }
    const o = new Outer();
    const c = o.clone();
    expect(c).not.toBe(o);
    expect(c.inner).not.toBe(o.inner);
    expect(c.inner.parent).toBe(c);
    expect(c.left).not.toBe(o.left);
    expect(c.right).toBe(c.left);
    expect(c.left.p).not.toBe(o.left.p);
    c.left.p.instruction = "changed";
    expect(o.left.p.instruction).toBe("Classify the sentence.");
    expect(c.right.p.instruction).toBe("changed");
  });

  it("ReAct with an output named history is rejected", () => {
    const WithHistory = Signature.define({ name: "WithHistory9", input: { q: z.string() }, output: { history: z.string() } });
    expect(() => new ReAct(WithHistory, { tools: [] })).toThrow(ValidationError);
    expect(() => new ReAct(WithHistory, { tools: [] })).toThrow(/history/);
  });

  it("TOON template of a recursive struct does not overflow the stack", () => {
    type Tree = { label: string; children: Tree[] };
    const Tree: z.ZodType<Tree> = z.lazy(() => z.object({ label: z.string(), children: z.array(Tree) }));
    type Person = { name: string; boss: Person | null };
    const Person: z.ZodType<Person> = z.lazy(() => z.object({ name: z.string(), boss: Person.nullable() }));
    const S = Signature.define({ name: "Trees9", output: { root: Tree, forest: z.array(Tree), person: Person } });
    const system = Prompt.fromSignature(S, { dataFormat: "toon" }).system();
    expect(system).toContain("root:\n  label: <string>\n");
    expect(system).toContain('person:\n  name: <string>\n  boss: <same fields as "person" or null>');
  });
});

describe("issue 9: LM cache and strict output", () => {
  let a: FakeProvider;
  let b: FakeProvider;
  beforeAll(async () => {
    [a, b] = await Promise.all([startFakeProvider(), startFakeProvider()]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });
  const ask = [{ role: "user" as const, content: "same question" }];
  const openai = (fake: FakeProvider, extra: Record<string, unknown> = {}) =>
    new LM("openai/same-model", { apiKey: "sk-issue9-key-000", baseURL: fake.openaiBaseURL, cache: { path: ":memory:" }, ...extra });

  it("LM cache keys on the endpoint: two servers with the same model name keep their own replies", async () => {
    a.reset();
    b.reset();
    a.reply("reply from A", { finishReason: "stop" }).reply("A again", { finishReason: "stop" });
    b.reply("reply from B", { finishReason: "stop" });
    // One cache file for both (":memory:" would give each LM a private store and prove nothing).
    const dir = mkdtempSync(join(tmpdir(), "typelm-issue9-"));
    const cache = { path: join(dir, "cache.sqlite") };
    try {
      const lmA = new LM("openai/same-model", { apiKey: "sk-issue9-key-000", baseURL: a.openaiBaseURL, cache });
      const lmB = new LM("openai/same-model", { apiKey: "sk-issue9-key-000", baseURL: b.openaiBaseURL, cache });
      expect((await lmA.chat({ messages: ask })).content).toBe("reply from A");
      expect((await lmB.chat({ messages: ask })).content).toBe("reply from B");
      expect((await lmA.chat({ messages: ask })).content).toBe("reply from A");
      // A fresh LM on A's server (new in-memory LRU) is served from the file: the cache does work.
      const again = new LM("openai/same-model", { apiKey: "sk-issue9-key-000", baseURL: a.openaiBaseURL, cache });
      expect(await again.chat({ messages: ask })).toMatchObject({ content: "reply from A", cached: true });
      expect([a.requests.length, b.requests.length]).toEqual([1, 1]);
    } finally {
      await closeStore(cache.path);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("LM cache never caches finishReason length or refusals", async () => {
    a.reset();
    const lm = openai(a);
    a.reply("cut off", { finishReason: "length" }).reply("filtered", { finishReason: "content_filter" }).reply("whole", { finishReason: "stop" });
    expect((await lm.chat({ messages: ask })).content).toBe("cut off");
    expect((await lm.chat({ messages: ask })).content).toBe("filtered");
    expect((await lm.chat({ messages: ask })).content).toBe("whole");
    expect((await lm.chat({ messages: ask })).content).toBe("whole");
    expect(a.requests).toHaveLength(3);
    // Anthropic's refusal stop reason.
    const anthropic = new LM("anthropic/claude-x", { apiKey: "sk-issue9-key-000", baseURL: a.url, cache: { path: ":memory:" } });
    a.reply("I can't help", { finishReason: "refusal" }).reply("fine", { finishReason: "end_turn" });
    expect((await anthropic.chat({ messages: ask })).content).toBe("I can't help");
    expect((await anthropic.chat({ messages: ask })).content).toBe("fine");
    expect((await anthropic.chat({ messages: ask })).content).toBe("fine");
    expect(a.requests).toHaveLength(5);
  });

  it("LM cache coalesces identical in-flight requests into one provider call", async () => {
    a.reset();
    const lm = openai(a);
    a.delay(200).reply("shared", { finishReason: "stop" });
    const replies = await Promise.all(Array.from({ length: 5 }, () => lm.chat({ messages: ask })));
    expect(replies.map((r) => r.content)).toEqual(Array(5).fill("shared"));
    expect(a.requests).toHaveLength(1);
  });

  it("OpenAI strict structured output with a z.record falls back to strict: false, with a debug-level event", async () => {
    a.reset();
    const lines = captureLogLines("json");
    const Tally = Signature.define({ name: "Tally9", input: { text: z.string() }, output: { counts: z.record(z.string(), z.number()) } });
    const Plain = Signature.define({ name: "Plain9", input: { text: z.string() }, output: { n: z.number() } });
    const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-issue9-key-000", baseURL: a.openaiBaseURL, structuredOutputs: true });
    a.reply({ counts: { x: 2 } }).reply({ n: 1 });
    const r = await new Predict(Tally).call({ text: "x x" }, { lm });
    expect(r.counts).toEqual({ x: 2 });
    await new Predict(Plain).call({ text: "x" }, { lm });
    const [recordRequest, plainRequest] = a.requests;
    expect(recordRequest!.body.response_format.type).toBe("json_schema");
    expect(recordRequest!.body.response_format.json_schema.strict).toBe(false);
    // The schema goes as it is: forcing additionalProperties: false would forbid every key.
    expect(recordRequest!.body.response_format.json_schema.schema.properties.counts).toEqual({ type: "object", additionalProperties: { type: "number" } });
    expect(plainRequest!.body.response_format.json_schema.strict).toBe(true);
    const fallback = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => JSON.stringify(l).includes("lm.structured.fallback"));
    expect(fallback).toHaveLength(1);
    expect(fallback[0]!.level).toBe("debug");
    // Any other schema strict mode cannot express falls back too: z.unknown() is `{}`, which has no type.
    const Anything = Signature.define({ name: "Anything9", input: { text: z.string() }, output: { v: z.unknown(), w: z.array(z.any()) } });
    a.reply({ v: 1, w: [] });
    await new Predict(Anything).call({ text: "x" }, { lm });
    expect(a.requests[2]!.body.response_format.json_schema.strict).toBe(false);
    // At info level it is not shown.
    lines.length = 0;
    configure((c) => {
      c.logger.level = "info";
    });
    a.reply({ counts: {} });
    await new Predict(Tally).call({ text: "y" }, { lm });
    expect(lines.filter((l) => l.includes("lm.structured.fallback"))).toEqual([]);
  });
});

describe("issue 9: tools and sandbox", () => {
  it("Tools: Tool.jsonSchema() on date inputs, and invoke converts ISO strings to dates end to end through ReAct", async () => {
    const seen: unknown[] = [];
    const book = tool({
      name: "book",
      description: "Book a day",
      input: { day: t.date(), at: z.date() },
      call: ({ day, at }) => {
        seen.push(day, at);
        return `${day.toString()} ${at.toISOString()}`;
      },
    });
    expect(book.jsonSchema().properties).toEqual({
      day: { type: "string", format: "date" },
      at: { type: "string", format: "date-time" },
    });
    const Ask = Signature.define({ name: "Ask9", input: { q: z.string() }, output: { a: z.string() } });
    const lm = new ScriptedLM([
      { thought: "book it", action: "book", toolInput: { day: "2025-03-01", at: "2025-03-01T10:00:00+01:00" } },
      { thought: "done", action: "finish", toolInput: {} },
      { a: "booked" },
    ]);
    const r = await new ReAct(Ask, { tools: [book] }).call({ q: "book" }, { lm });
    expect(seen[0]).toBeInstanceOf(Temporal.PlainDate);
    expect(seen[1]).toBeInstanceOf(Date);
    expect(r.history[0]!.observation).toBe("2025-03-01 2025-03-01T09:00:00.000Z");
    const tools = String(lm.requests[0]!.inputs!.availableTools);
    expect(tools).toContain('"day":{"type":"string","format":"date"}');
  });

  it("Sandbox caps tool calls per run with a clear error", async () => {
    let calls = 0;
    const sb = await Sandbox.create({ maxToolCalls: 5, timeoutMs: 2000, tools: { ping: () => ++calls } });
    try {
      const r = await sb.run("for (let i = 0; i < 1000; i++) { try { ping(i); } catch (e) {} } 'done'");
      expect(calls).toBe(5);
      expect(r.error).toMatch(/tool call limit of 5 calls per run exceeded/);
      // The next run has its own budget.
      expect((await sb.run("await ping(); 'ok'")).result).toBe("ok");
    } finally {
      sb.dispose();
    }
  });

  it("Sandbox compiles the WebAssembly module once across sandboxes", async () => {
    const wasm = (globalThis as unknown as { WebAssembly: Record<string, (...args: unknown[]) => unknown> }).WebAssembly;
    const original = { compile: wasm.compile!, instantiate: wasm.instantiate! };
    let compiles = 0;
    wasm.compile = (...args: unknown[]) => {
      compiles += 1;
      return original.compile.apply(wasm, args);
    };
    // instantiate(bytes) compiles too; instantiate(module) does not.
    wasm.instantiate = (...args: unknown[]) => {
      if (!(args[0] instanceof (wasm.Module as unknown as new () => object))) compiles += 1;
      return original.instantiate.apply(wasm, args);
    };
    try {
      const boxes = await Promise.all(Array.from({ length: 4 }, () => Sandbox.create()));
      for (const box of boxes) expect((await box.run("1 + 1")).result).toBe(2);
      boxes.forEach((box) => box.dispose());
      const more = await Sandbox.create();
      more.dispose();
      expect(compiles).toBeLessThanOrEqual(1);
    } finally {
      Object.assign(wasm, original);
    }
  });
});

describe("issue 9: secrets", () => {
  it("Secrets in user subscribers: a subscriber never receives a registered key, at any depth", () => {
    const key = "sk-issue9-registered-SECRET-42";
    new LM("openai/gpt-4o-mini", { apiKey: key, baseURL: "http://127.0.0.1:9/v1" }); // registers the key
    const received: TypelmEvent[] = [];
    Instrumentation.subscribe(/.*/, (e) => received.push(e));
    for (const depth of [0, 1, 7, 8, 9, 20, 63, 64, 65, 200]) {
      let nested: unknown = { note: `key is ${key}`, [key]: "as a field name", list: [key], map: new Map([[key, key]]), error: new Error(`bad ${key}`) };
      for (let i = 0; i < depth; i++) nested = i % 2 ? { inner: nested } : [nested];
      Instrumentation.emit("lm.request.end", { nested, depth });
    }
    expect(received).toHaveLength(10);
    const text = JSON.stringify(received, (_k, v: unknown) => (v instanceof Map ? [...v] : v));
    expect(text).not.toContain(key);
    expect(text).toContain("key is [REDACTED]");
  });
});
