// Evaluation.evaluate({ resume: runId }): rows already recorded are kept, only the missing examples run.
import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, LabStore, Predict, Signature, ValidationError, resetConfiguration } from "../../lib/index.js";
import type { EvaluationRun } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-eval-resume-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => resetConfiguration());

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

/** Answers "positive" for even-numbered sentences, "negative" for odd ones; counts what it was asked. */
function program() {
  const asked: string[] = [];
  const lm = new ScriptedLM((req) => {
    const sentence = String(req.inputs?.["sentence"]);
    asked.push(sentence);
    return { sentiment: Number(sentence.slice(1)) % 2 === 0 ? "positive" : "negative" };
  });
  return { asked, predict: new Predict(Classify).configure((c) => { c.lm = lm; }) };
}

const examples = Array.from({ length: 10 }, (_, i) => new FewShotExample({
  input: { sentence: `s${i}` }, output: { sentiment: i % 3 === 0 ? "negative" : "positive" }, id: `ex-${i}`,
}));

/** An evaluation interrupted after `n` examples (its onExample throws), as a crash would leave it: those rows recorded. */
async function interrupted(lab: LabStore, n: number): Promise<string> {
  const { predict } = program();
  let seen = 0;
  await expect(new Evaluation({ lab, concurrency: 1, progress: false }).evaluate({
    moduleInstance: predict, testExamples: examples, onExample: () => { if (++seen === n) throw new Error("crash"); },
  })).rejects.toThrow("crash");
  const runId = lab.runs({ kind: "evaluation" })[0]!.id;
  expect((lab.run(runId) as EvaluationRun).rows.length).toBeGreaterThanOrEqual(n);
  return runId;
}

describe("Evaluation resume", () => {
  it("keeps the recorded rows, runs only the missing examples, and finishes the same run with the scores of an uninterrupted one", async () => {
    const lab = LabStore.open(join(dir, "a.sqlite"));
    const runId = await interrupted(lab, 4);
    const recorded = (lab.run(runId) as EvaluationRun).rows.map((r) => r.exampleId);
    const { asked, predict } = program();
    const report = await new Evaluation({ lab, concurrency: 1, progress: false }).evaluate({ moduleInstance: predict, testExamples: examples, resume: runId });
    // Only the examples without a row were asked again.
    expect(asked.sort()).toEqual(examples.filter((e) => !recorded.includes(e.id!)).map((e) => e.input.sentence).sort());
    expect(report.runId).toBe(runId);
    expect(report.results.map((r) => r.exampleId)).toEqual(examples.map((e) => e.id));
    const run = lab.run(runId) as EvaluationRun;
    expect(run.status).toBe("completed");
    expect(run.rows.map((r) => r.exampleId).sort()).toEqual(examples.map((e) => e.id!).sort());
    // The same numbers as a run that was never interrupted.
    const fresh = await new Evaluation({ lab: null, progress: false }).evaluate({ moduleInstance: program().predict, testExamples: examples });
    expect(report.metrics).toEqual(fresh.metrics);
    expect(run.score).toBe(fresh.metrics.accuracy);
  });

  it("a run that already has every row makes no model call", async () => {
    const lab = LabStore.open(join(dir, "b.sqlite"));
    const first = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: program().predict, testExamples: examples });
    const { asked, predict } = program();
    const again = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: predict, testExamples: examples, resume: first.runId! });
    expect(asked).toEqual([]);
    expect(again.metrics).toEqual(first.metrics);
  });

  it("refuses a run of another evaluation, other examples, an unknown id, or no store", async () => {
    const lab = LabStore.open(join(dir, "c.sqlite"));
    const runId = await interrupted(lab, 3);
    const evaluation = new Evaluation({ lab, progress: false });
    const { predict } = program();
    await expect(evaluation.evaluate({ moduleInstance: predict, testExamples: examples.slice(0, 9), resume: runId }))
      .rejects.toThrow(/was started with examples 10, this evaluation has 9/);
    await expect(evaluation.evaluate({ moduleInstance: predict, testExamples: examples, metrics: ["exact_match"], resume: runId }))
      .rejects.toThrow(/was started with metrics \["accuracy"\]/);
    await expect(evaluation.evaluate({ moduleInstance: predict, testExamples: [...examples].reverse(), resume: runId }))
      .rejects.toThrow(/recorded example "ex-0" at position 0, where this evaluation has "ex-9"/);
    await expect(evaluation.evaluate({ moduleInstance: predict, testExamples: examples, resume: "no-such-run" })).rejects.toThrow(ValidationError);
    await expect(new Evaluation({ record: false }).evaluate({ moduleInstance: predict, testExamples: examples, resume: runId }))
      .rejects.toThrow(/resume needs the lab store/);
  });
});
