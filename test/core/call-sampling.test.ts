import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { configure, withLM } from "../../lib/config.js";
import { ValidationError } from "../../lib/errors.js";
import { Module, type CallOptions } from "../../lib/module.js";
import { ChainOfThought } from "../../lib/predict/chain-of-thought.js";
import { CodeAct } from "../../lib/predict/codeact.js";
import { Predict } from "../../lib/predict/predict.js";
import { ProgramOfThought } from "../../lib/predict/program-of-thought.js";
import { ReAct } from "../../lib/predict/react.js";
import { Signature } from "../../lib/signature/signature.js";
import { ScriptedLM, SimulatedLM, type ScriptedRequest } from "../../lib/testing/index.js";
import { resetAfterEach } from "../helpers/scripted.js";

const Draft = Signature.define({
  name: "Draft",
  description: "Draft an answer.",
  input: { question: z.string() },
  output: { draft: z.string() },
});

const Polish = Signature.define({
  name: "Polish",
  description: "Polish the draft.",
  input: { draft: z.string() },
  output: { answer: z.string() },
});

const Sum = Signature.define({
  name: "Sum",
  description: "Add the two numbers.",
  input: { a: z.number(), b: z.number() },
  output: { total: z.number() },
});

/** A user module whose forward calls two child predictors without passing any options. */
class DraftThenPolish extends Module<{ question: string }, { answer: string }> {
  readonly draft = new Predict(Draft);
  readonly polish = new Predict(Polish);
  async forward(inputs: { question: string }) {
    const d = await this.draft.call(inputs);
    return this.polish.call({ draft: d.draft });
  }
}

/** A ScriptedLM answering every request by its signature, recording each request. */
function scripted(): ScriptedLM {
  return new ScriptedLM((req: ScriptedRequest) => (req.signature?.name === "Draft" ? { draft: "d" } : { answer: "a" }));
}

const sampling = (lm: ScriptedLM) => lm.requests.map((r) => ({ temperature: r.temperature, rolloutId: r.rolloutId }));

resetAfterEach();

describe("temperature and rolloutId reach every model call inside a call", () => {
  it("a composed module's children carry the call's rolloutId (and temperature) without being passed options", async () => {
    const lm = scripted();
    const program = new DraftThenPolish();
    await program.call({ question: "q" }, { lm, rolloutId: 1 });
    await program.call({ question: "q" }, { lm, rolloutId: 2, temperature: 1 });
    expect(lm.requests.map((r) => r.signature?.name)).toEqual(["Draft", "Polish", "Draft", "Polish"]);
    expect(sampling(lm)).toEqual([
      { temperature: undefined, rolloutId: 1 },
      { temperature: undefined, rolloutId: 1 },
      { temperature: 1, rolloutId: 2 },
      { temperature: 1, rolloutId: 2 },
    ]);
  });

  it("ScriptedRequest has temperature and rolloutId: undefined when not given, the LM's temperature as a fallback", async () => {
    const lm = scripted();
    await new Predict(Draft).call({ question: "q" }, { lm });
    expect(lm.requests[0]).toHaveProperty("temperature", undefined);
    expect(lm.requests[0]).toHaveProperty("rolloutId", undefined);
    const warm = new ScriptedLM([{ draft: "d" }, { draft: "d" }], { temperature: 0.4 });
    await new Predict(Draft).call({ question: "q" }, { lm: warm });
    await new Predict(Draft).call({ question: "q" }, { lm: warm, temperature: 0 });
    expect(sampling(warm)).toEqual([{ temperature: 0.4, rolloutId: undefined }, { temperature: 0, rolloutId: undefined }]);
  });

  it("the innermost call's option wins; what it does not set is inherited", async () => {
    class Nested extends Module<{ question: string }, unknown> {
      readonly inner = new Predict(Draft);
      readonly other = new Predict(Draft);
      async forward(inputs: { question: string }) {
        await this.inner.call(inputs, { rolloutId: "inner" });
        return this.other.call(inputs, { temperature: 0.1 });
      }
    }
    const lm = scripted();
    await new Nested().call({ question: "q" }, { lm, rolloutId: "outer", temperature: 0.9 });
    expect(sampling(lm)).toEqual([{ temperature: 0.9, rolloutId: "inner" }, { temperature: 0.1, rolloutId: "outer" }]);
  });

  it("does not leak out of the call: a later call without options has none", async () => {
    const lm = scripted();
    configure((c) => { c.lm = lm; });
    const program = new DraftThenPolish();
    await Promise.all([program.call({ question: "q" }, { rolloutId: 9 }), program.call({ question: "q" })]);
    await new Predict(Draft).call({ question: "q" });
    const ids = lm.requests.map((r) => r.rolloutId);
    expect(ids.filter((id) => id === 9)).toHaveLength(2);
    expect(ids.filter((id) => id === undefined)).toHaveLength(3);
    expect(ids.at(-1)).toBeUndefined();
  });

  it("applies when forward is called directly, and inside withLM", async () => {
    const lm = scripted();
    await new Predict(Draft).forward({ question: "q" }, { lm, rolloutId: "f" });
    await withLM(lm, () => new DraftThenPolish().call({ question: "q" }, { rolloutId: "w" }));
    expect(lm.requests.map((r) => r.rolloutId)).toEqual(["f", "w", "w"]);
  });

  it("reaches ChainOfThought and the inner predictors of ReAct, CodeAct and ProgramOfThought", async () => {
    const cot = new ScriptedLM([{ reasoning: "r", draft: "d" }]);
    await new ChainOfThought(Draft).call({ question: "q" }, { lm: cot, rolloutId: "cot", temperature: 1 });

    const react = new ScriptedLM([{ thought: "done", action: "finish", toolInput: {} }, { total: 3 }]);
    await new ReAct(Sum, { tools: [] }).call({ a: 1, b: 2 }, { lm: react, rolloutId: "react", temperature: 1 });

    const codeact = new ScriptedLM([{ thought: "t", code: "console.log(inputs.a + inputs.b)", finished: true }, { total: 3, solution: "s" }]);
    await new CodeAct(Sum).call({ a: 1, b: 2 }, { lm: codeact, rolloutId: "codeact", temperature: 1 });

    const pot = new ScriptedLM([{ code: "answer({ total: 1 + })" }, { code: "answer({ total: inputs.a + inputs.b })" }]);
    await new ProgramOfThought(Sum).call({ a: 1, b: 2 }, { lm: pot, rolloutId: "pot", temperature: 1 });

    for (const [lm, id, count] of [[cot, "cot", 1], [react, "react", 2], [codeact, "codeact", 2], [pot, "pot", 2]] as const) {
      expect(lm.requests).toHaveLength(count);
      expect(sampling(lm)).toEqual(Array.from({ length: count }, () => ({ temperature: 1, rolloutId: id })));
    }
  });
});

describe("bad sampling options", () => {
  it.each<[string, CallOptions, string]>([
    ["temperature -1", { temperature: -1 }, "temperature"],
    ["temperature NaN", { temperature: Number.NaN }, "temperature"],
    ["temperature -Infinity", { temperature: Number.NEGATIVE_INFINITY }, "temperature"],
    ["rolloutId Infinity", { rolloutId: Number.POSITIVE_INFINITY }, "rolloutId"],
    ["rolloutId [1]", { rolloutId: [1] as unknown as number }, "rolloutId"],
  ])("%s is a ValidationError naming the option, before any model call (module, predictor, agent, forward)", async (_name, options, field) => {
    const lm = scripted();
    const attempts = [
      () => new DraftThenPolish().call({ question: "q" }, { lm, ...options }),
      () => new Predict(Draft).call({ question: "q" }, { lm, ...options }),
      () => new Predict(Draft).forward({ question: "q" }, { lm, ...options }),
      () => new ReAct(Sum, { tools: [] }).call({ a: 1, b: 2 }, { lm, ...options }),
    ];
    for (const attempt of attempts) {
      const error = await attempt().then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe(field);
      expect((error as Error).message).toContain(field);
    }
    expect(lm.requests).toHaveLength(0);
  });
});

describe("SimulatedLM", () => {
  const Propose = Signature.define({
    name: "Propose",
    description: "Propose a new instruction for the task.",
    input: { task: z.string() },
    output: { proposedInstruction: z.string() },
  });

  it("passes a rule's answer the request's { temperature, rolloutId }, so answers can vary by rollout", async () => {
    const seen: unknown[] = [];
    const lm = new SimulatedLM({
      rules: [{
        phrase: "propose a new instruction",
        answer: ({ task }, s) => {
          seen.push(s);
          return { proposedInstruction: `${String(task)} (rollout ${String(s.rolloutId)})` };
        },
      }],
    });
    const proposer = new Predict(Propose);
    const answers = [];
    for (const rolloutId of [1, 2, 2]) answers.push((await proposer.call({ task: "classify" }, { lm, temperature: 1, rolloutId })).proposedInstruction);
    await proposer.call({ task: "classify" }, { lm });
    expect(answers).toEqual(["classify (rollout 1)", "classify (rollout 2)", "classify (rollout 2)"]);
    expect(seen).toEqual([
      { temperature: 1, rolloutId: 1 },
      { temperature: 1, rolloutId: 2 },
      { temperature: 1, rolloutId: 2 },
      { temperature: undefined, rolloutId: undefined },
    ]);
    expect(lm.requests.map((r) => r.sampling)).toEqual(seen);
    expect(lm.requests.map((r) => r.decision)).toEqual(Array(4).fill("rule:propose a new instruction"));
  });

  it("gives the LM's own temperature when the call sets none", async () => {
    const seen: unknown[] = [];
    const lm = new SimulatedLM({ temperature: 0.5, rules: [{ phrase: "propose", answer: (_inputs, s) => (seen.push(s), { proposedInstruction: "x" }) }] });
    await new Predict(Propose).call({ task: "t" }, { lm });
    expect(seen).toEqual([{ temperature: 0.5, rolloutId: undefined }]);
  });
});
