/** API.md "Examples, optimization, evaluation, registry" — the Evaluation part. Imports by package name (dist/). */
import { describe, expect, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, Instrumentation, LabStore, Predict, Signature, ValidationError, configure } from "typelm";
import type { TypelmEvent } from "typelm";
import { ScriptedLM } from "typelm/testing";
import { useTempLab } from "./temp-lab.js";

const root = resolve(import.meta.dirname, "../..");

class Sentiment extends Signature {
  static override description = "Label the sentiment.";
  static override input = { text: z.string() };
  static override output = { label: z.enum(["pos", "neg"]) };
}
class Answer extends Signature {
  static override description = "Answer in words.";
  static override input = { question: z.string() };
  static override output = { answer: z.string() };
}

const ex = (text: string, label: "pos" | "neg", id: string) => new FewShotExample({ input: { text }, output: { label }, id });
// Gold pos,pos,neg,neg; the model says pos,neg,neg,neg (it reads the word after "say").
const data = [ex("say pos a", "pos", "e0"), ex("say neg b", "pos", "e1"), ex("say neg c", "neg", "e2"), ex("say neg d", "neg", "e3")];
const parrot = () => new ScriptedLM((req) => ({ label: String(req.inputs!.text).split(" ")[1] }));

const temp = useTempLab("eval");

describe("Evaluation", () => {
  test("accuracy and macro-F1 over enum labels (hand-computed), rows, totals, confusion, perLabel", async () => {
    const m = new Predict(Sentiment);
    m.configure((c) => { c.lm = parrot(); });
    const report = await new Evaluation({ progress: false }).evaluate({ moduleInstance: m, testExamples: data, metrics: ["accuracy", "f1_score"] });
    expect(report.accuracy).toBeCloseTo(0.75, 10);
    // pos: P 1, R 0.5, F1 2/3; neg: P 2/3, R 1, F1 0.8 → macro (2/3 + 0.8) / 2
    expect(report.f1_score).toBeCloseTo((2 / 3 + 0.8) / 2, 10);
    expect(report.results).toHaveLength(4);
    const row = report.results[1]!;
    for (const key of ["index", "exampleId", "inputs", "expected", "prediction", "scores", "error", "durationMs", "inputTokens", "outputTokens", "cost"]) {
      expect(row).toHaveProperty(key);
    }
    expect(row.index).toBe(1);
    expect(row.exampleId).toBe("e1");
    expect(row.inputs).toEqual({ text: "say neg b" });
    expect(row.expected).toEqual({ label: "pos" });
    expect(row.prediction).toEqual({ label: "neg" });
    expect(row.scores.accuracy).toBe(0);
    expect(row.error).toBeNull();
    expect(report.failures).toEqual([]);
    expect(report.inputTokens).toBeGreaterThan(0);
    expect(report.outputTokens).toBeGreaterThan(0);
    expect(report.cost).toBe(0);
    expect(report.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof report.runId).toBe("string");
    const cm = report.confusion();
    expect(cm.labels).toEqual(["pos", "neg"]);
    expect(cm.matrix).toEqual([[1, 1], [0, 2]]);
    expect(report.confusion("label").matrix).toEqual(cm.matrix);
    const per = report.perLabel("label");
    expect(per.pos!.precision).toBeCloseTo(1, 10);
    expect(per.pos!.recall).toBeCloseTo(0.5, 10);
    expect(per.neg!.f1).toBeCloseTo(0.8, 10);
    expect(report.perLabel().neg!.support).toBe(2);
  });

  test("free text: f1_score and token_f1 are SQuAD token F1; exact_match after normalisation", async () => {
    const m = new Predict(Answer);
    m.configure((c) => { c.lm = new ScriptedLM([{ answer: "a cat sat down" }, { answer: "The Dog!" }]); });
    const examples = [
      new FewShotExample({ input: { question: "q1" }, output: { answer: "The cat sat" }, id: "q1" }),
      new FewShotExample({ input: { question: "q2" }, output: { answer: "dog" }, id: "q2" }),
    ];
    const report = await new Evaluation({ concurrency: 1, progress: false, record: false }).evaluate({
      moduleInstance: m, testExamples: examples, metrics: ["f1_score", "token_f1", "exact_match", "accuracy"],
    });
    // q1: gold {cat, sat}, predicted {cat, sat, down}: P 2/3, R 1, F1 0.8. q2: exact after normalisation: 1.
    expect(report.token_f1).toBeCloseTo((0.8 + 1) / 2, 10);
    expect(report.f1_score).toBeCloseTo((0.8 + 1) / 2, 10);
    expect(report.exact_match).toBeCloseTo(0.5, 10);
    expect(report.accuracy).toBe(0);
  });

  test("a metric function is reported under its name; it may return a boolean or { score, feedback }", async () => {
    const m = new Predict(Sentiment);
    m.configure((c) => { c.lm = parrot(); });
    function saysPos(_e: FewShotExample, p: any) { return p.label === "pos"; }
    const graded = (e: FewShotExample, p: any) => ({ score: p.label === e.output.label ? 1 : 0, feedback: "fb" });
    const report = await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: data, metrics: [saysPos, graded] });
    expect(report.metrics.saysPos).toBeCloseTo(0.25, 10);
    expect(report.metrics.graded).toBeCloseTo(0.75, 10);
    expect((report as any).saysPos).toBeCloseTo(0.25, 10);
    expect(report.results[0]!.scores).toEqual({ saysPos: 1, graded: 1 });
  });

  test("failures (bad reply, throwing metric) are rows with their error, scored 0, kept in the denominator", async () => {
    const m = new Predict(Sentiment);
    m.configure((c) => { c.lm = new ScriptedLM((req) => (req.inputs!.text === "say pos a" ? "garbage, not json" : { label: String(req.inputs!.text).split(" ")[1] })); });
    const picky = (e: FewShotExample) => { if (e.id === "e3") throw new Error("metric exploded"); return 1; };
    const report = await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: data, metrics: ["accuracy", picky] });
    expect(report.results).toHaveLength(4);
    expect(report.failures.map((r) => r.exampleId).sort()).toEqual(["e0", "e3"]);
    expect(report.results[0]!.error).toMatch(/\w/);
    expect(report.results[0]!.scores.accuracy).toBe(0);
    expect(report.results[3]!.error).toMatch(/metric exploded/);
    expect(report.accuracy).toBeCloseTo(1 / 4, 10); // only e2 right: e0 failed, e1 wrong, e3 failed
  });

  test("concurrency defaults to 8 and bounds the examples in flight", async () => {
    let inFlight = 0; let peak = 0;
    const lm = new ScriptedLM(async () => {
      inFlight++; peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      return { label: "pos" };
    });
    const m = new Predict(Sentiment);
    m.configure((c) => { c.lm = lm; });
    const many = Array.from({ length: 24 }, (_, i) => ex(`t ${i}`, "pos", `m${i}`));
    await new Evaluation({ progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: many });
    expect(peak).toBe(8);
    peak = 0;
    await new Evaluation({ concurrency: 3, progress: false, record: false }).evaluate({ moduleInstance: m, testExamples: many });
    expect(peak).toBe(3);
  });

  test("events evaluation.start / example / end; the run and its rows are in the lab store", async () => {
    const m = new Predict(Sentiment);
    m.configure((c) => { c.lm = parrot(); });
    const names: string[] = [];
    const off = Instrumentation.subscribe(/^evaluation\./, (e: TypelmEvent) => { names.push(e.name); });
    let report;
    try {
      report = await new Evaluation({ progress: false, name: "api-eval" }).evaluate({ moduleInstance: m, testExamples: data });
    } finally { off(); }
    expect(names.filter((n) => n !== "evaluation.record.error")).toEqual(["evaluation.start", ...data.map(() => "evaluation.example"), "evaluation.end"]);
    const lab = LabStore.open();
    const run = lab.run(report.runId!);
    expect(run?.kind).toBe("evaluation");
    expect(run?.name).toBe("api-eval");
    expect(run?.status).toBe("completed");
    expect(run && "rows" in run ? run.rows.length : -1).toBe(4);
    expect(lab.runs({ kind: "evaluation" }).map((r) => r.id)).toContain(report.runId);
  });

  test("configure((c) => { c.lab = false }) records nothing and creates no file", async () => {
    const path = join(temp.dir, "never.sqlite");
    configure((c) => { c.lab = false; });
    const m = new Predict(Sentiment);
    m.configure((c) => { c.lm = parrot(); });
    const report = await new Evaluation({ progress: false }).evaluate({ moduleInstance: m, testExamples: data });
    expect(report.runId).toBeNull();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(join(temp.dir, "lab.sqlite"))).toBe(false);
    expect(existsSync(join(process.cwd(), ".typelm", "never.sqlite"))).toBe(false);
  });

  test("unknown metric names and empty example lists are ValidationErrors before any model call", async () => {
    const lm = parrot();
    const m = new Predict(Sentiment);
    m.configure((c) => { c.lm = lm; });
    await expect(new Evaluation({ progress: false }).evaluate({ moduleInstance: m, testExamples: data, metrics: ["nope" as any] })).rejects.toThrow(ValidationError);
    await expect(new Evaluation({ progress: false }).evaluate({ moduleInstance: m, testExamples: [] })).rejects.toThrow(ValidationError);
    expect(lm.requests).toHaveLength(0);
  });

  // `progress` defaults to on in a terminal: a child process run under a pseudo-terminal (util-linux
  // `script`) draws the bar on it; with no terminal, or with progress: false, nothing is drawn.
  const hasScript = spawnSync("script", ["--version"]).status === 0;
  (hasScript ? test : test.skip)("progress: a bar in a terminal by default, nothing without one or with progress: false", () => {
    const program = (progress: string) => `
      import { z } from "zod";
      import { Evaluation, FewShotExample, Predict, Signature, configure } from "typelm";
      import { ScriptedLM } from "typelm/testing";
      configure((c) => { c.lab = false; });
      const S = Signature.define({ name: "S", description: "s", input: { q: z.string() }, output: { a: z.string() } });
      const m = new Predict(S); m.configure((c) => { c.lm = new ScriptedLM(() => ({ a: "x" })); });
      await new Evaluation({ concurrency: 1 ${progress} }).evaluate({ moduleInstance: m,
        testExamples: [1, 2, 3, 4].map((i) => new FewShotExample({ input: { q: String(i) }, output: { a: "x" }, id: String(i) })) });`;
    const inTerminal = (code: string) => spawnSync("script", ["-qec", `${JSON.stringify(process.execPath)} --input-type=module -e ${shellQuote(code)}`, "/dev/null"],
      { cwd: root, encoding: "utf8" }).stdout;
    expect(inTerminal(program(""))).toContain("4/4");
    expect(inTerminal(program(", progress: false"))).not.toContain("4/4");
    const piped = spawnSync(process.execPath, ["--input-type=module", "-e", program("")], { cwd: root, encoding: "utf8" });
    expect(piped.stdout + piped.stderr).toBe("");
  }, 30_000);
});

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}
