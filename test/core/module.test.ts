import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import {
  ChainOfThought, ConfigurationError, FewShotExample, Instrumentation, Module, Predict, Signature, ValidationError,
  configure, resetConfiguration, withLM,
} from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment.",
  input: { text: z.string() },
  output: { label: z.enum(["pos", "neg"]) },
});
const Summarize = Signature.define({
  name: "Summarize",
  description: "Summarize the text.",
  input: { text: z.string() },
  output: { summary: z.string() },
});

class Pipeline extends Module<{ text: string }, { label: string; summary: string }> {
  classify = new Predict(Classify);
  summarize = new ChainOfThought(Summarize);
  async forward({ text }: { text: string }) {
    const c = await this.classify.call({ text });
    const s = await this.summarize.call({ text });
    return { label: c.label, summary: s.summary };
  }
}

/** Answers every request with the model's name, so a test can see which model was used. */
function namedLM(name: string) {
  return new ScriptedLM((req) => (req.signature?.name === "Summarize" ? { reasoning: "r", summary: name } : { label: "pos" }), { model: name });
}

afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
});

describe("Module", () => {
  it("runs forward through call and combines its predictors' results", async () => {
    const lm = new ScriptedLM([{ label: "neg" }, { reasoning: "short", summary: "bad day" }]);
    const m = new Pipeline().configure((c) => { c.lm = lm; });
    expect(await m.call({ text: "what a bad day" })).toEqual({ label: "neg", summary: "bad day" });
    expect(lm.requests.map((r) => r.signature?.name)).toEqual(["Classify", "Summarize"]);
  });

  it("emits module.forward.start and module.forward.end around call", async () => {
    const names: string[] = [];
    Instrumentation.subscribe(/^module\.forward\./, (e) => names.push(`${e.name}:${String(e.payload["module"])}`));
    await new Pipeline().call({ text: "x" }, { lm: namedLM("a") });
    expect(names[0]).toBe("module.forward.start:Pipeline");
    expect(names.at(-1)).toBe("module.forward.end:Pipeline");
    expect(names.filter((n) => n.endsWith(":Predict"))).toHaveLength(2);
  });

  it("reports a failing forward in module.forward.end and rethrows", async () => {
    const ends: unknown[] = [];
    Instrumentation.subscribe("module.forward.end", (e) => ends.push(e.payload["ok"]));
    await expect(new Pipeline().call({ text: "x" }, { lm: new ScriptedLM(["nonsense"]) })).rejects.toThrow();
    expect(ends).toContain(false);
  });

  it("lists its predictors with their paths", () => {
    const paths = new Pipeline().namedPredictors().map(([p]) => p);
    expect(paths).toEqual(["classify", "summarize"]);
  });

  it("finds predictors in nested modules and arrays", () => {
    class Outer extends Module {
      inner = new Pipeline();
      extra = [new Predict(Classify)];
      async forward() { return {}; }
    }
    expect(new Outer().namedPredictors().map(([p]) => p)).toEqual(["inner.classify", "inner.summarize", "extra[0]"]);
  });

  it("dumps and loads each predictor's instruction and demos", () => {
    const a = new Pipeline();
    a.classify.instruction = "Be strict.";
    a.summarize.demos = [new FewShotExample({ input: { text: "t" }, output: { reasoning: "r", summary: "s" } })];
    const state = JSON.parse(JSON.stringify(a.dumpState()));
    const b = new Pipeline().loadState(state);
    expect(b.classify.instruction).toBe("Be strict.");
    expect(b.summarize.demos).toHaveLength(1);
    expect(b.summarize.demos[0]).toBeInstanceOf(FewShotExample);
    expect(b.summarize.demos[0]!.output).toEqual({ reasoning: "r", summary: "s" });
    expect(b.summarize.instruction).toBe("Summarize the text.");
  });

  it("refuses state that names a predictor it does not have", () => {
    expect(() => new Pipeline().loadState({ predictors: { nope: { instruction: "x", demos: [] } } })).toThrow(ValidationError);
  });

  it("clones deeply: changing the clone leaves the original alone", () => {
    const a = new Pipeline();
    const b = a.clone();
    expect(b).toBeInstanceOf(Pipeline);
    expect(b.classify).not.toBe(a.classify);
    b.classify.instruction = "changed";
    b.summarize.demos.push(new FewShotExample({ input: { text: "t" }, output: { summary: "s" } }));
    expect(a.classify.instruction).toBe("Classify the sentiment.");
    expect(a.summarize.demos).toHaveLength(0);
  });

  it("a clone still works and uses its own prompt", async () => {
    const a = new Pipeline();
    const lm = new ScriptedLM([{ label: "pos" }, { reasoning: "r", summary: "s" }]);
    const b = a.clone();
    b.classify.instruction = "Clone instruction.";
    await b.call({ text: "x" }, { lm });
    expect(lm.requests[0]!.messages[0]!.content).toContain("Clone instruction.");
  });

  it("clones a module with a back-reference to its parent, pointing the copy at the copied parent", () => {
    class Child extends Module {
      parent: Module | undefined;
      inner = new Predict(Classify);
      async forward() { return {}; }
    }
    class Parent extends Module {
      child = new Child();
      async forward() { return {}; }
    }
    const a = new Parent();
    a.child.parent = a;
    const b = a.clone();
    expect(b.child).not.toBe(a.child);
    expect(b.child.parent).toBe(b);
    expect(b.child.inner).not.toBe(a.child.inner);
    expect(b.namedPredictors().map(([path]) => path)).toEqual(["child.inner"]);
  });

  it("keeps one sub-module shared by two properties (or an array and a map) as one copy", () => {
    class Shared extends Module {
      first = new Predict(Classify);
      second = this.first;
      list = [this.first];
      byName = new Map([["p", this.first]]);
      settings = { predictor: this.first };
      async forward() { return {}; }
    }
    const a = new Shared();
    const b = a.clone();
    expect(b.first).not.toBe(a.first);
    expect(b.second).toBe(b.first);
    expect(b.list[0]).toBe(b.first);
    expect(b.byName.get("p")).toBe(b.first);
    expect(b.settings.predictor).toBe(b.first);
    b.first.instruction = "tuned";
    expect(b.second.instruction).toBe("tuned");
    expect(a.first.instruction).toBe("Classify the sentiment.");
  });
});

describe("LM resolution order", () => {
  it("raises ConfigurationError when no LM is configured anywhere", async () => {
    await expect(new Predict(Classify).call({ text: "x" })).rejects.toThrow(ConfigurationError);
  });

  it("prefers per-call, then own, then parent module, then withLM, then global", async () => {
    const global = namedLM("global");
    configure((c) => { c.lm = global; });
    const m = new Pipeline();
    expect((await m.call({ text: "x" })).summary).toBe("global");
    expect((await withLM(namedLM("scoped"), () => m.call({ text: "x" }))).summary).toBe("scoped");
    m.configure((c) => { c.lm = namedLM("parent"); });
    expect((await withLM(namedLM("scoped"), () => m.call({ text: "x" }))).summary).toBe("parent");
    m.summarize.configure((c) => { c.lm = namedLM("own"); });
    expect((await m.call({ text: "x" })).summary).toBe("own");
    expect((await m.summarize.call({ text: "x" }, { lm: namedLM("per-call") })).summary).toBe("per-call");
  });

  it("keeps withLM scopes apart across concurrent calls", async () => {
    const p = new Predict(Summarize);
    const fast = new ScriptedLM(() => ({ summary: "fast" }));
    const slow = new ScriptedLM(async () => { await new Promise((r) => setTimeout(r, 20)); return { summary: "slow" }; });
    const [a, b] = await Promise.all([
      withLM(slow, () => p.call({ text: "1" })),
      withLM(fast, () => p.call({ text: "2" })),
    ]);
    expect(a.summary).toBe("slow");
    expect(b.summary).toBe("fast");
  });
});
