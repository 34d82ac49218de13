import { afterAll, afterEach, describe, expect, it, jest } from "@jest/globals";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  ConfigurationError, Evaluation, FewShotExample, Instrumentation, LabStore, Predict, Signature, configure, resetConfiguration,
} from "../../lib/index.js";
import { lastScore } from "../../lib/store/module-score.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { withStderrTTY } from "../helpers/tty.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-eval-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
  jest.restoreAllMocks();
});

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

function setup(count: number) {
  const lm = new ScriptedLM((req) => (String(req.inputs?.["sentence"]).endsWith("3") ? "garbled" : { sentiment: "positive" }));
  const moduleInstance = new Predict(Classify).configure((c) => { c.lm = lm; });
  const testExamples = Array.from({ length: count }, (_, i) => new FewShotExample({
    input: { sentence: `s${i}` }, output: { sentiment: i % 2 === 0 ? "positive" : "negative" }, id: `ex-${i}`,
  }));
  return { lm, moduleInstance, testExamples };
}

describe("recording to the lab store", () => {
  it("writes the run and each row as the example finishes, and finishes the run with its score", async () => {
    const lab = LabStore.open(join(dir, "lab.sqlite"));
    const { moduleInstance, testExamples } = setup(6);
    const seen: number[] = [];
    let runId: string | null = null;
    Instrumentation.subscribe("evaluation.start", (e) => { runId = e.payload["runId"] as string; });
    const report = await new Evaluation({ lab, name: "sentiment-test", progress: false, concurrency: 1 }).evaluate({
      moduleInstance, testExamples,
      // While the run goes on, the rows finished so far are already readable.
      onExample: () => seen.push(lab.rows(runId!).length),
    });
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(report.runId).toBe(runId);
    const run = lab.run(report.runId!)!;
    expect(run).toMatchObject({ kind: "evaluation", name: "sentiment-test", status: "completed", score: report.accuracy });
    expect(run.kind === "evaluation" && run.rows).toEqual(report.results);
    expect(report.results[3]!.error).toMatch(/^OutputError/);
    expect(run.config).toMatchObject({ module: "Predict", metrics: ["accuracy"], examples: 6 });
    // 3 of 6 right: ex-0, ex-2, ex-4 (odd ones expect "negative"; ex-3 failed).
    expect(report.accuracy).toBe(0.5);
    expect(lastScore(moduleInstance)).toBe(0.5);
  });

  it("record: false and c.lab = false never open the store file", async () => {
    const path = join(dir, "never.sqlite");
    configure((c) => { c.lab = { path }; });
    const report = await new Evaluation({ record: false, progress: false }).evaluate(setup(2));
    expect(report.runId).toBeNull();
    configure((c) => { c.lab = false; });
    const off = await new Evaluation({ progress: false }).evaluate(setup(2));
    expect(off.runId).toBeNull();
    expect(existsSync(path)).toBe(false);
  });

  it("a store write failing mid-run stops the recording but loses no row of the evaluation", async () => {
    const lab = LabStore.open(join(dir, "flaky.sqlite"));
    let writes = 0;
    const flaky = {
      startRun: (run: Parameters<LabStore["startRun"]>[0]) => lab.startRun(run),
      finishRun: (...args: Parameters<LabStore["finishRun"]>) => lab.finishRun(...args),
      recordExample: (...args: Parameters<LabStore["recordExample"]>) => {
        if (++writes > 2) throw new ConfigurationError("disk full");
        lab.recordExample(...args);
      },
    } as unknown as LabStore;
    const errors: unknown[] = [];
    Instrumentation.subscribe("evaluation.record.error", (e) => errors.push(e.payload["error"]));
    const report = await new Evaluation({ lab: flaky, progress: false, concurrency: 1 }).evaluate(setup(5));
    expect(report.results).toHaveLength(5);
    expect(errors).toEqual(["ConfigurationError: disk full"]);
    expect(writes).toBe(3); // no further attempt after the first failure
    expect(lab.rows(report.runId!)).toHaveLength(2);
    expect(lab.run(report.runId!)).toMatchObject({ status: "failed", error: "recording stopped: ConfigurationError: disk full" });
  });

  it("a closed store is a clear error before any model call", async () => {
    const lab = LabStore.open(join(dir, "closed.sqlite"));
    lab.close();
    const { lm, ...args } = setup(2);
    await expect(new Evaluation({ lab, progress: false }).evaluate(args)).rejects.toThrow(ConfigurationError);
    expect(lm.requests).toHaveLength(0);
  });
});

describe("progress", () => {
  it("draws nothing when standard error is not a terminal", async () => {
    const write = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
    await withStderrTTY(false, () => new Evaluation({ record: false, progress: true }).evaluate(setup(3)));
    expect(write).not.toHaveBeenCalled();
  });

  it("draws a bar on a terminal, and none with progress: false", async () => {
    const write = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
    await withStderrTTY(true, async () => {
      await new Evaluation({ record: false, progress: false }).evaluate(setup(3));
      expect(write).not.toHaveBeenCalled();
      await new Evaluation({ record: false, name: "bar-test" }).evaluate(setup(3));
    });
    const text = write.mock.calls.map((c) => String(c[0])).join("");
    expect(text).toContain("bar-test");
    expect(text).toContain("3/3");
  });
});
