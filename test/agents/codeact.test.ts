import { describe, expect, it, jest } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, Instrumentation, MaxIterationsError, Signature, TypelmError } from "../../lib/index.js";
import { CodeAct, type CodeActStep } from "../../lib/predict/codeact.js";
import { Sandbox } from "../../lib/sandbox/sandbox.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { resetAfterEach, systemText, userText } from "../helpers/scripted.js";
import { tool } from "../../lib/tools/tool.js";

const Task = Signature.define({
  name: "Task",
  description: "Solve the arithmetic task.",
  input: { task: z.string(), n: z.number().int() },
  output: { answer: z.number() },
});

const Stats = Signature.define({
  name: "Stats",
  description: "Describe a list of numbers.",
  input: { numbers: z.array(z.number()) },
  output: { mean: z.number(), max: z.number().int(), parity: z.enum(["even", "odd"]), summary: z.string() },
});

resetAfterEach();

describe("CodeAct", () => {
  it("runs code over several steps with variables persisting, then extracts outputs and solution", async () => {
    const lm = new ScriptedLM([
      { thought: "Double n.", code: "const doubled = inputs.n * 2;\nconsole.log(doubled);", finished: false },
      { thought: "Add one, reusing the variable.", code: "console.log(doubled + 1)", finished: true },
      { answer: 43, solution: "n doubled plus one is 43" },
    ]);
    const r = await new CodeAct(Task).call({ task: "double n and add one", n: 21 }, { lm });
    expect(r.answer).toBe(43);
    expect(r.solution).toBe("n doubled plus one is 43");
    expect(r.history).toEqual([
      { step: 1, thought: "Double n.", code: "const doubled = inputs.n * 2;\nconsole.log(doubled);", output: "42\n", error: null },
      { step: 2, thought: "Add one, reusing the variable.", code: "console.log(doubled + 1)", output: "43\n", error: null },
    ]);
    expect(lm.requests.map((q) => q.signature?.name)).toEqual(["TaskCodeActStep", "TaskCodeActStep", "TaskCodeActExtract"]);
    expect(userText(lm, 1)).toContain("42");
    expect(userText(lm, 2)).toContain("43");
  });

  it("shows a code error to the model, which fixes it on the next step", async () => {
    const lm = new ScriptedLM([
      { thought: "Compute.", code: "console.log(squar(inputs.n))", finished: false },
      { thought: "Typo; define it.", code: "const squar = (x) => x * x;\nsquar(inputs.n)", finished: true },
      { answer: 9, solution: "9" },
    ]);
    const r = await new CodeAct(Task).call({ task: "square n", n: 3 }, { lm });
    expect(r.history[0]!.error).toMatch(/^ReferenceError: .*squar.* is not defined/);
    expect(r.history[0]!.output).toBe("");
    // The completion value of the last statement is shown as `=> value`.
    expect(r.history[1]).toMatchObject({ error: null, output: "=> 9" });
    expect(userText(lm, 1)).toContain("ReferenceError");
    expect(r.answer).toBe(9);
  });

  it("does not finish on a step whose code fails, even when the model says finished", async () => {
    const lm = new ScriptedLM([
      { thought: "Done, I think.", code: "throw new Error('not yet')", finished: true },
      { thought: "Now really.", code: "", finished: true },
      { answer: 1, solution: "1" },
    ]);
    const r = await new CodeAct(Task).call({ task: "t", n: 1 }, { lm });
    expect(r.history.map((s) => s.error)).toEqual(["Error: not yet (line 1)", null]);
    expect(r.answer).toBe(1);
  });

  it("exposes tools as async functions; invalid arguments come back as an error the code sees", async () => {
    const add = tool({ name: "add", description: "Adds a and b.", input: { a: z.number(), b: z.number() }, call: ({ a, b }) => a + b });
    const lm = new ScriptedLM([
      { thought: "Call with a string.", code: "const bad = await add({ a: 'x', b: 1 });", finished: false },
      {
        thought: "Catch it myself this time.",
        code: "try { await add({ a: 'x' }) } catch (e) { console.log('caught', e.message) }\nconsole.log(await add({ a: inputs.n, b: 1 }))",
        finished: true,
      },
      { answer: 6, solution: "6" },
    ]);
    const r = await new CodeAct(Task, { tools: [add] }).call({ task: "n + 1", n: 5 }, { lm });
    expect(r.history[0]!.error).toMatch(/add failed: Invalid arguments for tool "add": a: /);
    expect(r.history[1]!.output).toMatch(/^caught add failed: Invalid arguments for tool "add"/);
    expect(r.history[1]!.output).toMatch(/\n6\n$/);
    expect(userText(lm, 0)).toContain("await add(args): Adds a and b.");
    expect(r.answer).toBe(6);
  });

  it("keeps inputs readable after an out-of-memory step resets the sandbox", async () => {
    const lm = new ScriptedLM([
      { thought: "Hog.", code: "const hog = []; while (true) hog.push(new Array(100000).fill(1));", finished: false },
      { thought: "Again, smaller.", code: "console.log(inputs.n + 1)", finished: true },
      { answer: 8, solution: "8" },
    ]);
    const agent = new CodeAct(Task, { sandbox: { memoryLimitBytes: 8 * 1024 * 1024, timeoutMs: 5000 } });
    const r = await agent.call({ task: "t", n: 7 }, { lm });
    expect(r.history[0]!.error).toMatch(/^out of memory.*earlier state is lost/);
    expect(r.history[1]).toMatchObject({ output: "8\n", error: null });
  });

  it("strips a markdown fence around the code", async () => {
    const lm = new ScriptedLM([
      { thought: "t", code: "```javascript\nconsole.log('fenced')\n```", finished: true },
      { answer: 0, solution: "fenced" },
    ]);
    const r = await new CodeAct(Task).call({ task: "t", n: 0 }, { lm });
    expect(r.history[0]).toMatchObject({ code: "console.log('fenced')", output: "fenced\n", error: null });
  });

  it("extracts from the trajectory once when the iterations run out", async () => {
    const lm = new ScriptedLM([
      { thought: "a", code: "let total = 1", finished: false },
      { thought: "b", code: "total += 1; console.log(total)", finished: false },
      { answer: 2, solution: "two" },
    ]);
    const r = await new CodeAct(Task, { maxIterations: 2 }).call({ task: "t", n: 0 }, { lm });
    expect(r.answer).toBe(2);
    expect(r.solution).toBe("two");
    expect(r.history.map((s) => s.output)).toEqual(["", "2\n"]);
  });

  it("raises MaxIterationsError with the history when that final extraction fails", async () => {
    const lm = new ScriptedLM([
      { thought: "a", code: "console.log(1)", finished: false },
      "no idea",
    ]);
    const error = await new CodeAct(Task, { maxIterations: 1 }).call({ task: "t", n: 0 }, { lm }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MaxIterationsError);
    const e = error as MaxIterationsError<CodeActStep>;
    expect(e.maxIterations).toBe(1);
    expect(e.history).toEqual([{ step: 1, thought: "a", code: "console.log(1)", output: "1\n", error: null }]);
  });

  it("produces several typed output fields", async () => {
    const lm = new ScriptedLM([
      {
        thought: "Compute the stats.",
        code: "const xs = inputs.numbers;\nconsole.log(xs.reduce((a, b) => a + b, 0) / xs.length, Math.max(...xs))",
        finished: true,
      },
      { mean: "2.5", max: 4, parity: "Even", summary: "four numbers", solution: "mean 2.5, max 4" },
    ]);
    const r = await new CodeAct(Stats).call({ numbers: [1, 2, 3, 4] }, { lm });
    expect(r.history[0]!.output).toBe("2.5 4\n");
    expect([r.mean, r.max, r.parity, r.summary, r.solution]).toEqual([2.5, 4, "even", "four numbers", "mean 2.5, max 4"]);
  });

  it("emits codeact.iteration for every step", async () => {
    const events: Record<string, unknown>[] = [];
    Instrumentation.subscribe("codeact.iteration", (e) => events.push(e.payload));
    const lm = new ScriptedLM([
      { thought: "a", code: "nope(", finished: false },
      { thought: "b", code: "1", finished: true },
      { answer: 1, solution: "1" },
    ]);
    await new CodeAct(Task).call({ task: "t", n: 1 }, { lm });
    expect(events.map((p) => [p.step, p.ok, p.finished])).toEqual([[1, false, false], [2, true, true]]);
  });

  it("disposes its sandbox when the run fails", async () => {
    const dispose = jest.spyOn(Sandbox.prototype, "dispose");
    const lm = new ScriptedLM([{ thought: "a", code: "1", finished: false }]);
    await expect(new CodeAct(Task).call({ task: "t", n: 1 }, { lm })).rejects.toThrow(TypelmError);
    expect(dispose).toHaveBeenCalledTimes(1);
  });

  it("exposes step and extract to namedPredictors and dumpState, and its instruction and demos reach the prompts", async () => {
    const agent = new CodeAct(Task);
    expect(agent.namedPredictors().map(([p]) => p)).toEqual(["step", "extract"]);
    expect(Object.keys(agent.dumpState().predictors)).toEqual(["step", "extract"]);

    agent.instruction = "RULE-9: show your work.";
    agent.demos = [
      new FewShotExample({ input: { task: "demo task", n: 2 }, output: { answer: 4, solution: "DEMO SOLUTION" } }),
      new FewShotExample({ input: { task: "step demo", n: 1 }, output: { thought: "print it", code: "console.log('DEMO CODE')" } }),
    ];
    expect(agent.step.demos).toHaveLength(1);
    expect(agent.extract.demos).toHaveLength(1);

    const lm = new ScriptedLM([{ thought: "t", code: "", finished: true }, { answer: 0, solution: "0" }]);
    await agent.call({ task: "t", n: 0 }, { lm });
    expect(systemText(lm, 0)).toContain("RULE-9: show your work.");
    expect(systemText(lm, 0)).toContain("DEMO CODE");
    expect(systemText(lm, 1)).toContain("RULE-9: show your work.");
    expect(systemText(lm, 1)).toContain("DEMO SOLUTION");
  });
});
