import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChainOfThought, CodeAct, FewShotExample, LabStore, MaxIterationsError, Predict, ProgramOfThought, ReAct, Registry, Signature, tool } from "../../lib/index.js";
import { display } from "../../lib/notebook/index.js";
import type { RunSummary } from "../../lib/store/records.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment of a sentence.",
  input: { sentence: z.string() },
  output: { sentiment: z.enum(["positive", "negative", "neutral"]), note: z.string() },
});

const Question = Signature.define({ name: "Question", description: "Answer with the tools.", input: { question: z.string() }, output: { answer: z.string() } });

const lookup = tool({
  name: "lookup",
  description: "Looks a word up; fails for unknown words.",
  input: { word: z.string() },
  call: ({ word }) => {
    if (word !== "tea") throw new Error(`no entry for <${word}>`);
    return "a drink";
  },
});

describe("display.prediction", () => {
  it("shows each output field, with model text escaped, and the model and tokens", async () => {
    const lm = new ScriptedLM([{ sentiment: "negative", note: "<script>alert('x')</script> & more" }]);
    const p = await new Predict(Classify).call({ sentence: "meh" }, { lm });
    const bundle = display.prediction(p)!;
    expect(Object.keys(bundle).sort()).toEqual(["text/html", "text/plain"]);
    expect(bundle["text/html"]).not.toContain("<script>");
    expect(bundle["text/html"]).toContain("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more");
    expect(bundle["text/html"]).toContain("scripted");
    expect(bundle["text/plain"]).toMatch(/sentiment\s+negative/);
  });

  it("puts ChainOfThought's reasoning first", async () => {
    const lm = new ScriptedLM([{ reasoning: "The word 'great' is positive.", sentiment: "positive", note: "n" }]);
    const p = await new ChainOfThought(Classify).call({ sentence: "great" }, { lm });
    const lines = display.prediction(p)!["text/plain"].split("\n");
    const firstField = lines.findIndex((l) => /^(reasoning|sentiment|note)\s/.test(l));
    expect(lines[firstField]).toMatch(/^reasoning\s+The word 'great' is positive\./);
  });
});

describe("display.trace", () => {
  it("lays out a ReAct run step by step, the failed tool call highlighted and escaped", async () => {
    const lm = new ScriptedLM([
      { thought: "Look up <coffee>.", action: "lookup", toolInput: { word: "coffee" } },
      { thought: "Try tea instead.", action: "lookup", toolInput: { word: "tea" } },
      { thought: "Done.", action: "finish", toolInput: {} },
      { answer: "tea is a drink" },
    ]);
    const r = await new ReAct(Question, { tools: [lookup] }).call({ question: "what is tea?" }, { lm });
    const bundle = display.trace(r)!;
    const html = bundle["text/html"];
    expect(html).toContain("Agent trace: 3 steps, 1 with errors");
    expect(html).toContain("Thought:</i> Look up &lt;coffee&gt;.");
    expect(html).toContain("no entry for &lt;coffee&gt;");
    expect(html).not.toContain("<coffee>");
    // The failing step is drawn in the error style, the others are not.
    expect(html.match(/background:#fdecea/g)).toHaveLength(1);
    expect(html).toContain("a drink");
    expect(html).toContain("tea is a drink");
    expect(bundle["text/plain"]).toContain("Step 1 [ERROR]");
    expect(bundle["text/plain"]).toContain('action: lookup {"word":"tea"}');
  });

  it("shows CodeAct's code and output, and the error of a step that threw", async () => {
    const Task = Signature.define({ name: "Task", description: "Solve it.", input: { n: z.number().int() }, output: { answer: z.number() } });
    const lm = new ScriptedLM([
      { thought: "Compute.", code: "console.log(squar(inputs.n))", finished: false },
      { thought: "Define it.", code: "const squar = (x) => x < 0 ? 0 : x * x;\nconsole.log(squar(inputs.n))", finished: true },
      { answer: 9, solution: "9" },
    ]);
    const r = await new CodeAct(Task).call({ n: 3 }, { lm });
    const bundle = display.trace(r)!;
    expect(bundle["text/html"]).toContain("const squar = (x) =&gt; x &lt; 0 ? 0 : x * x;");
    expect(bundle["text/html"]).toMatch(/<b>Error:<\/b> ReferenceError: .*squar/);
    expect(bundle["text/plain"]).toContain("output: 9");
  });

  it("shows ProgramOfThought's attempts: the failed program in red, then the one that answered", async () => {
    const Sum = Signature.define({ name: "Sum", description: "Add.", input: { a: z.number(), b: z.number() }, output: { total: z.number() } });
    const lm = new ScriptedLM([
      { code: "console.log('trying');\nanswer({ total: inputs.a + inputs.c.value })" },
      { code: "answer({ total: inputs.a + inputs.b })" },
    ]);
    const r = await new ProgramOfThought(Sum).call({ a: 1, b: 2 }, { lm });
    const bundle = display.trace(r)!;
    expect(bundle["text/plain"]).toContain("Agent trace: 2 steps, 1 with errors");
    expect(bundle["text/plain"]).toMatch(/Step 1 \[ERROR\][\s\S]*TypeError/);
    expect(bundle["text/html"]).toContain("answer({ total: inputs.a + inputs.b })");
    expect(bundle["text/plain"]).toContain("total: 3");
  });

  it("shows the steps of an agent that ran out of iterations", () => {
    const error = new MaxIterationsError("ReAct stopped after 1 iteration", {
      history: [{ step: 1, thought: "t", action: "lookup", toolInput: { word: "x" }, observation: "Error: no entry" }],
      maxIterations: 1,
    });
    const html = display.trace(error)!["text/html"];
    expect(html).toContain("MaxIterationsError:</b> ReAct stopped after 1 iteration");
    expect(html).toContain("Agent trace: 1 step, 1 with errors");
  });

  it("says what it expected when given a plain prediction", () => {
    expect(() => display.trace({ answer: "x" })).toThrow(/display\.trace expects an agent result/);
  });
});

describe("display.examples", () => {
  it("tabulates ids, inputs and outputs, escaped, and says how many were left out", () => {
    const examples = Array.from({ length: 25 }, (_, i) => new FewShotExample({ id: `train-${i}`, input: { sentence: `<i>${i}</i>` }, output: { sentiment: "positive" } }));
    const bundle = display.examples(examples)!;
    expect(bundle["text/html"]).toContain("<th");
    expect(bundle["text/html"]).toContain("input.sentence");
    expect(bundle["text/html"]).toContain("&lt;i&gt;19&lt;/i&gt;");
    expect(bundle["text/html"]).not.toContain("train-20");
    expect(bundle["text/plain"]).toContain("5 more not shown (limit 20)");
  });
});

describe("display.runs", () => {
  it("lists the lab store's runs, failures marked, and registry versions when asked", async () => {
    const run = (id: string, status: RunSummary["status"], error: string | null): RunSummary => ({
      id, kind: "evaluation", name: `eval ${id}`, status, startedAt: "2026-11-22T10:00:00.000Z",
      endedAt: status === "running" ? null : "2026-11-22T10:00:12.500Z", score: 0.75, config: {}, summary: {}, error,
    });
    const lab = { runs: () => [run("r2", "failed", "LMError: <boom>"), run("r1", "completed", null)] };
    const registry = { versions: (name: string) => [{ name, version: 2, createdAt: "2026-11-22T11:00:00.000Z", score: 0.9, metadata: { note: "<tuned>" } }] };
    const bundle = (await display.runs(lab, { registry, names: ["sentiment"] }))!;
    expect(bundle["text/html"]).toContain("2 runs in the lab store");
    expect(bundle["text/html"]).toContain("LMError: &lt;boom&gt;");
    expect(bundle["text/html"]).toContain("12.5 s");
    expect(bundle["text/html"].match(/background:#fdecea/g)?.length).toBe(8); // every cell of the failed run
    expect(bundle["text/html"]).toContain("1 registry versions");
    expect(bundle["text/html"]).toContain("&lt;tuned&gt;");
  });
});

describe("display.runs on a real lab store", () => {
  it("lists what Evaluation-style writers recorded and the registry's versions", async () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-nb-"));
    try {
      const path = join(dir, "lab.sqlite");
      const lab = LabStore.open(path);
      const id = lab.startRun({ kind: "evaluation", name: "poem <baseline>" });
      lab.finishRun(id, { status: "completed", score: 0.625 });
      const registry = new Registry({ path });
      const program = new Predict(Classify);
      program.instruction = "Be brief.";
      await registry.store({ moduleInstance: program, name: "sentiment", metadata: { note: "first" } });
      const html = (await display.runs(lab, { registry, names: ["sentiment"] }))!["text/html"];
      expect(html).toContain("1 run in the lab store");
      expect(html).toContain("poem &lt;baseline&gt;");
      expect(html).toContain("0.625");
      expect(html).toContain("1 registry versions");
      expect(html).toContain("{&quot;note&quot;:&quot;first&quot;}");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("every helper given nothing (an unset variable, lab.run of an unknown id)", () => {
  it("raises ValidationError naming the helper, what it expects and what came, not a TypeError", async () => {
    const { ValidationError } = await import("../../lib/index.js");
    const calls: [string, (value: never) => unknown][] = [
      ["display.prediction", (v) => display.prediction(v)],
      ["display.trace", (v) => display.trace(v)],
      ["display.examples", (v) => display.examples(v)],
      ["display.candidates", (v) => display.candidates(v)],
      ["display.metrics", (v) => display.metrics(v)],
      ["display.confusion", (v) => display.confusion(v)],
    ];
    for (const [name, call] of calls) {
      for (const [value, shown] of [[undefined, "undefined"], [null, "null"]] as const) {
        let error: unknown;
        try {
          await call(value as never);
        } catch (e) {
          error = e;
        }
        expect([name, error]).toEqual([name, expect.any(ValidationError)]);
        expect((error as Error).message).toMatch(new RegExp(`^${name.replace(".", "\\.")} expects .+; received ${shown}`));
      }
    }
    // A run object without trials (e.g. a run summary from lab.runs()) is named too.
    await expect(display.candidates({} as never)).rejects.toThrow(/^display\.candidates expects .+; received an object without trials/);
  });
});
