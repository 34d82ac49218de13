/** API.md "Predictors and predictions", "Modules" and "Errors" — imports by package name (dist/). */
import { afterEach, describe, expect, test } from "@jest/globals";
import { z } from "zod";
import {
  CalculatorTool, ChainOfThought, CodeAct, Evaluation, FewShotExample, Instrumentation, MaxIterationsError, Module, OutputError,
  Predict, ProgramOfThought, ReAct, Signature, ValidationError, configure, tool,
} from "typelm";
import type { TypelmEvent } from "typelm";
import { ScriptedLM } from "typelm/testing";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string().describe("text to classify") };
  static override output = { sentiment: z.enum(["positive", "negative", "neutral"]), confidence: z.number().default(1.0) };
}
class Question extends Signature {
  static override description = "Answer the question.";
  static override input = { question: z.string() };
  static override output = { answer: z.string() };
}
class Solve extends Signature {
  static override description = "Solve the arithmetic problem.";
  static override input = { problem: z.string() };
  static override output = { value: z.number() };
}

const sent = (lm: ScriptedLM) => lm.requests.map((r) => r.messages.map((m) => m.content).join("\n")).join("\n");

describe("Predict and Prediction", () => {
  test("outputs are typed properties; toJSON(); keys the signature does not declare are ignored", async () => {
    const lm = new ScriptedLM([{ sentiment: "positive", confidence: 0.9, extra: "nope" }]);
    const r = await new Predict(Classify).call({ sentence: "I love it" }, { lm });
    expect(r.sentiment).toBe("positive");
    expect(r.confidence).toBe(0.9);
    expect((r as any).extra).toBeUndefined();
    expect(r.toJSON()).toEqual({ sentiment: "positive", confidence: 0.9 });
  });

  test("ScriptedLM request carries messages, the signature class and inputs after defaults", async () => {
    const lm = new ScriptedLM((req) => ({ sentiment: req.signature === Classify ? "negative" : "neutral" }));
    const r = await new Predict(Classify).call({ sentence: "meh" }, { lm });
    expect(r.sentiment).toBe("negative");
    const req = lm.requests[0]!;
    expect(req.inputs).toEqual({ sentence: "meh" });
    expect(req.messages.every((m) => typeof m.role === "string" && typeof m.content === "string")).toBe(true);
    expect(req.messages.some((m) => m.role === "user" && m.content.includes("meh"))).toBe(true);
  });

  test("a missing or mistyped input is a ValidationError naming the field, before any model call", async () => {
    const lm = new ScriptedLM([{ sentiment: "positive" }]);
    const p = new Predict(Classify);
    await expect(p.call({} as any, { lm })).rejects.toThrow(ValidationError);
    await expect(p.call({} as any, { lm })).rejects.toThrow(/sentence/);
    await expect(p.call({ sentence: 42 } as any, { lm })).rejects.toThrow(ValidationError);
    expect(lm.requests).toHaveLength(0);
  });

  test("an unparseable or unconvertible reply is an OutputError with raw, path, expected, received", async () => {
    const bad = new ScriptedLM(["this is not json at all"]);
    const e1 = await new Predict(Classify).call({ sentence: "x" }, { lm: bad }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(OutputError);
    expect((e1 as OutputError).raw).toContain("this is not json at all");
    const wrong = new ScriptedLM([{ sentiment: "ecstatic" }]);
    const e2 = await new Predict(Classify).call({ sentence: "x" }, { lm: wrong }).catch((e: unknown) => e) as OutputError;
    expect(e2).toBeInstanceOf(OutputError);
    expect(String(e2.path)).toContain("sentiment");
    expect(e2.raw).toContain("ecstatic");
    expect(JSON.stringify(e2.received)).toContain("ecstatic");
    expect(JSON.stringify(e2.expected)).toMatch(/positive/);
  });
});

describe("instruction and demos reach the prompt for every predictor kind", () => {
  const demo = new FewShotExample({ input: { question: "DEMO-QUESTION-XYZ" }, output: { answer: "DEMO-ANSWER-XYZ" }, id: "train-1" });

  test("Predict: instruction defaults to the description; both are read/write", async () => {
    const p = new Predict(Question);
    expect(p.instruction).toBe("Answer the question.");
    expect(p.demos).toEqual([]);
    p.instruction = "INSTRUCTION-MARKER-1";
    p.demos = [demo];
    expect(p.instruction).toBe("INSTRUCTION-MARKER-1");
    expect(p.demos.map((d) => d.id)).toEqual(["train-1"]);
    const lm = new ScriptedLM([{ answer: "a" }]);
    await p.call({ question: "q" }, { lm });
    expect(sent(lm)).toContain("INSTRUCTION-MARKER-1");
    expect(sent(lm)).toContain("DEMO-QUESTION-XYZ");
    expect(sent(lm)).toContain("DEMO-ANSWER-XYZ");
  });

  test("ChainOfThought", async () => {
    const p = new ChainOfThought(Question);
    p.instruction = "INSTRUCTION-MARKER-2";
    p.demos = [demo];
    const lm = new ScriptedLM([{ reasoning: "r", answer: "a" }]);
    const r = await p.call({ question: "q" }, { lm });
    expect(r.reasoning).toBe("r");
    expect(sent(lm)).toContain("INSTRUCTION-MARKER-2");
    expect(sent(lm)).toContain("DEMO-QUESTION-XYZ");
  });

  test("ReAct: history of { step, thought, action, toolInput, observation }; instruction and demos reach the prompts", async () => {
    const agent = new ReAct(Question, { tools: [new CalculatorTool()], maxIterations: 10 });
    agent.instruction = "INSTRUCTION-MARKER-3";
    agent.demos = [demo];
    const lm = new ScriptedLM([
      { thought: "compute", action: "calculator", toolInput: { expression: "2 * (3 + 4)" } },
      { thought: "done", action: "finish", toolInput: {} },
      { answer: "14" },
    ]);
    const r = await agent.call({ question: "what is 2*(3+4)?" }, { lm });
    expect(r.answer).toBe("14");
    expect(r.history[0]).toEqual({ step: expect.any(Number), thought: "compute", action: "calculator", toolInput: { expression: "2 * (3 + 4)" }, observation: 14 });
    expect(Object.keys(r.history[0]!).sort()).toEqual(["action", "observation", "step", "thought", "toolInput"]);
    expect(sent(lm)).toContain("INSTRUCTION-MARKER-3");
    expect(sent(lm)).toContain("DEMO-QUESTION-XYZ");
    expect(agent.namedPredictors().length).toBeGreaterThanOrEqual(2);
  });

  test("ReAct: invalid tool arguments become an error observation, not a crash", async () => {
    const echo = tool({ name: "echo", description: "Echo text", input: { text: z.string() }, call: async ({ text }) => text });
    const lm = new ScriptedLM([
      { thought: "t", action: "echo", toolInput: { text: 5 } },
      { thought: "t", action: "finish", toolInput: {} },
      { answer: "ok" },
    ]);
    const r = await new ReAct(Question, { tools: [echo] }).call({ question: "q" }, { lm });
    expect(r.answer).toBe("ok");
    expect(String(r.history[0]!.observation)).toMatch(/error/i);
  });

  test("ReAct out of iterations with a failing extraction: MaxIterationsError carrying the partial history", async () => {
    const lm = new ScriptedLM((req) => (JSON.stringify(req.messages).includes("availableTools")
      ? { thought: "again", action: "calculator", toolInput: { expression: "1+1" } }
      : "no json here"));
    const err = await new ReAct(Question, { tools: [new CalculatorTool()], maxIterations: 2 }).call({ question: "q" }, { lm }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MaxIterationsError);
    expect((err as MaxIterationsError).history.length).toBe(2);
  });

  test("CodeAct: r.solution and history of { step, thought, code, output, error }; instruction reaches the prompt", async () => {
    const agent = new CodeAct(Solve, { maxIterations: 8 });
    agent.instruction = "INSTRUCTION-MARKER-4";
    const lm = new ScriptedLM([
      { thought: "compute", code: "const v = 6 * 7; console.log(v);", finished: false },
      { thought: "done", code: "", finished: true },
      { value: 42, solution: "6 times 7 is 42" },
    ]);
    const r = await agent.call({ problem: "6*7" }, { lm });
    expect(r.value).toBe(42);
    expect(r.solution).toBe("6 times 7 is 42");
    const h = r.history[0]!;
    expect(h.code).toContain("6 * 7");
    expect(h.output).toContain("42");
    expect(h.error).toBeNull();
    expect(["code", "error", "output", "step", "thought"].every((k) => k in h)).toBe(true);
    expect(sent(lm)).toContain("INSTRUCTION-MARKER-4");
  });

  test("ProgramOfThought: the model writes JavaScript, run in the sandbox; instruction reaches the prompt", async () => {
    const pot = new ProgramOfThought(Solve);
    pot.instruction = "INSTRUCTION-MARKER-5";
    const lm = new ScriptedLM([{ code: "answer({ value: 6 * 7 })" }]);
    const r = await pot.call({ problem: "6*7" }, { lm });
    expect(r.value).toBe(42);
    expect(sent(lm)).toContain("INSTRUCTION-MARKER-5");
  });
});

describe("Modules", () => {
  class Summarize extends Signature {
    static override description = "Summarize the text.";
    static override input = { text: z.string() };
    static override output = { summary: z.string() };
  }
  class Pipeline extends Module {
    classify = new Predict(Classify);
    summarize = new ChainOfThought(Summarize);
    async forward({ text }: { text: string }) {
      const c = await this.classify.call({ sentence: text });
      const s = await this.summarize.call({ text });
      return { sentiment: c.sentiment, summary: s.summary };
    }
  }
  const replies = (req: { signature: unknown }) => (req.signature === Classify ? { sentiment: "positive" } : { reasoning: "r", summary: "short" });

  afterEach(() => configure((c) => { c.lm = undefined as any; }));

  test("call() runs forward() between module.forward.start and module.forward.end; m.configure sets the LM", async () => {
    const m = new Pipeline();
    m.configure((c) => { c.lm = new ScriptedLM(replies); });
    const names: string[] = [];
    const off = Instrumentation.subscribe(/^module\.forward\./, (e: TypelmEvent) => { names.push(e.name); });
    try {
      expect(await m.call({ text: "great" })).toEqual({ sentiment: "positive", summary: "short" });
    } finally { off(); }
    // Predictors are Modules too, so their calls nest inside the pipeline's start/end.
    expect(names[0]).toBe("module.forward.start");
    expect(names[names.length - 1]).toBe("module.forward.end");
    expect(names.filter((n) => n.endsWith("start")).length).toBe(names.filter((n) => n.endsWith("end")).length);
  });

  test("namedPredictors lists [path, predictor] pairs found on properties", () => {
    const m = new Pipeline();
    const pairs = m.namedPredictors();
    const paths = pairs.map(([p]) => p);
    expect(paths.some((p) => p.startsWith("classify"))).toBe(true);
    expect(paths.some((p) => p.startsWith("summarize"))).toBe(true);
    expect(pairs.find(([p]) => p === "classify")?.[1]).toBe(m.classify);
  });

  test("dumpState/loadState carry instructions and demos; clone() is deep", async () => {
    const m = new Pipeline();
    m.classify.instruction = "STATE-MARKER";
    m.classify.demos = [new FewShotExample({ input: { sentence: "s" }, output: { sentiment: "negative" }, id: "d1" })];
    const state = JSON.parse(JSON.stringify(m.dumpState()));
    const other = new Pipeline();
    other.loadState(state);
    expect(other.classify.instruction).toBe("STATE-MARKER");
    expect(other.classify.demos.map((d) => d.id)).toEqual(["d1"]);
    const copy = m.clone();
    expect(copy).toBeInstanceOf(Pipeline);
    copy.classify.instruction = "CHANGED";
    expect(m.classify.instruction).toBe("STATE-MARKER");
    expect(copy.classify).not.toBe(m.classify);
    const lm = new ScriptedLM(replies);
    await other.call({ text: "x" }, { lm });
    expect(sent(lm)).toContain("STATE-MARKER");
  });
});

describe("SimulatedLM (typelm/testing)", () => {
  test("answers from the prompt only: a rule phrase in the instruction, else the nearest demo, else the first label; usage estimated", async () => {
    const { SimulatedLM } = await import("typelm/testing");
    const lm = new SimulatedLM({ rules: [{ phrase: "use the magic rule", answer: () => ({ sentiment: "neutral" }) }] });
    const p = new Predict(Classify);
    expect((await p.call({ sentence: "good stuff" }, { lm })).sentiment).toBe("positive"); // first label
    p.demos = [new FewShotExample({ input: { sentence: "bad stuff" }, output: { sentiment: "negative" }, id: "d" })];
    expect((await p.call({ sentence: "bad stuff indeed" }, { lm })).sentiment).toBe("negative"); // nearest demo
    p.instruction = "Please USE THE MAGIC RULE.";
    expect((await p.call({ sentence: "bad stuff indeed" }, { lm })).sentiment).toBe("neutral"); // rule
    expect(lm.requests).toHaveLength(3);
    const blind = new SimulatedLM({ promptBlind: true, rules: [{ phrase: "use the magic rule", answer: () => ({ sentiment: "neutral" }) }] });
    expect((await p.call({ sentence: "bad stuff indeed" }, { lm: blind })).sentiment).toBe("positive");
    p.configure((c) => { c.lm = lm; });
    const report = await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: p, testExamples: [
      new FewShotExample({ input: { sentence: "x" }, output: { sentiment: "neutral" }, id: "x" })] });
    expect(report.accuracy).toBe(1);
    expect(report.inputTokens).toBeGreaterThan(0);
    expect(report.outputTokens).toBeGreaterThan(0);
    expect(report.cost).toBe(0);
  });
});
