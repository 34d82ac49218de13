// CodeAct with native tool calling, through the real SDKs (openai, @anthropic-ai/sdk, ollama) against
// the fake provider: code sent as `run_code` calls and run in the sandbox (variables persist, the
// agent's tools callable from the code), outputs returned under the call ids, a code error as an error
// result, `finish` converted to typed outputs (and shown back when it does not convert), and the
// `toolCalling` modes ("auto" stays on text for test doubles; "text" sends no tool definitions).
import { beforeEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { ConfigurationError } from "../../lib/errors.js";
import { LM } from "../../lib/lm/lm.js";
import { FewShotExample } from "../../lib/prompt/few-shot.js";
import { CodeAct, type CodeActStep } from "../../lib/predict/codeact.js";
import { Signature } from "../../lib/signature/signature.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { toolCalls } from "../../lib/testing/fake-tools.js";
import { ScriptedLM } from "../../lib/testing/scripted-lm.js";
import { tool } from "../../lib/tools/tool.js";
import { lmFor, PROVIDER_NAMES, withFakeProvider } from "../lm/helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

const Task = Signature.define({
  name: "Task",
  description: "Solve the arithmetic task.",
  input: { task: z.string(), n: z.number().int() },
  output: { answer: z.number().int(), parity: z.enum(["even", "odd"]) },
});

const add = tool({ name: "add", description: "Adds two numbers", input: { a: z.number(), b: z.number() }, call: async ({ a, b }) => a + b });

describe.each(PROVIDER_NAMES)("%s: native CodeAct through the SDK", (provider) => {
  const ids = provider !== "ollama";
  const id = (own: string, k = 0): string => (ids ? own : `ollama_call_${k}`);

  it("runs run_code calls in the sandbox (variables persist, tools callable), returns outputs under the call ids, and converts finish", async () => {
    fake.reply(toolCalls([{ id: "call_C1", name: "run_code", arguments: { code: "const d = inputs.n * 2;\nconsole.log(d)" } }], { text: "Double n." }));
    fake.reply(toolCalls([{ id: "call_C2", name: "run_code", arguments: { code: "await add({ a: d, b: 1 })" } }]));
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: 43, parity: "odd", solution: "2n + 1 = 43" } }]));
    const r = await new CodeAct(Task, { tools: [add], toolCalling: "native" }).call({ task: "double n, add one", n: 21 }, { lm: lmFor(provider, fake) });
    expect([r.answer, r.parity, r.solution]).toEqual([43, "odd", "2n + 1 = 43"]);
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[0]!.toolNames).toEqual(["run_code", "finish"]);
    const history: CodeActStep[] = r.history;
    expect(history).toEqual([
      { step: 1, thought: "Double n.", code: "const d = inputs.n * 2;\nconsole.log(d)", output: "42\n", error: null, callId: id("call_C1") },
      { step: 2, thought: "", code: "await add({ a: d, b: 1 })", output: "=> 43", error: null, callId: id("call_C2") },
    ]);
    expect(fake.requests[1]!.toolResults).toEqual([
      { callId: ids ? "call_C1" : undefined, name: provider === "ollama" ? "run_code" : undefined, content: "42\n", isError: false },
    ]);
    expect(fake.requests[2]!.toolResults.map((x) => [x.callId, x.content])).toEqual([
      [ids ? "call_C1" : undefined, "42\n"],
      [ids ? "call_C2" : undefined, "=> 43"],
    ]);
  }, 30_000);

  it("returns a code error and an unknown function as error results the model reads, runs a turn's calls in order, and goes on", async () => {
    fake.reply(toolCalls([
      { id: "call_E", name: "run_code", arguments: { code: "console.log('before');\nsquar(2)" } },
      { id: "call_U", name: "add", arguments: { a: 1, b: 2 } },
      { id: "call_OK", name: "run_code", arguments: { code: "const squar = (x) => x * x;\nsquar(inputs.n)" } },
    ]));
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: 9, parity: "odd", solution: "3 squared" } }]));
    const r = await new CodeAct(Task, { tools: [add], toolCalling: "native" }).call({ task: "square n", n: 3 }, { lm: lmFor(provider, fake) });
    expect(r.history.map((s) => [s.step, s.error === null, s.callId])).toEqual([
      [1, false, id("call_E", 0)], [2, false, id("call_U", 1)], [3, true, id("call_OK", 2)],
    ]);
    expect(r.history[0]!.error).toMatch(/^ReferenceError: .*squar/);
    expect(r.history[1]!.error).toMatch(/^unknown function "add"; call "run_code"/);
    expect(r.history[2]!.output).toBe("=> 9");
    const results = fake.requests[1]!.toolResults;
    expect(results.map((x) => x.content)).toEqual([`before\nError: ${r.history[0]!.error}`, `Error: ${r.history[1]!.error}`, "=> 9"]);
    // Anthropic's tool_result carries is_error; the other wires have no such flag.
    expect(results.map((x) => x.isError)).toEqual([provider === "anthropic", provider === "anthropic", false]);
    expect(r.answer).toBe(9);
  }, 30_000);

  it("shows finish arguments that do not convert as an error result, and takes the next finish", async () => {
    fake.reply(toolCalls([{ id: "call_F1", name: "finish", arguments: { answer: 4.5, parity: "even", solution: "s" } }]));
    fake.reply(toolCalls([{ id: "call_F2", name: "finish", arguments: { answer: 4, parity: "even", solution: "s" } }]));
    const r = await new CodeAct(Task, { toolCalling: "native" }).call({ task: "t", n: 2 }, { lm: lmFor(provider, fake) });
    expect(r.answer).toBe(4);
    const [result] = fake.requests[1]!.toolResults;
    expect(result!.callId).toBe(ids ? "call_F1" : undefined);
    expect(result!.content).toMatch(/^Error: the finish arguments are not valid output fields/);
  });
});

describe("native CodeAct: stream and demos", () => {
  it("CodeAct.stream emits each run_code step with its callId, then the answer's fields", async () => {
    fake.reply(toolCalls([{ id: "call_1", name: "run_code", arguments: { code: "inputs.n + 1" } }, { id: "call_2", name: "run_code", arguments: { code: "inputs.n + 2" } }]));
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: 4, parity: "even", solution: "n + 2" } }]));
    const s = new CodeAct(Task, { toolCalling: "native" }).stream({ task: "t", n: 2 }, { lm: lmFor("anthropic", fake) });
    const events: Array<[string, unknown]> = [];
    for await (const e of s) {
      if (e.type === "step") events.push(["step", [(e.step as CodeActStep).callId, (e.step as CodeActStep).output]]);
      if (e.type === "field") events.push(["field", e.name]);
    }
    const r = await s.result;
    expect(events).toEqual([["step", ["call_1", "=> 3"]], ["step", ["call_2", "=> 4"]], ["field", "answer"], ["field", "parity"], ["field", "solution"]]);
    expect(r.history.map((h) => h.callId)).toEqual(["call_1", "call_2"]);
  }, 30_000);

  it("replays a step demo with code as an earlier run_code turn before the task's own message", async () => {
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: 6, parity: "even", solution: "3n" } }]));
    const agent = new CodeAct(Task, { toolCalling: "native" });
    agent.step.demos = [new FewShotExample({
      input: { task: "triple n", n: 1, trajectory: "(no steps yet)", availableTools: "(none)" },
      output: { thought: "Triple it.", code: "inputs.n * 3", finished: true },
    })];
    await agent.call({ task: "triple n", n: 2 }, { lm: lmFor("openai", fake) });
    const messages: any[] = fake.requests[0]!.body.messages;
    const call = messages.findIndex((m) => (m.tool_calls ?? []).some((c: any) => c.id === "demo_call_1"));
    expect(call).toBeGreaterThan(0);
    expect(messages[call].tool_calls[0].function).toEqual({ name: "run_code", arguments: JSON.stringify({ code: "inputs.n * 3" }) });
    expect(messages[call + 1]).toEqual({ role: "tool", tool_call_id: "demo_call_1", content: "(output not recorded)" });
    expect(messages[messages.length - 1].role).toBe("user");
  });
});

describe("CodeAct toolCalling modes", () => {
  it('"auto" stays on the text protocol with a test double; "native" refuses it; an unknown mode is refused', async () => {
    const lm = new ScriptedLM([
      { thought: "t", code: "inputs.n + 1", finished: true },
      { answer: 3, parity: "odd", solution: "n + 1" },
    ]);
    const r = await new CodeAct(Task).call({ task: "t", n: 2 }, { lm });
    expect(r.answer).toBe(3);
    expect(r.history).toEqual([{ step: 1, thought: "t", code: "inputs.n + 1", output: "=> 3", error: null }]);
    await expect(new CodeAct(Task, { toolCalling: "native" }).call({ task: "t", n: 2 }, { lm })).rejects.toThrow(ConfigurationError);
    expect(() => new CodeAct(Task, { toolCalling: "always" as never })).toThrow(/CodeAct option toolCalling/);
  });

  it('"auto" is native with a real provider LM; "text" sends no tool definitions', async () => {
    fake.reply(toolCalls([{ id: "call_F", name: "finish", arguments: { answer: 1, parity: "odd", solution: "s" } }]));
    const r = await new CodeAct(Task).call({ task: "t", n: 1 }, { lm: lmFor("openai", fake) });
    expect(r.answer).toBe(1);
    expect(fake.requests[0]!.toolNames).toEqual(["run_code", "finish"]);
    fake.reply({ thought: "t", code: "inputs.n", finished: true });
    fake.reply({ answer: 2, parity: "even", solution: "s" });
    const t = await new CodeAct(Task, { toolCalling: "text" }).call({ task: "t", n: 2 }, { lm: lmFor("openai", fake) });
    expect(t.answer).toBe(2);
    expect(fake.requests[1]!.toolNames).toEqual([]);
    expect(t.history[0]!.callId).toBeUndefined();
  });
});
