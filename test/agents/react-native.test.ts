// ReAct with native tool calling, through the real SDKs (openai, @anthropic-ai/sdk, ollama) against
// the fake provider: the tools sent as function definitions, one and several calls per turn (several
// run at once: two tools that each wait for the other to start), tool errors as error
// observations, call ids matched to their results, the typed answer (a `finish` call or a final
// reply), abort, streamed tool-call replies read back, and `auto` staying on text for test doubles.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { configure, resetConfiguration } from "../../lib/config.js";
import { ConfigurationError } from "../../lib/errors.js";
import { LM } from "../../lib/lm/lm.js";
import { SimpleOptimizer } from "../../lib/optimize/simple.js";
import { FewShotExample } from "../../lib/prompt/few-shot.js";
import { ReAct, type ReActStep } from "../../lib/predict/react.js";
import { Signature } from "../../lib/signature/signature.js";
import type { FakeProvider, FakeRequest } from "../../lib/testing/fake-provider.js";
import { toolCalls } from "../../lib/testing/fake-tools.js";
import { ScriptedLM } from "../../lib/testing/scripted-lm.js";
import { tool } from "../../lib/tools/tool.js";
import { lmFor, PROVIDER_NAMES, withFakeProvider } from "../lm/helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

const Question = Signature.define({
  name: "Question",
  description: "Answer the question with the tools.",
  input: { question: z.string() },
  output: { answer: z.string(), total: z.number() },
});

const add = tool({ name: "add", description: "Adds two numbers", input: { a: z.number(), b: z.number() }, call: async ({ a, b }) => a + b });

/** Two tools that each finish only once both have started: run one after the other, they never finish. */
function meetingTools(): { left: ReturnType<typeof tool>; right: ReturnType<typeof tool>; started: string[] } {
  const started: string[] = [];
  let arrive!: () => void;
  const both = new Promise<void>((resolve) => { arrive = resolve; });
  const meet = async (name: string): Promise<string> => {
    started.push(name);
    if (started.length === 2) arrive();
    await both;
    return `${name} done`;
  };
  return {
    left: tool({ name: "left", description: "Left half", input: { x: z.number() }, call: async () => meet("left") }),
    right: tool({ name: "right", description: "Right half", input: { x: z.number() }, call: async () => meet("right") }),
    started,
  };
}

/** The tool results as each wire's request carries them, with the ids of the calls they answer. */
function resultsOf(request: FakeRequest): Array<{ callId: string | undefined; name: string | undefined; content: string; isError: boolean }> {
  return request.toolResults;
}

describe.each(PROVIDER_NAMES)("%s: native ReAct through the SDK", (provider) => {
  const ids = provider !== "ollama";

  it("sends the tools as function definitions, runs one call, returns its result under the call's id, and converts finish's arguments", async () => {
    fake.reply(toolCalls([{ id: "call_A1", name: "add", arguments: { a: 2, b: 3 } }], { text: "I add them" }));
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: "five", total: 5 } }]));
    const agent = new ReAct(Question, { tools: [add], toolCalling: "native" });
    const r = await agent.call({ question: "2 + 3?" }, { lm: lmFor(provider, fake) });
    expect(r.answer).toBe("five");
    expect(r.total).toBe(5);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]!.toolNames).toEqual(["add", "finish"]);
    expect(resultsOf(fake.requests[1]!)).toEqual([
      { callId: ids ? "call_A1" : undefined, name: provider === "ollama" ? "add" : undefined, content: "5", isError: false },
    ]);
    const history: ReActStep[] = r.history;
    expect(history.map((s) => [s.action, s.observation, s.callId])).toEqual([
      ["add", 5, ids ? "call_A1" : "ollama_call_0"],
      ["finish", null, ids ? "call_F" : "ollama_call_0"],
    ]);
    expect(history[0]!.thought).toBe("I add them");
  });

  it("runs several calls of one turn at once and returns each result under its own call id", async () => {
    const { left, right, started } = meetingTools();
    fake.reply(toolCalls([{ id: "call_L", name: "left", arguments: { x: 1 } }, { id: "call_R", name: "right", arguments: { x: 2 } }]));
    fake.reply({ answer: "both", total: 2 });
    const agent = new ReAct(Question, { tools: [left, right], toolCalling: "native" });
    const r = await agent.call({ question: "both halves" }, { lm: lmFor(provider, fake) });
    expect(started.sort()).toEqual(["left", "right"]);
    expect(r.history.map((s) => [s.step, s.action, s.observation, s.callId])).toEqual([
      [1, "left", "left done", ids ? "call_L" : "ollama_call_0"],
      [2, "right", "right done", ids ? "call_R" : "ollama_call_1"],
    ]);
    const results = resultsOf(fake.requests[1]!);
    expect(results.map((x) => [x.callId ?? x.name, x.content])).toEqual(ids
      ? [["call_L", "left done"], ["call_R", "right done"]]
      : [["left", "left done"], ["right", "right done"]]);
    // A final reply without a tool call is read as the output fields.
    expect([r.answer, r.total]).toEqual(["both", 2]);
  }, 30_000);

  it("turns a tool's error and invalid arguments into error observations the model reads, and goes on", async () => {
    const boom = tool({ name: "boom", description: "Fails", input: {}, call: async () => { throw new Error("disk on fire"); } });
    fake.reply(toolCalls([
      { id: "call_B", name: "boom", arguments: {} },
      { id: "call_X", name: "add", arguments: { a: "two", b: 3 } },
      { id: "call_U", name: "nope", arguments: {} },
    ]));
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: "gave up", total: 0 } }]));
    const agent = new ReAct(Question, { tools: [add, boom], toolCalling: "native" });
    const r = await agent.call({ question: "q" }, { lm: lmFor(provider, fake) });
    const observations = r.history.slice(0, 3).map((s) => String(s.observation));
    expect(observations[0]).toMatch(/^Error: .*disk on fire/);
    expect(observations[1]).toMatch(/^Error: .*a/);
    expect(observations[2]).toMatch(/^Error: unknown tool "nope"/);
    const results = resultsOf(fake.requests[1]!);
    expect(results.map((x) => x.content)).toEqual(observations);
    // Anthropic's tool_result carries is_error; the other wires have no such flag.
    expect(results.map((x) => x.isError)).toEqual([provider === "anthropic", provider === "anthropic", provider === "anthropic"]);
    expect(r.answer).toBe("gave up");
  });

  it("shows finish arguments that do not convert to the model as an error result, and takes the next finish", async () => {
    fake.reply(toolCalls([{ id: "call_F1", name: "finish", arguments: { answer: "x", total: "many" } }]));
    fake.reply(toolCalls([{ id: "call_F2", name: "finish", arguments: { answer: "x", total: 7 } }]));
    const r = await new ReAct(Question, { tools: [add], toolCalling: "native" }).call({ question: "q" }, { lm: lmFor(provider, fake) });
    expect(r.total).toBe(7);
    const [result] = resultsOf(fake.requests[1]!);
    expect(result!.content).toMatch(/^Error: the finish arguments are not valid output fields/);
  });

  it("streams tool-call replies through the SDK: several calls read back from the stream's deltas", async () => {
    fake.reply(toolCalls([{ id: "call_S1", name: "add", arguments: { a: 1, b: 2 } }, { id: "call_S2", name: "add", arguments: { a: 30, b: 40 } }]), { stream: { chunkChars: 3 } });
    const lm = lmFor(provider, fake);
    const pieces: string[] = [];
    const response = await lm.chat(
      { messages: [{ role: "user", content: "add" }], tools: [{ name: "add", description: "Adds", parameters: add.jsonSchema() }] },
      { onDelta: (t) => pieces.push(t) },
    );
    expect(fake.streams[0]!.ended).toBe(true);
    // Ollama streams a turn's calls whole in one line; the others piece by piece.
    expect(fake.streams[0]!.chunks).toBeGreaterThan(provider === "ollama" ? 1 : 4);
    expect(response.toolCalls).toEqual([
      { id: ids ? "call_S1" : "ollama_call_0", name: "add", arguments: { a: 1, b: 2 } },
      { id: ids ? "call_S2" : "ollama_call_1", name: "add", arguments: { a: 30, b: 40 } },
    ]);
  });

  it("ReAct.stream emits each native step as its call completes, then the answer's fields", async () => {
    fake.reply(toolCalls([{ id: "call_1", name: "add", arguments: { a: 1, b: 1 } }, { id: "call_2", name: "add", arguments: { a: 2, b: 2 } }]));
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: "ok", total: 6 } }]));
    const s = new ReAct(Question, { tools: [add], toolCalling: "native" }).stream({ question: "q" }, { lm: lmFor(provider, fake) });
    const events: Array<[string, unknown]> = [];
    for await (const e of s) events.push(e.type === "step" ? ["step", (e.step as ReActStep).callId] : e.type === "field" ? ["field", e.name] : ["partial", null]);
    const r = await s.result;
    expect(events.filter(([t]) => t === "step").map(([, id]) => id).sort()).toEqual(ids ? ["call_1", "call_2", "call_F"] : ["ollama_call_0", "ollama_call_0", "ollama_call_1"]);
    expect(events.filter(([t]) => t === "field").map(([, n]) => n)).toEqual(["answer", "total"]);
    expect(r.total).toBe(6);
  });

  it("aborts: the signal rejects the stream with an AbortError while the provider has not answered", async () => {
    fake.hang();
    const controller = new AbortController();
    const s = new ReAct(Question, { tools: [add], toolCalling: "native" }).stream({ question: "q" }, { lm: lmFor(provider, fake), signal: controller.signal });
    const seen = (async () => { for await (const _ of s) { /* drain */ } })();
    while (fake.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(s.result).rejects.toMatchObject({ name: "AbortError" });
    await expect(seen).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("OpenAI strict function schemas", () => {
  it("sends strict schemas, and a null for an argument the tool does not require counts as not given", async () => {
    const units = tool({
      name: "weather", description: "Weather", input: { city: z.string(), units: z.enum(["c", "f"]).default("c") },
      call: async ({ city, units: u }) => `${city} in ${u}`,
    });
    fake.reply(toolCalls([{ id: "call_W", name: "weather", arguments: { city: "Oslo", units: null } }]));
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: "cold", total: 1 } }]));
    const r = await new ReAct(Question, { tools: [units], toolCalling: "native" }).call({ question: "q" }, { lm: lmFor("openai", fake) });
    const fn = fake.requests[0]!.body.tools[0].function;
    expect(fn.strict).toBe(true);
    expect(fn.parameters.additionalProperties).toBe(false);
    expect(fn.parameters.required).toEqual(["city", "units"]);
    expect(r.history[0]!.observation).toBe("Oslo in c");
  });
});

describe("toolCalling modes", () => {
  it('"auto" stays on the text protocol with a test double that declares no tool support; "native" refuses it', async () => {
    const lm = new ScriptedLM([
      { thought: "done", action: "finish", toolInput: {} },
      { answer: "text", total: 1 },
    ]);
    const r = await new ReAct(Question, { tools: [add] }).call({ question: "q" }, { lm });
    expect(r.answer).toBe("text");
    expect(r.history[0]!.callId).toBeUndefined();
    await expect(new ReAct(Question, { tools: [add], toolCalling: "native" }).call({ question: "q" }, { lm })).rejects.toThrow(ConfigurationError);
    expect(() => new ReAct(Question, { toolCalling: "always" as never })).toThrow(/toolCalling/);
  });

  it('"auto" is native with a real provider LM; "text" sends no tool definitions', async () => {
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: "n", total: 1 } }]));
    await new ReAct(Question, { tools: [add] }).call({ question: "q" }, { lm: lmFor("openai", fake) });
    expect(fake.requests[0]!.toolNames).toEqual(["add", "finish"]);
    fake.reply({ thought: "t", action: "finish", toolInput: {} });
    fake.reply({ answer: "t", total: 2 });
    await new ReAct(Question, { tools: [add], toolCalling: "text" }).call({ question: "q" }, { lm: lmFor("openai", fake) });
    expect(fake.requests[1]!.toolNames).toEqual([]);
  });
});

describe("optimizing a native agent", () => {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "typelm-native-opt-"));
    configure((c) => { c.lab = { path: join(dir, "lab.sqlite") }; });
  });
  afterEach(() => {
    resetConfiguration();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends the step's current instruction and the extractor's current demos (changed in place too) with its prompt kept between calls", async () => {
    const agent = new ReAct(Question, { tools: [add], toolCalling: "native" });
    const lm = lmFor("openai", fake);
    const finish = () => fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: "x", total: 1 } }]));
    const system = (i: number) => String(fake.requests[i]!.messages[0]!.content);
    finish();
    await agent.call({ question: "first?" }, { lm });
    finish();
    await agent.call({ question: "second?" }, { lm });
    expect(system(1)).toBe(system(0));
    agent.step.instruction = "Use the tools, then answer in one word.";
    finish();
    await agent.call({ question: "third?" }, { lm });
    expect(system(2)).toContain("Use the tools, then answer in one word.");
    agent.extract.demos.push(new FewShotExample({ input: { question: "1 + 1?" }, output: { answer: "two", total: 2 } }));
    finish();
    await agent.call({ question: "fourth?" }, { lm });
    expect(fake.requests[3]!.messages.map((m) => String(m.content)).join("\n")).toContain("1 + 1?");
    expect(fake.requests[2]!.messages.map((m) => String(m.content)).join("\n")).not.toContain("1 + 1?");
  });

  it("SimpleOptimizer bootstraps step demos from native runs, and they reach the request as earlier tool-call turns", async () => {
    // The fake model: calls add, then finishes; it answers "right" only when it was shown a demo tool turn.
    const demoTurn = (req: FakeRequest): boolean => req.body.messages.some((m: any) => (m.tool_calls ?? []).some((c: any) => String(c.id).startsWith("demo_call_")));
    const script = (req: FakeRequest) => {
      const own = req.toolResults.filter((x) => !String(x.callId).startsWith("demo_call_"));
      if (own.length === 0) return toolCalls([{ name: "add", arguments: { a: 1, b: 1 } }]);
      return toolCalls([{ name: "finish", arguments: { answer: demoTurn(req) ? "right" : "wrong", total: 2 } }]);
    };
    for (let i = 0; i < 200; i++) fake.reply(script);
    const agent = new ReAct(Question, { tools: [add], toolCalling: "native" });
    agent.configure((c) => { c.lm = lmFor("openai", fake); });
    const data = ["a", "b", "c", "d"].map((q, i) => new FewShotExample({ input: { question: q }, output: { answer: "right", total: 2 }, id: `q${i}` }));
    const metric = (example: FewShotExample, prediction: any): number => (prediction.answer === example.output["answer"] ? 1 : 0.5);
    const compiled = await new SimpleOptimizer({ seed: 1, numTrials: 2, kDemos: 1, metric }).compile({ moduleInstance: agent, trainingExamples: data });
    expect(compiled.step.demos.length).toBeGreaterThan(0);
    expect(compiled.step.demos[0]!.output).toMatchObject({ action: "add", toolInput: { a: 1, b: 1 } });
    fake.reset();
    fake.reply(script).reply(script);
    const r = await compiled.call({ question: "e" });
    expect(r.answer).toBe("right");
    const messages: any[] = fake.requests[0]!.body.messages;
    const call = messages.findIndex((m) => (m.tool_calls ?? []).some((c: any) => c.id === "demo_call_1"));
    expect(call).toBeGreaterThan(0);
    expect(messages[call + 1]).toEqual({ role: "tool", tool_call_id: "demo_call_1", content: "2" });
    expect(messages[messages.length - 1].role).toBe("user");
  }, 60_000);
});
