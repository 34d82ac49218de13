import { afterEach, describe, expect, it, jest } from "@jest/globals";
import { GEPA, Instrumentation, MIPROv2, Predict, SimpleOptimizer, ValidationError } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { withStderrTTY } from "../helpers/tty.js";
import { feedbackMetric, makeToneExamples, reflector, TopicAndTone, twoRuleModel } from "./gepa-task.js";
import { candidateInstructions, makeExamples, proposals, taskModel, Topic, useTempLab } from "./task.js";

const train = makeExamples(12, 1, "train");
useTempLab();
afterEach(() => { jest.restoreAllMocks(); });

/** Everything written to standard error while `fn` runs with standard error a terminal (`tty`) or not. */
async function stderrDuring(tty: boolean, fn: () => Promise<unknown>): Promise<string> {
  const write = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
  await withStderrTTY(tty, fn);
  const text = write.mock.calls.map((c) => String(c[0])).join("");
  write.mockRestore();
  return text;
}

const simple = (progress?: boolean) => {
  const opt = new SimpleOptimizer({ seed: 3, numTrials: 4, kDemos: 2, instructions: candidateInstructions(1), ...(progress === undefined ? {} : { progress }) });
  const run = () => opt.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = taskModel(); }), trainingExamples: train });
  return { opt, run };
};

describe("optimizer progress bar", () => {
  it("SimpleOptimizer draws one bar on a terminal: trials done / total, best score, failures", async () => {
    const { opt, run } = simple();
    const text = await stderrDuring(true, run);
    const r = opt.lastRun!;
    // The bootstrap, the baseline and 4 trials.
    expect(r.trials).toHaveLength(6);
    expect(text).toContain("SimpleOptimizer");
    expect(text).toContain("6/6 trials");
    expect(text).toContain(`best ${r.score!.toFixed(3)}, validation (chosen on it)`);
    expect(text).toContain("failed 0");
  });

  it("draws nothing with progress: false on a terminal, nor by default when standard error is not a terminal", async () => {
    expect(await stderrDuring(true, simple(false).run)).toBe("");
    expect(await stderrDuring(false, simple().run)).toBe("");
    expect(await stderrDuring(false, simple(true).run)).toBe("");
  });

  it("MIPROv2's bar counts every recorded trial and ends on the number done", async () => {
    const mipro = new MIPROv2({ kDemos: 2, numCandidates: 3, numTrials: 3, seed: 1, promptModel: new ScriptedLM(proposals(candidateInstructions(1, 3))) });
    const val = makeExamples(10, 2, "val");
    const text = await stderrDuring(true, () =>
      mipro.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = taskModel(); }), trainingExamples: train, validationExamples: val }));
    const r = mipro.lastRun!;
    // Bootstrap, proposal, baseline, 3 minibatch trials and one full evaluation after the last.
    expect(r.trials.map((t) => t.kind)).toEqual(["bootstrap", "propose", "baseline", "minibatch", "minibatch", "minibatch", "full"]);
    expect(text).toContain("MIPROv2");
    expect(text).toContain("7/7 trials");
    // The best is a validation score (baseline or full), never a minibatch one.
    expect(text).toContain(`best ${r.score!.toFixed(3)}, validation (chosen on it)`);
  });

  it("GEPA's bar counts metric calls against the budget", async () => {
    const gepa = new GEPA({ metric: feedbackMetric, maxMetricCalls: 60, reflectionLM: new ScriptedLM(reflector()), seed: 7 });
    const text = await stderrDuring(true, () =>
      gepa.compile({ moduleInstance: new TopicAndTone().configure((c) => { c.lm = twoRuleModel(); }), trainingExamples: makeToneExamples(12, 1, "t"), validationExamples: makeToneExamples(8, 2, "v") }));
    const r = gepa.lastRun!;
    expect(text).toContain("GEPA");
    expect(text).toContain(`${r.summary.metricCalls}/60 metric calls`);
    expect(r.summary.metricCalls).toBeGreaterThan(8);
    expect(text).toContain(`best ${r.score!.toFixed(3)}, validation (chosen on it)`);
  });

  it("tells the notebook display through optimizer.start whether progress is off", async () => {
    const seen: unknown[] = [];
    Instrumentation.subscribe("optimizer.start", (e) => seen.push(e.payload["progress"]));
    await stderrDuring(false, simple(false).run);
    await stderrDuring(false, simple().run);
    expect(seen).toEqual([false, true]);
  });

  it("refuses a progress option that is not a boolean", () => {
    expect(() => new SimpleOptimizer({ progress: "yes" as unknown as boolean })).toThrow(ValidationError);
    expect(() => new GEPA({ progress: 1 as unknown as boolean })).toThrow(/progress must be true or false/);
  });
});
