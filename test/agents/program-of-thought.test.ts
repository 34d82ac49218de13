import { describe, expect, it, jest } from "@jest/globals";
import { z } from "zod";
import { FewShotExample, Instrumentation, MaxIterationsError, Signature, ValidationError } from "../../lib/index.js";
import { ProgramOfThought, type ProgramAttempt } from "../../lib/predict/program-of-thought.js";
import { Sandbox } from "../../lib/sandbox/sandbox.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { resetAfterEach, systemText, userText } from "../helpers/scripted.js";

const Sum = Signature.define({
  name: "Sum",
  description: "Add the two numbers.",
  input: { a: z.number(), b: z.number() },
  output: { total: z.number() },
});

const Describe = Signature.define({
  name: "Describe",
  description: "Describe the list.",
  input: { numbers: z.array(z.number().int()) },
  output: {
    count: z.number().int(),
    parity: z.enum(["even", "odd"]),
    sorted: z.array(z.number().int()),
    note: z.string().optional(),
  },
});

resetAfterEach();

describe("ProgramOfThought", () => {
  it("runs the model's program in the sandbox and types what it hands to answer()", async () => {
    const lm = new ScriptedLM([{ code: "const t = inputs.a + inputs.b;\nconsole.log('sum is', t);\nanswer({ total: t });" }]);
    const r = await new ProgramOfThought(Sum).call({ a: 2, b: 3.5 }, { lm });
    expect(r.total).toBe(5.5);
    expect(r.toJSON()).toEqual({ total: 5.5 });
    expect(r.code).toBe("const t = inputs.a + inputs.b;\nconsole.log('sum is', t);\nanswer({ total: t });");
    expect(r.output).toBe("sum is 5.5\n");
    expect(r.attempts).toHaveLength(1);
    expect(Object.keys(r)).toEqual(["total"]);
    expect(lm.requests[0]!.signature?.name).toBe("SumProgramGenerate");
    expect(systemText(lm, 0)).toContain("answer({ ... })");
  });

  it("feeds a runtime error back and uses the repaired program", async () => {
    const lm = new ScriptedLM([
      { code: "console.log('trying');\nanswer({ total: inputs.a + inputs.c.value })" },
      { code: "answer({ total: inputs.a + inputs.b })" },
    ]);
    const r = await new ProgramOfThought(Sum).call({ a: 1, b: 2 }, { lm });
    expect(r.total).toBe(3);
    expect(lm.requests[1]!.signature?.name).toBe("SumProgramRepair");
    expect(userText(lm, 1)).toContain("TypeError");
    expect(userText(lm, 1)).toContain("trying");
    expect(userText(lm, 1)).toContain("inputs.c.value");
    expect(r.attempts.map((a) => [a.attempt, a.error === null])).toEqual([[1, false], [2, true]]);
    expect(r.attempts[0]!.error).toMatch(/^TypeError: .*\(line 2\)$/);
  });

  it("feeds back a value that does not convert to the declared outputs", async () => {
    const lm = new ScriptedLM([{ code: "answer({ total: 'lots' })" }, { code: "return { total: 7 }" }]);
    const r = await new ProgramOfThought(Sum).call({ a: 3, b: 4 }, { lm });
    expect(r.total).toBe(7);
    expect(r.attempts[0]!.error).toContain('does not fit the output fields: Output field "total": expected number');
    expect(userText(lm, 1)).toContain("does not fit the output fields");
  });

  it("reports a program that hands nothing over", async () => {
    const lm = new ScriptedLM([{ code: "const t = inputs.a + inputs.b;" }, { code: "answer(inputs.a + inputs.b)" }]);
    const r = await new ProgramOfThought(Sum).call({ a: 3, b: 4 }, { lm });
    expect(r.attempts[0]!.error).toContain("neither called answer");
    // With one output field, answer(value) is that field.
    expect(r.total).toBe(7);
  });

  it("raises MaxIterationsError with every attempt once the repairs are used up", async () => {
    const lm = new ScriptedLM([{ code: "throw new Error('first')" }, { code: "throw new Error('second')" }]);
    const error = await new ProgramOfThought(Sum, { maxRepairs: 1 }).call({ a: 1, b: 1 }, { lm }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MaxIterationsError);
    const e = error as MaxIterationsError<ProgramAttempt>;
    expect(e.maxIterations).toBe(2);
    expect(e.history.map((a) => a.error)).toEqual(["Error: first (line 1)", "Error: second (line 1)"]);
    expect(e.message).toContain("after 1 repair: Error: second");
    expect(lm.remaining).toBe(0);
  });

  it("produces several typed output fields, with `return` and a fenced program", async () => {
    const code = [
      "```js",
      "const xs = [...inputs.numbers].sort((x, y) => x - y);",
      "return { count: xs.length, parity: xs.length % 2 === 0 ? 'EVEN' : 'ODD', sorted: xs };",
      "```",
    ].join("\n");
    const r = await new ProgramOfThought(Describe).call({ numbers: [3, 1, 2] }, { lm: new ScriptedLM([{ code }]) });
    expect(r.toJSON()).toEqual({ count: 3, parity: "odd", sorted: [1, 2, 3], note: null });
    expect(r.code.startsWith("const xs")).toBe(true);
  });

  it("keeps model code away from the host", async () => {
    const lm = new ScriptedLM([
      { code: "answer({ total: [typeof process, typeof require, typeof fetch].every((t) => t === 'undefined') ? 1 : 0 })" },
    ]);
    const r = await new ProgramOfThought(Sum).call({ a: 0, b: 0 }, { lm });
    expect(r.total).toBe(1);
  });

  it("stops a runaway program at the sandbox's time limit and repairs it", async () => {
    const lm = new ScriptedLM([{ code: "while (true) {}" }, { code: "answer({ total: 2 })" }]);
    const r = await new ProgramOfThought(Sum, { sandbox: { timeoutMs: 200 } }).call({ a: 1, b: 1 }, { lm });
    expect(r.attempts[0]!.error).toContain("time limit of 200 ms");
    expect(r.total).toBe(2);
  });

  it("recovers after an out-of-memory attempt resets the sandbox", async () => {
    const lm = new ScriptedLM([
      { code: "const hog = []; while (true) hog.push(new Array(100000).fill(inputs.a));" },
      { code: "answer({ total: inputs.a + inputs.b })" },
    ]);
    const pot = new ProgramOfThought(Sum, { sandbox: { memoryLimitBytes: 8 * 1024 * 1024, timeoutMs: 5000 } });
    const r = await pot.call({ a: 1, b: 2 }, { lm });
    expect(r.attempts[0]!.error).toMatch(/^out of memory/);
    expect(r.total).toBe(3);
  });

  it("emits one event per attempt and disposes its sandbox", async () => {
    const dispose = jest.spyOn(Sandbox.prototype, "dispose");
    const events: Record<string, unknown>[] = [];
    Instrumentation.subscribe("programofthought.attempt", (e) => events.push(e.payload));
    const lm = new ScriptedLM([{ code: "oops(" }, { code: "answer({ total: 1 })" }]);
    await new ProgramOfThought(Sum).call({ a: 0, b: 1 }, { lm });
    expect(events.map((p) => [p.attempt, p.ok])).toEqual([[1, false], [2, true]]);
    expect(dispose).toHaveBeenCalledTimes(1);
  });

  it("exposes generate and repair as predictors, and its instruction and demos reach the prompt", async () => {
    const pot = new ProgramOfThought(Sum);
    expect(pot.namedPredictors().map(([p]) => p)).toEqual(["generate", "repair"]);
    expect(Object.keys(pot.dumpState().predictors)).toEqual(["generate", "repair"]);

    pot.instruction = "RULE-3: use integers only.";
    pot.demos = [new FewShotExample({ input: { a: 40, b: 2 }, output: { total: 42 } })];
    expect(pot.demos[0]!.output).toEqual({ code: 'answer({"total":42});' });

    const lm = new ScriptedLM([{ code: "answer({ total: 5 })" }]);
    await pot.call({ a: 2, b: 3 }, { lm });
    const system = systemText(lm, 0);
    expect(system).toContain("RULE-3: use integers only.");
    expect(system).toContain('answer({\\"total\\":42});');
    expect(system).toContain('"a":40');
  });

  it("rejects bad options and inputs before running anything", async () => {
    expect(() => new ProgramOfThought(Sum, { maxRepairs: -1 })).toThrow(/maxRepairs: expected an integer >= 0/);
    const lm = new ScriptedLM([]);
    await expect(new ProgramOfThought(Sum).call({ a: "x" } as never, { lm })).rejects.toThrow(ValidationError);
    expect(lm.requests).toHaveLength(0);
  });
});
