import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, Instrumentation, MaxIterationsError, Signature, ValidationError } from "../../lib/index.js";
import { ReAct, type ReActStep } from "../../lib/predict/react.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { resetAfterEach, systemText, userText } from "../helpers/scripted.js";
import { CalculatorTool } from "../../lib/tools/calculator.js";
import { tool } from "../../lib/tools/tool.js";
import { Toolset, toolEntry } from "../../lib/tools/toolset.js";

const Question = Signature.define({
  name: "Question",
  description: "Answer the question using the tools.",
  input: { question: z.string() },
  output: { answer: z.string() },
});

const Weather = Signature.define({
  name: "Weather",
  description: "Report the weather of a city.",
  input: { city: z.string() },
  output: {
    temperature: z.number().int(),
    unit: z.enum(["c", "f"]),
    summary: z.string(),
    sources: z.array(z.string()),
  },
});

const add = tool({
  name: "add",
  description: "Adds two numbers.",
  input: { a: z.number(), b: z.number() },
  call: ({ a, b }) => a + b,
});

const capital = tool({
  name: "capital",
  description: "The capital city of a country.",
  input: { country: z.string() },
  call: ({ country }) => ({ france: "Paris", japan: "Tokyo" } as Record<string, string>)[country.toLowerCase()] ?? "unknown",
});

function flaky() {
  let calls = 0;
  return tool({
    name: "flaky",
    description: "Fails the first time it is called.",
    input: { q: z.string() },
    call: ({ q }) => {
      calls++;
      if (calls === 1) throw new Error("service unavailable");
      return `result for ${q}`;
    },
  });
}

/** The user message of a request (where the trajectory is). */
resetAfterEach();

describe("ReAct", () => {
  it("runs a multi-step loop over tools, then extracts the typed answer", async () => {
    const lm = new ScriptedLM([
      { thought: "Find the capital first.", action: "capital", toolInput: { country: "France" } },
      { thought: "Now add the numbers.", action: "add", toolInput: { a: 2, b: 40 } },
      { thought: "I have everything.", action: "finish", toolInput: {} },
      { answer: "Paris, 42" },
    ]);
    const agent = new ReAct(Question, { tools: [capital, add] });
    const r = await agent.call({ question: "Capital of France, and 2 + 40?" }, { lm });

    expect(r.answer).toBe("Paris, 42");
    expect(r.history).toEqual([
      { step: 1, thought: "Find the capital first.", action: "capital", toolInput: { country: "France" }, observation: "Paris" },
      { step: 2, thought: "Now add the numbers.", action: "add", toolInput: { a: 2, b: 40 }, observation: 42 },
      { step: 3, thought: "I have everything.", action: "finish", toolInput: {}, observation: null },
    ]);
    expect(lm.requests.map((q) => q.signature?.name)).toEqual([
      "QuestionReActStep", "QuestionReActStep", "QuestionReActStep", "QuestionReActExtract",
    ]);
    // The model sees the tools and, from the second step on, the observations so far.
    expect(userText(lm, 0)).toContain("(no steps yet)");
    expect(userText(lm, 0)).toContain("capital: The capital city of a country.");
    expect(userText(lm, 1)).toContain("Observation: Paris");
    expect(userText(lm, 3)).toContain("Observation: 42");
    expect(userText(lm, 3)).toContain("Capital of France, and 2 + 40?");
  });

  it("turns a throwing tool into an observation and recovers on the next step", async () => {
    const lm = new ScriptedLM([
      { thought: "Look it up.", action: "flaky", toolInput: { q: "x" } },
      { thought: "It failed; try again.", action: "flaky", toolInput: { q: "x" } },
      { thought: "Done.", action: "finish", toolInput: {} },
      { answer: "result for x" },
    ]);
    const r = await new ReAct(Question, { tools: [flaky()] }).call({ question: "?" }, { lm });
    expect(r.answer).toBe("result for x");
    expect(r.history[0]!.observation).toBe('Error: Tool "flaky" failed: service unavailable');
    expect(r.history[1]!.observation).toBe("result for x");
    expect(userText(lm, 1)).toContain("service unavailable");
  });

  it("reports invalid tool arguments as an error observation, not a crash", async () => {
    const lm = new ScriptedLM([
      { thought: "Add.", action: "add", toolInput: { a: "two", b: 3 } },
      { thought: "Fix the arguments.", action: "add", toolInput: { a: 2, b: 3 } },
      { thought: "Done.", action: "finish", toolInput: {} },
      { answer: "5" },
    ]);
    const r = await new ReAct(Question, { tools: [add] }).call({ question: "2+3?" }, { lm });
    expect(r.answer).toBe("5");
    expect(String(r.history[0]!.observation)).toMatch(/^Error: Invalid arguments for tool "add": a: /);
    expect(r.history[1]!.observation).toBe(5);
    expect(userText(lm, 1)).toContain('Invalid arguments for tool \\"add\\"');
  });

  it("tells the model the valid tool names when it picks an unknown one", async () => {
    const lm = new ScriptedLM([
      { thought: "Search.", action: "search", toolInput: { q: "x" } },
      { thought: "Ok.", action: "FINISH", toolInput: null },
      { answer: "none" },
    ]);
    const r = await new ReAct(Question, { tools: [add, capital] }).call({ question: "?" }, { lm });
    expect(r.history[0]!.observation).toBe('Error: unknown action "search"; valid actions are "add", "capital", "finish"');
    expect(r.history[1]).toEqual({ step: 2, thought: "Ok.", action: "finish", toolInput: {}, observation: null });
    expect(r.answer).toBe("none");
  });

  it("treats an unreadable step reply as an observation and carries on", async () => {
    const lm = new ScriptedLM(["I think I should add.", { thought: "Sorry.", action: "finish" }, { answer: "ok" }]);
    const r = await new ReAct(Question, { tools: [add] }).call({ question: "?" }, { lm });
    expect(r.answer).toBe("ok");
    expect(r.history[0]!.action).toBe("");
    expect(String(r.history[0]!.observation)).toMatch(/^Error: your reply could not be read/);
  });

  it("extracts from the trajectory once when the iterations run out", async () => {
    const lm = new ScriptedLM([
      { thought: "Add.", action: "add", toolInput: { a: 1, b: 1 } },
      { thought: "Add again.", action: "add", toolInput: { a: 2, b: 2 } },
      { answer: "4" },
    ]);
    const r = await new ReAct(Question, { tools: [add], maxIterations: 2 }).call({ question: "?" }, { lm });
    expect(r.answer).toBe("4");
    expect(r.history.map((s) => s.observation)).toEqual([2, 4]);
    expect(lm.requests[2]!.signature?.name).toBe("QuestionReActExtract");
    expect(lm.remaining).toBe(0);
  });

  it("raises MaxIterationsError carrying the history when that final extraction fails", async () => {
    const lm = new ScriptedLM([
      { thought: "Add.", action: "add", toolInput: { a: 1, b: 1 } },
      { thought: "Add again.", action: "add", toolInput: { a: 2, b: 2 } },
      "I could not work it out.",
    ]);
    const agent = new ReAct(Question, { tools: [add], maxIterations: 2 });
    const error = await agent.call({ question: "?" }, { lm }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MaxIterationsError);
    const e = error as MaxIterationsError<ReActStep>;
    expect(e.maxIterations).toBe(2);
    expect(e.history.map((s) => [s.step, s.action, s.observation])).toEqual([[1, "add", 2], [2, "add", 4]]);
    expect(e.message).toContain("used all 2 iterations");
  });

  it("works with CalculatorTool and a toolset's tools, recovering from a bad expression", async () => {
    class Notes extends Toolset {
      static override toolsetName = "notes";
      static override tools = {
        read_note: toolEntry({ description: "Reads a note.", input: { id: z.number().int() }, call: ({ id }) => `note ${id}: buy 3 apples` }),
      };
    }
    const lm = new ScriptedLM([
      { thought: "Read the note.", action: "read_note", toolInput: { id: 1 } },
      { thought: "Compute.", action: "calculator", toolInput: { expression: "3 * (2 +" } },
      { thought: "Fix the expression.", action: "calculator", toolInput: { expression: "3 * (2 + 4)" } },
      { thought: "Done.", action: "finish", toolInput: {} },
      { answer: "18" },
    ]);
    const agent = new ReAct(Question, { tools: [new CalculatorTool(), ...Notes.toTools()] });
    const r = await agent.call({ question: "apples times six?" }, { lm });
    expect(r.history.map((s) => s.observation)).toEqual([
      "note 1: buy 3 apples", expect.stringMatching(/^Error: Tool "calculator" failed: /), 18, null,
    ]);
    expect(r.answer).toBe("18");
    expect(userText(lm, 0)).toContain("- calculator: Evaluate an arithmetic expression and return the number.");
    expect(userText(lm, 0)).toContain("- read_note: Reads a note.");
  });

  it("produces several typed output fields", async () => {
    const lookup = tool({
      name: "forecast",
      description: "Weather for a city.",
      input: { city: z.string() },
      call: ({ city }) => ({ city, celsius: 21, sky: "sunny" }),
    });
    const lm = new ScriptedLM([
      { thought: "Get the forecast.", action: "forecast", toolInput: { city: "Lyon" } },
      { thought: "Enough.", action: "finish", toolInput: {} },
      { temperature: "21", unit: "C", summary: "Sunny", sources: ["forecast"] },
    ]);
    const r = await new ReAct(Weather, { tools: [lookup] }).call({ city: "Lyon" }, { lm });
    expect(r.temperature).toBe(21);
    expect(r.unit).toBe("c");
    expect(r.summary).toBe("Sunny");
    expect(r.sources).toEqual(["forecast"]);
    expect(r.history[0]!.observation).toEqual({ city: "Lyon", celsius: 21, sky: "sunny" });
    expect(userText(lm, 2)).toContain('{\\"city\\":\\"Lyon\\",\\"celsius\\":21,\\"sky\\":\\"sunny\\"}');
  });

  it("emits react.iteration for every step and tool.call for every tool use", async () => {
    const events: { name: string; payload: Record<string, unknown> }[] = [];
    Instrumentation.subscribe(/^(react\.iteration|tool\.call)$/, (e) => events.push(e));
    const lm = new ScriptedLM([
      { thought: "a", action: "add", toolInput: { a: 1, b: 2 } },
      { thought: "b", action: "nope", toolInput: {} },
      { thought: "c", action: "finish", toolInput: {} },
      { answer: "3" },
    ]);
    await new ReAct(Question, { tools: [add] }).call({ question: "?" }, { lm });
    expect(events.map((e) => e.name)).toEqual(["tool.call", "react.iteration", "react.iteration", "react.iteration"]);
    expect(events.filter((e) => e.name === "react.iteration").map((e) => [e.payload.step, e.payload.action, e.payload.ok])).toEqual([
      [1, "add", true], [2, "nope", false], [3, "finish", true],
    ]);
    expect(events[0]!.payload).toMatchObject({ tool: "add", ok: true });
  });

  it("exposes its inner predictors to namedPredictors, dumpState, loadState and clone", () => {
    const agent = new ReAct(Question, { tools: [add] });
    expect(agent.namedPredictors().map(([path]) => path)).toEqual(["step", "extract"]);
    const state = agent.dumpState();
    expect(Object.keys(state.predictors)).toEqual(["step", "extract"]);
    expect(state.predictors.step!.instruction).toContain("Answer the question using the tools.");

    state.predictors.step!.instruction = "Tuned step.";
    state.predictors.extract!.demos = [{ input: { question: "q", trajectory: "t" }, output: { answer: "a" } }];
    const copy = agent.clone().loadState(state);
    expect(copy.step.instruction).toBe("Tuned step.");
    expect(copy.extract.demos).toHaveLength(1);
    expect(agent.step.instruction).not.toBe("Tuned step.");
    expect(copy.tools.map((t) => t.name)).toEqual(["add"]);
  });

  it("puts its instruction and demos into the prompts", async () => {
    const agent = new ReAct(Question, { tools: [add] });
    agent.instruction = "RULE-7: answer in capitals.";
    agent.demos = [
      new FewShotExample({ input: { question: "demo question" }, output: { answer: "DEMO ANSWER" } }),
      new FewShotExample({
        input: { question: "step demo", trajectory: "(no steps yet)" },
        output: { thought: "add them", action: "add", toolInput: { a: 1, b: 1 } },
      }),
    ];
    expect(agent.instruction).toBe("RULE-7: answer in capitals.");
    expect(agent.step.demos).toHaveLength(1);
    expect(agent.extract.demos).toHaveLength(1);
    expect(agent.demos).toHaveLength(2);

    const lm = new ScriptedLM([{ thought: "t", action: "finish", toolInput: {} }, { answer: "X" }]);
    await agent.call({ question: "?" }, { lm });
    expect(systemText(lm, 0)).toContain("RULE-7: answer in capitals.");
    expect(systemText(lm, 0)).toContain("add them");
    expect(systemText(lm, 1)).toContain("RULE-7: answer in capitals.");
    expect(systemText(lm, 1)).toContain("DEMO ANSWER");
    expect(systemText(lm, 1)).toContain("demo question");
  });

  it("uses the LM configured on the agent for its inner predictors, through call and forward alike", async () => {
    const script = () => new ScriptedLM([{ thought: "t", action: "finish", toolInput: {} }, { answer: "configured" }]);
    const lm = script();
    const agent = new ReAct(Question).configure((c) => { c.lm = lm; });
    expect((await agent.call({ question: "?" })).answer).toBe("configured");
    expect(lm.requests).toHaveLength(2);
    const direct = script();
    agent.configure((c) => { c.lm = direct; });
    expect((await agent.forward({ question: "?" })).answer).toBe("configured");
    expect(direct.requests).toHaveLength(2);
  });

  it("validates inputs before any model call and rejects unusable configurations", async () => {
    const lm = new ScriptedLM([]);
    const agent = new ReAct(Question, { tools: [add] });
    await expect(agent.call({} as never, { lm })).rejects.toThrow(ValidationError);
    expect(lm.requests).toHaveLength(0);

    const finish = tool({ name: "finish", description: "x", input: {}, call: () => 1 });
    expect(() => new ReAct(Question, { tools: [finish] })).toThrow(/reserved/);
    expect(() => new ReAct(Question, { tools: [add, add] })).toThrow(/two tools are named "add"/);
    expect(() => new ReAct(Question, { maxIterations: 0 })).toThrow(/maxIterations: expected an integer >= 1/);
    const Clash = Signature.define({ name: "Clash", input: { trajectory: z.string() }, output: { answer: z.string() } });
    expect(() => new ReAct(Clash)).toThrow(/declares an input "trajectory"/);
  });

  it("rejects an output named history, which it would overwrite with its own", () => {
    const WithHistory = Signature.define({ name: "WithHistory", input: { q: z.string() }, output: { history: z.string() } });
    let error: unknown;
    try {
      new ReAct(WithHistory, { tools: [add] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("history");
    expect((error as Error).message).toBe(
      'ReAct: WithHistory declares an output "history", but ReAct puts its own "history" on the result; rename the field',
    );
  });
});
