// What rescore does with a source run that is not a clean, finished one: running (refused), failed
// (rescored from its rows with a warning), rows that failed (kept failed), an example id twice (refused).
import { afterAll, afterEach, describe, expect, it, jest } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, LabStore, Predict, Signature, rescore, resetConfiguration, ValidationError } from "../../lib/index.js";
import { showRun } from "../../lib/lab/cli/show.js";
import { ScriptedLM } from "../../lib/testing/index.js";

class Capital extends Signature {
  static override input = { country: z.string() };
  static override output = { answer: z.string() };
}

const dir = mkdtempSync(join(tmpdir(), "typelm-rescore-source-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  resetConfiguration();
  jest.restoreAllMocks();
});

const examples = (count: number, id = (n: number) => `c-${n}`) => Array.from({ length: count }, (_, n) => new FewShotExample({
  input: { country: `country ${n}` }, output: { answer: `Capital ${n}` }, id: id(n),
}));

/** A program answering right for even n, wrong for odd n. */
function program() {
  const lm = new ScriptedLM((req) => {
    const n = Number(/(\d+)/.exec(String(req.inputs?.["country"]))![1]);
    return { answer: n % 2 === 0 ? `Capital ${n}` : `Nowhere ${n}` };
  });
  return new Predict(Capital).configure((c) => { c.lm = lm; });
}

/** A metric that throws for example 1 (its row fails with the metric's error) and scores 1 otherwise. */
function fussy(example: FewShotExample): number {
  if (example.id === "c-1") throw new Error("cannot score this one");
  return 1;
}

describe("rescore's source run", () => {
  it("refuses a source that is still running, saying so", async () => {
    const lab = LabStore.open(join(dir, "running.sqlite"));
    const id = lab.startRun({ kind: "evaluation", name: "capitals", config: { examples: 2 } });
    lab.recordExample(id, {
      index: 0, exampleId: "c-0", inputs: { country: "country 0" }, expected: { answer: "Capital 0" }, prediction: { answer: "Capital 0" },
      scores: { accuracy: 1 }, error: null, durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
    });
    const refused = rescore(id, { metrics: ["accuracy"], lab, progress: false });
    await expect(refused).rejects.toThrow(ValidationError);
    await expect(rescore(id, { metrics: ["accuracy"], lab, progress: false })).rejects.toThrow(new RegExp(`^rescore: evaluation run ${id} is still running \\(started `));
    expect(lab.runs()).toHaveLength(1);
  });

  it("rescores a failed source from the rows it has, with a warning in the report, the stored run and on the terminal", async () => {
    const lab = LabStore.open(join(dir, "failed.sqlite"));
    // A run of 6 examples that failed after writing 2 rows (a process stopped by an error).
    const id = lab.startRun({ kind: "evaluation", name: "capitals", config: { module: "Predict", metrics: ["accuracy"], examples: 6 } });
    for (const n of [0, 1]) {
      lab.recordExample(id, {
        index: n, exampleId: `c-${n}`, inputs: { country: `country ${n}` }, expected: { answer: `Capital ${n}` },
        prediction: { answer: n === 0 ? "Capital 0" : "Nowhere 1" }, scores: { accuracy: n === 0 ? 1 : 0 }, error: null,
        durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
      });
    }
    lab.finishRun(id, { status: "failed", score: null, summary: { done: 2, failures: 0 }, error: "Error: stopped by the test" });
    const source = lab.run(id)!;
    const rows = 2;
    const warned: { message: string; code?: string }[] = [];
    jest.spyOn(process, "emitWarning").mockImplementation(((message: string, options?: { code?: string }) => {
      warned.push({ message, ...(options?.code === undefined ? {} : { code: options.code }) });
    }) as typeof process.emitWarning);
    const again = await rescore(source.id, { metrics: ["accuracy"], lab, progress: false });
    const sentence = `rescored from run ${source.id}, which failed (Error: stopped by the test): only its ${rows} stored rows of its 6 examples are scored, ` +
      "so this run stands for that run's rows, not for a finished evaluation.";
    expect(again.warnings).toEqual([sentence]);
    expect(warned).toEqual([{ message: sentence, code: "TYPELM_RESCORE_FAILED_SOURCE" }]);
    const stored = lab.run(again.runId!)!;
    expect(stored.config).toMatchObject({ rescoredFrom: source.id, sourceStatus: "failed" });
    expect(stored.summary["warnings"]).toEqual([sentence]);
    expect(showRun(stored)).toContain(`warning: ${sentence}`);
    expect(again.results.map((r) => r.scores["accuracy"])).toEqual([1, 0]);
  });

  it("keeps a row that failed in the source a failed row, with the same error, whatever the new metrics", async () => {
    const lab = LabStore.open(join(dir, "error-rows.sqlite"));
    const first = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: program(), testExamples: examples(4), metrics: [fussy] });
    expect(first.results[1]!.error).toBe('Error: metric "fussy" threw: cannot score this one');
    expect(first.results[1]!.prediction).toEqual({ answer: "Nowhere 1" });
    const again = await rescore(first.runId!, { metrics: ["accuracy"], lab, progress: false });
    expect(again.results.map((r) => r.error)).toEqual([null, 'Error: metric "fussy" threw: cannot score this one', null, null]);
    expect(again.failures).toHaveLength(1);
    expect(again.results.map((r) => r.scores["accuracy"])).toEqual([1, 0, 1, 0]);
  });

  it("refuses a source holding an example id twice, naming the id and the rows", async () => {
    const lab = LabStore.open(join(dir, "duplicates.sqlite"));
    const first = await new Evaluation({ lab, progress: false }).evaluate({
      moduleInstance: program(), testExamples: examples(4, (n) => (n === 3 ? "c-1" : `c-${n}`)), metrics: ["accuracy"],
    });
    const runsBefore = lab.runs().length;
    const refused = rescore(first.runId!, { metrics: ["accuracy"], lab, progress: false });
    await expect(refused).rejects.toThrow(ValidationError);
    await expect(rescore(first.runId!, { metrics: ["accuracy"], lab, progress: false })).rejects.toThrow(
      `rescore: run ${first.runId} holds example id "c-1" twice (rows 1 and 3); rows are paired by example id (typelm compare, the gate), ` +
        "so a rescore of it could not be compared. Give each example its own id and evaluate again.",
    );
    expect(lab.runs()).toHaveLength(runsBefore);
  });
});
