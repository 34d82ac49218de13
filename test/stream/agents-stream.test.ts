import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { CodeAct, Module, ProgramOfThought, ReAct, Signature, type StreamEvent } from "../../lib/index.js";
import { tool } from "../../lib/tools/tool.js";
import { resetAfterEach } from "../helpers/scripted.js";
import { ChunkedLM } from "../helpers/chunked-lm.js";

resetAfterEach();

const Question = Signature.define({
  name: "Question",
  description: "Answer the question using the tools.",
  input: { question: z.string() },
  output: { answer: z.string() },
});

const add = tool({
  name: "add",
  description: "Adds two numbers.",
  input: { a: z.number(), b: z.number() },
  call: ({ a, b }) => a + b,
});

async function all(stream: AsyncIterable<StreamEvent<any>>): Promise<StreamEvent<any>[]> {
  const out: StreamEvent<any>[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

const steps = (events: StreamEvent<any>[]) => events.flatMap((e) => (e.type === "step" ? [e] : []));
const fieldsAt = (events: StreamEvent<any>[], path: string) =>
  events.flatMap((e) => (e.type === "field" && e.path === path ? [[e.name, e.value]] : []));

describe("agents stream their steps and their final answer", () => {
  const script = () => [
    { thought: "Add them.", action: "add", toolInput: { a: 2, b: 40 } },
    { thought: "I have it.", action: "finish", toolInput: {} },
    { answer: "The sum is 42, found with the add tool." },
  ];

  it("ReAct: one step event per completed step (as in history), the step and extract predictors' fields by path", async () => {
    const lm = new ChunkedLM(script());
    const s = new ReAct(Question, { tools: [add] }).stream({ question: "2 + 40?" }, { lm });
    const events = await all(s);
    const r = await s.result;
    expect(steps(events).map((e) => [e.path, e.step])).toEqual(r.history.map((h) => ["", h]));
    expect(r.history.map((h) => h.observation)).toEqual([42, null]);
    expect(fieldsAt(events, "step")).toEqual([
      ["thought", "Add them."], ["action", "add"], ["toolInput", { a: 2, b: 40 }],
      ["thought", "I have it."], ["action", "finish"], ["toolInput", {}],
    ]);
    expect(fieldsAt(events, "extract")).toEqual([["answer", "The sum is 42, found with the add tool."]]);
    // The final answer streams: partial answers grow before its field event.
    const answers = events.flatMap((e) => (e.type === "partial" && e.path === "extract" && typeof e.partial.answer === "string" ? [e.partial.answer] : []));
    expect(answers.length).toBeGreaterThan(2);
    expect(answers[0]!.length).toBeLessThan(r.answer.length);
    // Step 1 is reported before the second model call's fields.
    const firstStep = events.indexOf(steps(events)[0]!);
    const secondThought = events.findIndex((e) => e.type === "field" && e.path === "step" && e.value === "I have it.");
    expect(firstStep).toBeLessThan(secondThought);
  });

  it("inside a module, the agent's events carry its path", async () => {
    class Wrapper extends Module {
      agent = new ReAct(Question, { tools: [add] });
      forward(inputs: { question: string }) {
        return this.agent.call(inputs);
      }
    }
    const lm = new ChunkedLM(script());
    const events = await all(new Wrapper().configure((c) => (c.lm = lm)).stream({ question: "2 + 40?" }));
    expect(new Set(events.map((e) => e.path))).toEqual(new Set(["agent", "agent.step", "agent.extract"]));
    expect(steps(events).every((e) => e.path === "agent")).toBe(true);
  });

  it("CodeAct: a step event per step with its code's output", async () => {
    const lm = new ChunkedLM([
      { thought: "Double n.", code: "const d = inputs.n * 2;\nconsole.log(d);", finished: false },
      { thought: "Done.", code: "console.log(d + 1)", finished: true },
      { answer: 43, solution: "43" },
    ]);
    const Task = Signature.define({ name: "Task", description: "Compute.", input: { n: z.number() }, output: { answer: z.number() } });
    const s = new CodeAct(Task).stream({ n: 21 }, { lm });
    const events = await all(s);
    const r = await s.result;
    expect(steps(events).map((e) => e.step)).toEqual(r.history);
    expect(r.history.map((h) => h.output)).toEqual(["42\n", "43\n"]);
    expect(fieldsAt(events, "extract")).toEqual([["answer", 43], ["solution", "43"]]);
  });

  it("ProgramOfThought: a step event per attempt; the program streams", async () => {
    const Sum = Signature.define({ name: "Sum", description: "Add.", input: { a: z.number(), b: z.number() }, output: { total: z.number() } });
    const lm = new ChunkedLM([
      { code: "answer({ total: inputs.a + inputs.c.value })" },
      { code: "answer({ total: inputs.a + inputs.b })" },
    ]);
    const s = new ProgramOfThought(Sum).stream({ a: 1, b: 2 }, { lm });
    const events = await all(s);
    const r = await s.result;
    expect(r.total).toBe(3);
    expect(steps(events).map((e) => e.step)).toEqual(r.attempts);
    expect(steps(events).map((e) => (e.step as { error: string | null }).error === null)).toEqual([false, true]);
    expect(fieldsAt(events, "generate")).toEqual([["code", "answer({ total: inputs.a + inputs.c.value })"]]);
    expect(fieldsAt(events, "repair")).toEqual([["code", "answer({ total: inputs.a + inputs.b })"]]);
  });
});
