// exampleTimeout: an example whose module call or metric never settles is a failed row, and the run
// completes (before it, the run hung and stayed "running" in the lab store).
import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { AsyncLocalStorage, createHook } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, Instrumentation, LabStore, LMError, Module, Predict, Signature, ValidationError, resetConfiguration } from "../../lib/index.js";
import type { EvaluationRun } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-timeout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
});

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

const never = new Promise<never>(() => {});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A predictor whose model answers "positive" at once, except for the sentences `slow` maps to a reply of their own. */
/**
 * Runs `work` and returns how many of the timers it created (and nothing else in the process: jest
 * reuses a worker across test files, whose leftovers may create timers of their own meanwhile) are
 * still pending once it has finished.
 */
async function pendingTimersAfter<T>(work: () => Promise<T>): Promise<{ result: T; pending: number }> {
  const mine = new AsyncLocalStorage<true>();
  const pending = new Set<number>();
  const hook = createHook({
    init(id, type) { if (type === "Timeout" && mine.getStore() === true) pending.add(id); },
    destroy(id) { pending.delete(id); },
  }).enable();
  try {
    const result = await mine.run(true, work);
    await new Promise((r) => setImmediate(r)); // destroy hooks of timers cleared at the very end
    return { result, pending: pending.size };
  } finally {
    hook.disable();
  }
}

function program(slow: Record<string, () => Promise<Record<string, unknown>>> = {}) {
  const lm = new ScriptedLM((req) => {
    const sentence = String(req.inputs?.["sentence"]);
    return slow[sentence]?.() ?? { sentiment: "positive" };
  });
  return new Predict(Classify).configure((c) => { c.lm = lm; });
}

const examples = (n: number) => Array.from({ length: n }, (_, i) => new FewShotExample({
  input: { sentence: `s${i}` }, output: { sentiment: "positive" }, id: `ex-${i}`,
}));

/** Runs `fn`, collecting unhandled rejections raised while it runs and for `settleMs` after. */
async function watchingRejections<T>(settleMs: number, fn: () => Promise<T>): Promise<{ result: T; unhandled: unknown[] }> {
  const unhandled: unknown[] = [];
  const listener = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", listener);
  try {
    const result = await fn();
    await sleep(settleMs);
    return { result, unhandled };
  } finally {
    process.off("unhandledRejection", listener);
  }
}

describe("Evaluation exampleTimeout", () => {
  it("a module that never resolves is a failed row naming the limit, and the recorded run completes", async () => {
    const lab = LabStore.open(join(dir, "module.sqlite"));
    const moduleInstance = program({ s1: () => never, s3: () => never });
    const started = performance.now();
    // concurrency 1: the hanging examples must also give their slot back, or the run would stall at s1.
    const report = await new Evaluation({ lab, progress: false, concurrency: 1, exampleTimeout: 0.05 }).evaluate({ moduleInstance, testExamples: examples(5) });
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(report.results.map((r) => r.error === null)).toEqual([true, false, true, false, true]);
    for (const row of [report.results[1]!, report.results[3]!]) {
      expect(row.error).toMatch(/timed out after 0\.05 s/);
      expect(row.error).toMatch(/exampleTimeout/);
      expect(row.scores).toEqual({ accuracy: 0 });
      expect(row.prediction).toBeNull();
      expect(row.durationMs).toBeGreaterThanOrEqual(40);
    }
    expect(report.failures).toHaveLength(2);
    expect(report.accuracy).toBeCloseTo(3 / 5);
    const run = lab.run(report.runId!) as EvaluationRun;
    expect(run.status).toBe("completed");
    expect(run.rows.map((r) => r.error)).toEqual(report.results.map((r) => r.error));
  });

  it("a metric that never resolves is a failed row saying the metric was scoring, and the run completes", async () => {
    const lab = LabStore.open(join(dir, "metric.sqlite"));
    const stuck = (example: FewShotExample) => (example.id === "ex-2" ? never : true);
    const report = await new Evaluation({ lab, progress: false, exampleTimeout: 0.05 }).evaluate({
      moduleInstance: program(), testExamples: examples(4), metrics: [stuck, "accuracy"],
    });
    const row = report.results[2]!;
    expect(row.error).toMatch(/timed out after 0\.05 s/);
    expect(row.error).toMatch(/metric "stuck"/);
    expect(row.scores).toEqual({ stuck: 0, accuracy: 0 });
    expect(report.results.filter((r) => r.error === null)).toHaveLength(3);
    expect(report.metrics).toEqual({ stuck: 0.75, accuracy: 0.75 });
    expect((lab.run(report.runId!) as EvaluationRun).status).toBe("completed");
  });

  it("work that settles after its example timed out changes nothing and raises no unhandled rejection", async () => {
    const lab = LabStore.open(join(dir, "late.sqlite"));
    const seen: number[] = [];
    const moduleInstance = program({
      s0: async () => { await sleep(150); return { sentiment: "positive" }; },
      s1: async () => { await sleep(150); throw new Error("late failure"); },
    });
    const lateMetric = async (example: FewShotExample) => {
      if (example.id !== "ex-2") return 1;
      await sleep(150);
      throw new Error("late metric failure");
    };
    const { result: report, unhandled } = await watchingRejections(300, () =>
      new Evaluation({ lab, progress: false, exampleTimeout: 0.05 }).evaluate({
        moduleInstance, testExamples: examples(4), metrics: [lateMetric], onExample: (o) => seen.push(o.row.index),
      }));
    expect(unhandled).toEqual([]);
    expect(seen.sort()).toEqual([0, 1, 2, 3]);
    expect(report.results.map((r) => /timed out/.test(r.error ?? ""))).toEqual([true, true, true, false]);
    // The late answers wrote nothing: the rows in the report and the store are the timed-out ones.
    expect(report.results[0]!.prediction).toBeNull();
    expect(report.results[2]!.scores).toEqual({ lateMetric: 0 });
    const run = lab.run(report.runId!) as EvaluationRun;
    expect(run.rows).toHaveLength(4);
    expect(run.rows.map((r) => r.error)).toEqual(report.results.map((r) => r.error));
  });

  it("leaves no timer behind once the run has finished (a finished run does not keep Node alive)", async () => {
    // Default exampleTimeout (600 s): an uncleared per-example timer would stay active for ten minutes.
    const { pending } = await pendingTimersAfter(() =>
      new Evaluation({ record: false, progress: false }).evaluate({ moduleInstance: program(), testExamples: examples(20) }));
    expect(pending).toBe(0);
  });

  it("an example timing out while it waits to re-run after rate limiting stops that wait too (no timer outlives the run)", async () => {
    class RateLimited extends Module {
      async forward(): Promise<unknown> {
        throw new LMError("429 Too Many Requests", { status: 429, retryable: true, provider: "test" });
      }
    }
    // The first re-run waits 250 ms; the example's limit passes during that wait.
    const { result: report, pending } = await pendingTimersAfter(() =>
      new Evaluation({ record: false, progress: false, exampleTimeout: 0.05 }).evaluate({ moduleInstance: new RateLimited(), testExamples: examples(2) }));
    expect(report.results.map((r) => r.error)).toEqual([expect.stringMatching(/timed out after 0\.05 s \(exampleTimeout\) while waiting to run it again/), expect.any(String)]);
    expect(pending).toBe(0);
  });

  it("refuses an exampleTimeout that is not a positive number of seconds", () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "5", null]) {
      expect(() => new Evaluation({ exampleTimeout: bad as number })).toThrow(ValidationError);
      expect(() => new Evaluation({ exampleTimeout: bad as number })).toThrow(/exampleTimeout must be a positive number of seconds/);
    }
    expect(new Evaluation().exampleTimeout).toBe(600);
    expect(new Evaluation({ exampleTimeout: 0.5 }).exampleTimeout).toBe(0.5);
  });
});
