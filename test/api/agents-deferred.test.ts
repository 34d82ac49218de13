/**
 * The agents through the package (dist/): their constructors' bodies and demo mapping are deferred
 * modules of the bundle (lib/predict/react-setup.ts, codeact-setup.ts, program-of-thought-setup.ts,
 * chain-of-thought-setup.ts, agent-base-setup.ts; see scripts/deferred-modules.mjs), loaded at the first
 * agent built. The checks throw the package's own ValidationError with the same messages, in the same
 * order; the fields are set when the constructor returns; subclasses' `super(...)` works; demos reach
 * the predictor they were written for. Expected values are written by hand.
 */
import { describe, expect, test } from "@jest/globals";
import { z } from "zod";
import { CalculatorTool, ChainOfThought, CodeAct, FewShotExample, ProgramOfThought, ReAct, Signature, ValidationError, tool } from "typelm";
import { ScriptedLM } from "typelm/testing";
import { thrownBy } from "../helpers/thrown.js";

const Question = Signature.define({ name: "Question", description: "Answer the question.", input: { question: z.string() }, output: { answer: z.string() } });
const Sum = Signature.define({ name: "Sum", description: "Add the numbers.", input: { a: z.number(), b: z.number() }, output: { total: z.number() } });

/** `fn()`'s error, which must be a ValidationError of the code under test. */
const validationError = (fn: () => unknown): ValidationError => thrownBy(ValidationError, fn);

const echo = (name: string) => tool({ name, description: "Echoes.", input: { text: z.string() }, call: ({ text }) => text });

describe("ReAct through the bundle", () => {
  test("its fields are set when the constructor returns: defaults, tools, derived predictors", () => {
    const agent = new ReAct(Question, { tools: [new CalculatorTool()] });
    expect([agent.maxIterations, agent.maxObservationChars, agent.toolCalling, agent.maxParallelCalls]).toEqual([10, 4000, "auto", 4]);
    expect(agent.tools.map((t) => t.name)).toEqual(["calculator"]);
    expect(agent.step.signature.name).toBe("QuestionReActStep");
    expect(Object.keys(agent.step.compiledSignature.inputShape)).toEqual(["question", "trajectory", "availableTools"]);
    expect(Object.keys(agent.step.compiledSignature.outputShape)).toEqual(["thought", "action", "toolInput"]);
    expect(agent.extract.signature.name).toBe("QuestionReActExtract");
    expect(Object.keys(agent.extract.compiledSignature.outputShape)).toEqual(["answer"]);
    expect(agent.instruction).toBe(
      "Answer the question.\n\nYou work towards the output fields (answer) step by step. In each step, think, then either call one " +
        'of the available tools or choose "finish". Each tool\'s observation is added to the trajectory.',
    );
    // One derived signature per task signature: a second agent's step predicts with the same class.
    expect(new ReAct(Question).step.signature).toBe(agent.step.signature);
  });

  test("its option checks throw the package's ValidationError with their messages, the base class's first", () => {
    expect(validationError(() => new ReAct(Question, { maxIterations: 0 })).message).toBe("ReAct option maxIterations: expected an integer >= 1, received 0");
    expect(validationError(() => new ReAct(Question, { maxIterations: 0, toolCalling: "x" as never })).field).toBe("maxIterations");
    expect(validationError(() => new ReAct(Question, { toolCalling: "x" as never, maxParallelCalls: 0 })).message)
      .toBe('ReAct option toolCalling: expected "native", "text" or "auto", received "x"');
    expect(validationError(() => new ReAct(Question, { maxParallelCalls: 1.5 })).message).toBe("ReAct option maxParallelCalls: expected an integer >= 1, received 1.5");
    const reserved = validationError(() => new ReAct(Question, { tools: [echo("finish")] }));
    expect(reserved.message).toBe('ReAct option tools[0]: the name "finish" is reserved by ReAct; rename the tool');
    expect(reserved.field).toBe("tools[0]");
    const History = Signature.define({ name: "History", description: "", input: { q: z.string() }, output: { history: z.string() } });
    const history = validationError(() => new ReAct(History, { maxIterations: 0 }));
    expect(history.message).toBe('ReAct: History declares an output "history", but ReAct puts its own "history" on the result; rename the field');
    expect(history.field).toBe("history");
    const Clash = Signature.define({ name: "Clash", description: "", input: { trajectory: z.string() }, output: { a: z.string() } });
    expect(validationError(() => new ReAct(Clash)).message)
      .toBe('ReAct: Clash declares an input "trajectory", but ReAct adds an input of that name for its own use; rename the field');
  });

  test("a subclass: super(...) sets the fields its constructor reads, and the run uses its tools", async () => {
    class CalculatingAgent extends ReAct<typeof Question.input, typeof Question.output> {
      readonly summary: string;
      constructor() {
        super(Question, { tools: [new CalculatorTool()], maxIterations: 3 });
        this.summary = `${this.maxIterations} turns, tools: ${this.tools.map((t) => t.name).join(", ")}, step: ${this.step.signature.name}`;
      }
    }
    const agent = new CalculatingAgent();
    expect(agent).toBeInstanceOf(ReAct);
    expect(agent.summary).toBe("3 turns, tools: calculator, step: QuestionReActStep");
    const lm = new ScriptedLM([
      { thought: "compute", action: "calculator", toolInput: { expression: "6 * 7" } },
      { thought: "done", action: "finish", toolInput: {} },
      { answer: "42" },
    ]);
    const r = await agent.call({ question: "6 * 7?" }, { lm });
    expect(r.answer).toBe("42");
    expect(r.history.map((s) => [s.action, s.observation])).toEqual([["calculator", 42], ["finish", null]]);
  });

  test("demos go to the predictor they were written for, also when pushed into the view", () => {
    const agent = new ReAct(Question);
    const stepDemo = new FewShotExample({ input: { question: "q", trajectory: "", availableTools: "" }, output: { thought: "t", action: "finish", toolInput: {} }, id: "s" });
    const taskDemo = new FewShotExample({ input: { question: "q" }, output: { answer: "a" }, id: "x" });
    agent.demos = [taskDemo];
    expect([agent.step.demos.length, agent.extract.demos.map((d) => d.id)]).toEqual([0, ["x"]]);
    agent.demos.push(stepDemo);
    expect(agent.step.demos.map((d) => d.id)).toEqual(["s"]);
    expect(agent.demos.map((d) => d.id)).toEqual(["s", "x"]);
    agent.demos.splice(1, 1);
    expect([agent.step.demos.length, agent.extract.demos.length]).toEqual([1, 0]);
  });
});

describe("CodeAct through the bundle", () => {
  test("its fields, its `solution` output and its checks", () => {
    const agent = new CodeAct(Sum, { sandbox: { timeoutMs: 500 }, tools: [echo("shout")] });
    expect([agent.maxIterations, agent.maxObservationChars, agent.toolCalling]).toEqual([8, 4000, "auto"]);
    expect(agent.sandboxOptions).toEqual({ timeoutMs: 500 });
    expect(agent.tools.map((t) => t.name)).toEqual(["shout"]);
    expect(agent.step.signature.name).toBe("SumCodeActStep");
    expect(Object.keys(agent.step.compiledSignature.outputShape)).toEqual(["thought", "code", "finished"]);
    expect(Object.keys(agent.extract.compiledSignature.outputShape)).toEqual(["total", "solution"]);
    expect(validationError(() => new CodeAct(Sum, { tools: [echo("my-tool")] })).message).toBe(
      'CodeAct option tools[0]: "my-tool" is exposed to code as a function, so it must be a JavaScript identifier (e.g. "my_tool")',
    );
    expect(validationError(() => new CodeAct(Sum, { tools: [echo("a"), echo("a")] })).message)
      .toBe('CodeAct option tools: two tools are named "a"; tool names must be unique');
    expect(validationError(() => new CodeAct(Sum, { tools: "calculator" as never })).message)
      .toBe('CodeAct option tools: expected an array of tools (e.g. [new CalculatorTool()]), received "calculator"');
  });
});

describe("ProgramOfThought through the bundle", () => {
  test("its fields, predictors and check", () => {
    const pot = new ProgramOfThought(Sum, { maxRepairs: 0, sandbox: { timeoutMs: 200 } });
    expect([pot.signature, pot.maxRepairs, pot.sandboxOptions]).toEqual([Sum, 0, { timeoutMs: 200 }]);
    expect([pot.generate.signature.name, pot.repair.signature.name]).toEqual(["SumProgramGenerate", "SumProgramRepair"]);
    expect(Object.keys(pot.repair.compiledSignature.inputShape)).toEqual(["a", "b", "previousCode", "error"]);
    expect(new ProgramOfThought(Sum).maxRepairs).toBe(3);
    expect(validationError(() => new ProgramOfThought(Sum, { maxRepairs: -1 })).message)
      .toBe("ProgramOfThought option maxRepairs: expected an integer >= 0, received -1");
  });

  test("demos of the task's outputs become answer(...) programs; program demos stay as they are", () => {
    const pot = new ProgramOfThought(Sum);
    pot.demos = [
      new FewShotExample({ input: { a: 40, b: 2 }, output: { total: 42 } }),
      new FewShotExample({ input: { a: 1, b: 1 }, output: { code: "answer({ total: 2 })" } }),
    ];
    expect(pot.demos.map((d) => d.output)).toEqual([{ code: 'answer({"total":42});' }, { code: "answer({ total: 2 })" }]);
  });
});

describe("ChainOfThought through the bundle", () => {
  test("`reasoning` comes first; one derived signature per task signature; a signature with its own is refused", async () => {
    const cot = new ChainOfThought(Question);
    expect(cot.baseSignature).toBe(Question);
    expect(Object.keys(cot.compiledSignature.outputShape)).toEqual(["reasoning", "answer"]);
    expect(new ChainOfThought(Question).signature).toBe(cot.signature);
    const r = await cot.call({ question: "?" }, { lm: new ScriptedLM([{ reasoning: "because", answer: "yes" }]) });
    expect([r.reasoning, r.answer]).toEqual(["because", "yes"]);
    const Own = Signature.define({ name: "Own", description: "", input: { q: z.string() }, output: { reasoning: z.string() } });
    const error = validationError(() => new ChainOfThought(Own));
    expect(error.message).toBe('Own declares its own "reasoning" output; ChainOfThought adds that field itself, so remove it or use Predict');
    expect(error.field).toBe("reasoning");
  });

  test("a subclass of ChainOfThought", () => {
    class Careful extends ChainOfThought<typeof Question.input, typeof Question.output> {
      constructor() {
        super(Question, { instruction: "Think carefully." });
      }
    }
    const careful = new Careful();
    expect([careful instanceof ChainOfThought, careful.instruction, careful.signature]).toEqual([true, "Think carefully.", new ChainOfThought(Question).signature]);
  });
});
