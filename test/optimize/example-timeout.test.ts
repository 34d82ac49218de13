// exampleTimeout in the optimizers: a program call or a metric that never settles is a failed example
// with a timeout error (scored 0, kept in exampleScores), the bootstrap and GEPA's feedback calls do not
// hang either, and the run completes (before, it hung and stayed "running" in the lab store).
import { describe, expect, it } from "@jest/globals";
import { FewShotExample, GEPA, LabStore, MIPROv2, Module, Predict, SimpleOptimizer, TypelmError, ValidationError } from "../../lib/index.js";
import type { Metric, OptimizationRun, Trial } from "../../lib/index.js";
import { defaultMetric, type MetricPredictorArg } from "../../lib/evaluate/metric.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { makeToneExamples, reflector, TopicAndTone, twoRuleModel } from "./gepa-task.js";
import { candidateInstructions, makeExamples, proposals, taskModel, Topic, useTempLab } from "./task.js";

const labFile = useTempLab();
const never = new Promise<never>(() => {});
const TIMEOUT = /timed out after 0\.05 s \(exampleTimeout\)/;

/** `inner`, except that it never answers for the texts in `hangOn`. */
class Hanging extends Module {
  constructor(readonly inner: Module, readonly hangOn: ReadonlySet<string>) {
    super();
  }

  async forward(inputs: { text: string }): Promise<unknown> {
    if (this.hangOn.has(inputs.text)) return never;
    return this.inner.call(inputs);
  }
}

/** A metric (the default comparison) that never settles for the texts in `hangOn`. */
function hangingMetric(hangOn: ReadonlySet<string>, base: Metric = defaultMetric): Metric {
  const stuck: Metric = (example, prediction, trace, predictor) => (hangOn.has(String(example.input.text)) ? never : base(example, prediction, trace, predictor));
  return stuck;
}

const text = (e: FewShotExample) => String(e.input.text);
const errorOf = (trial: Trial, id: string) => trial.exampleScores?.find((e) => e.exampleId === id)?.error ?? null;
const stored = (run: OptimizationRun) => LabStore.open(labFile()).run(run.id) as OptimizationRun;

describe("exampleTimeout in the optimizers", () => {
  it("SimpleOptimizer: an example whose program or metric never settles scores 0 with a timeout error, and the run completes", async () => {
    const train = makeExamples(8, 41, "train");
    const val = makeExamples(10, 42, "val");
    const program = new Hanging(new Predict(Topic).configure((c) => { c.lm = taskModel(); }), new Set([text(val[1]!)]));
    const opt = new SimpleOptimizer({
      metric: hangingMetric(new Set([text(val[4]!)])), numTrials: 3, kDemos: 2, instructions: candidateInstructions(1, 2), exampleTimeout: 0.05, progress: false,
    });
    await opt.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const run = opt.lastRun!;
    expect(run.status).toBe("completed");
    expect(stored(run).status).toBe("completed");
    // The bootstrap (on training examples, none hangs), the baseline and 3 trials.
    expect(run.trials.map((t) => t.kind)).toEqual(["bootstrap", "baseline", "trial", "trial", "trial"]);
    expect(run.trials[0]!.data.failures).toEqual([]);
    for (const trial of run.trials.slice(1)) {
      expect(trial.error).toBeNull();
      expect(errorOf(trial, "val-1")).toMatch(TIMEOUT);
      expect(errorOf(trial, "val-1")).toMatch(/Hanging\.call was running/);
      expect(errorOf(trial, "val-4")).toMatch(TIMEOUT);
      expect(errorOf(trial, "val-4")).toMatch(/metric "stuck" was scoring/);
      expect(trial.exampleScores!.filter((e) => e.error !== null)).toHaveLength(2);
      expect(trial.exampleScores!.find((e) => e.exampleId === "val-1")!.score).toBe(0);
    }
  });

  it("SimpleOptimizer: when every example times out each trial fails and the run ends failed, not running", async () => {
    const train = makeExamples(6, 43, "train");
    const val = makeExamples(4, 44, "val");
    const program = new Hanging(new Predict(Topic).configure((c) => { c.lm = taskModel(); }), new Set(val.map(text)));
    const opt = new SimpleOptimizer({ numTrials: 1, kDemos: 1, exampleTimeout: 0.05, progress: false });
    await expect(opt.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val })).rejects.toThrow(TypelmError);
    const run = opt.lastRun!;
    expect(run.status).toBe("failed");
    expect(stored(run).status).toBe("failed");
    // The bootstrap ran on the training examples, which do not hang; every scoring of the validation examples failed.
    expect(run.trials[0]!).toMatchObject({ kind: "bootstrap", error: null });
    expect(run.trials.length).toBeGreaterThan(1);
    for (const trial of run.trials.slice(1)) {
      expect(trial.error).toMatch(/4 of 4 examples failed/);
      expect(trial.error).toMatch(TIMEOUT);
    }
  });

  it("MIPROv2: a bootstrap run and trial examples that never settle are failures with a timeout error, and the run completes", async () => {
    const train = makeExamples(12, 45, "train");
    const val = makeExamples(10, 46, "val");
    const hangOn = new Set([text(train[0]!), text(val[2]!)]);
    const program = new Hanging(new Predict(Topic).configure((c) => { c.lm = taskModel(); }), hangOn);
    const mipro = new MIPROv2({
      metric: hangingMetric(new Set([text(val[6]!)])), kDemos: 2, numCandidates: 3, numTrials: 4, minibatchSize: 10, fullEvalEvery: 2, seed: 3,
      promptModel: new ScriptedLM(proposals(candidateInstructions(1))), exampleTimeout: 0.05, progress: false,
    });
    await mipro.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const run = mipro.lastRun!;
    expect(run.status).toBe("completed");
    expect(stored(run).status).toBe("completed");
    const boot = run.trials.find((t) => t.kind === "bootstrap")!;
    expect(boot.error).toBeNull();
    const failures = boot.data.failures as string[];
    expect(failures.some((f) => f.startsWith("train-0: ") && TIMEOUT.test(f))).toBe(true);
    const scored = run.trials.filter((t) => t.exampleScores !== null);
    expect(scored.length).toBeGreaterThan(2);
    for (const trial of scored) {
      expect(trial.error).toBeNull();
      expect(errorOf(trial, "val-2")).toMatch(TIMEOUT);
      expect(errorOf(trial, "val-6")).toMatch(TIMEOUT);
    }
  });

  it("GEPA: scorings and feedback calls that never settle are per-example failures with a timeout error, and the run completes", async () => {
    const train = makeToneExamples(6, 47, "train");
    const val = makeToneExamples(6, 48, "val");
    const lm = twoRuleModel();
    const program = new Hanging(new TopicAndTone().configure((c) => { c.lm = lm; }), new Set([text(val[2]!)]));
    const scoreHang = new Set([text(val[4]!)]);
    // Scoring calls (three arguments) hang on val-4; every feedback call (the fourth argument) hangs.
    const metric: Metric = (example, prediction, trace, predictor?: MetricPredictorArg) => {
      if (predictor !== undefined || scoreHang.has(text(example))) return never;
      const right = Number(prediction.label === example.output.label) + Number(prediction.tone === example.output.tone);
      return { score: right / 2, feedback: "Half a point per right field." };
    };
    const gepa = new GEPA({ metric, maxMetricCalls: 40, minibatchSize: 3, reflectionLM: new ScriptedLM(reflector()), exampleTimeout: 0.05, progress: false });
    await gepa.compile({ moduleInstance: program, trainingExamples: train, validationExamples: val });
    const run = gepa.lastRun!;
    expect(run.status).toBe("completed");
    expect(stored(run).status).toBe("completed");
    const seed = run.trials[0]!;
    expect(seed.error).toBeNull();
    expect(errorOf(seed, "val-2")).toMatch(TIMEOUT);
    expect(errorOf(seed, "val-4")).toMatch(TIMEOUT);
    const feedbackErrors = run.trials.flatMap((t) => (t.data.feedbackErrors as string[] | undefined) ?? []);
    expect(feedbackErrors.length).toBeGreaterThan(0);
    for (const e of feedbackErrors) expect(e).toMatch(/timed out after 0\.05 s \(exampleTimeout\) while the metric was giving feedback on predictor/);
  });

  it("each optimizer refuses an exampleTimeout that is not a positive number of seconds", () => {
    const makers: [string, (o: { exampleTimeout: number }) => unknown][] = [
      ["SimpleOptimizer", (o) => new SimpleOptimizer(o)], ["MIPROv2", (o) => new MIPROv2(o)], ["GEPA", (o) => new GEPA(o)],
    ];
    for (const [name, make] of makers) {
      for (const bad of [0, -2, Number.NaN, Number.POSITIVE_INFINITY, "10"]) {
        expect(() => make({ exampleTimeout: bad as number })).toThrow(ValidationError);
        expect(() => make({ exampleTimeout: bad as number })).toThrow(new RegExp(`^${name} option exampleTimeout must be a positive number of seconds`));
      }
      expect(() => make({ exampleTimeout: 0.5 })).not.toThrow();
    }
  });
});
