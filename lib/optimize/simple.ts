import { TypelmError, ValidationError } from "../errors.js";
import { inSpan } from "../instrument/bus.js";
import { defaultMetric, type Metric } from "../evaluate/metric.js";
import type { Module } from "../module.js";
import { FewShotExample } from "../prompt/few-shot.js";
import { noteScore } from "../store/module-score.js";
import type { OptimizationRun, Trial } from "../store/records.js";
import { labelledFits } from "./bootstrap.js";
import { configured, describeChoices, type Candidates, type Choices } from "./candidates.js";
import { checkExamples, dataFingerprint, type IdentifiedExample as Example } from "./examples.js";
import { checkOptions, tunablePredictors, type CommonOptions } from "./options.js";
import { Random } from "./random.js";
import { RunRecorder } from "./recorder.js";
import { scoreOn } from "./score.js";

export interface SimpleOptimizerOptions {
  /** Scores a prediction; default: every expected output field equal. */
  metric?: Metric;
  /** Seeds every random choice (default 0). */
  seed?: number;
  /** Random configurations tried after the baseline (default 10). */
  numTrials?: number;
  /** Demos per predictor in a tried configuration (default 4; 0 searches instructions only). */
  kDemos?: number;
  /** Instruction variants tried for every predictor, besides its current instruction. */
  instructions?: string[];
  /** Examples evaluated at once (default 8). */
  concurrency?: number;
  /** A progress bar on standard error when it is a terminal (default); `false` never draws one. */
  progress?: boolean;
}

/**
 * Seeded random search: the baseline, then `numTrials` configurations each drawing, per predictor, an
 * instruction (current or one of `instructions`; each round of draws is a permutation, so every one
 * is tried when `numTrials` allows) and `kDemos` demos from the demo pool, all scored on
 * the same examples. Without validation examples the training examples are split (seeded): the first
 * half is the demo pool and the rest is scored, so a demo is never scored against itself. Returns a
 * clone with the best configuration (the baseline unless one scores strictly higher).
 */
export class SimpleOptimizer {
  readonly options: SimpleOptimizerOptions;
  lastRun: OptimizationRun | undefined;

  constructor(options: SimpleOptimizerOptions = {}) {
    checkOptions("SimpleOptimizer", options as CommonOptions, { numTrials: 1, kDemos: 0, concurrency: 1 });
    if (options.instructions !== undefined && (!Array.isArray(options.instructions) || options.instructions.some((i) => typeof i !== "string" || i.trim() === ""))) {
      throw new ValidationError("SimpleOptimizer option instructions must be an array of non-empty strings", { field: "instructions" });
    }
    this.options = options;
  }

  compile<M extends Module>(args: { moduleInstance: M; trainingExamples: readonly FewShotExample[]; validationExamples?: readonly FewShotExample[]; resume?: string }): Promise<M> {
    // One span around the whole run, so its trials' module calls nest under it in a trace.
    return inSpan(() => this.compileInSpan(args));
  }

  private async compileInSpan<M extends Module>(args: { moduleInstance: M; trainingExamples: readonly FewShotExample[]; validationExamples?: readonly FewShotExample[]; resume?: string }): Promise<M> {
    const { moduleInstance } = args;
    const predictors = tunablePredictors("SimpleOptimizer", moduleInstance);
    const train = checkExamples(args.trainingExamples, "trainingExamples", "SimpleOptimizer");
    const seed = this.options.seed ?? 0;
    const kDemos = this.options.kDemos ?? 4;
    const numTrials = this.options.numTrials ?? 10;
    const metric = this.options.metric ?? defaultMetric;
    let pool: Example[];
    let scored: Example[];
    if (args.validationExamples !== undefined) {
      pool = train;
      scored = checkExamples(args.validationExamples, "validationExamples", "SimpleOptimizer");
    } else if (train.length < 2) {
      [pool, scored] = [train, train];
    } else {
      const shuffled = new Random(seed, "split").shuffle(train);
      const half = Math.ceil(shuffled.length / 2);
      [pool, scored] = [shuffled.slice(0, half), shuffled.slice(half)];
    }
    if (kDemos > pool.length) {
      throw new ValidationError(
        `SimpleOptimizer kDemos is ${kDemos} but the demo pool has ${pool.length} examples ` +
          `(${args.validationExamples === undefined ? "half of the training examples, the other half is scored" : "the training examples"}): lower kDemos or add training examples`,
        { field: "kDemos" },
      );
    }
    const config = {
      module: moduleInstance.constructor.name, predictors: predictors.map(([p]) => p), seed, kDemos, numTrials, metric: metric.name || "metric",
      instructions: this.options.instructions ?? [], pool: pool.length, scored: scored.length,
      data: dataFingerprint([...train, ...scored]),
    };
    const rec = RunRecorder.start("SimpleOptimizer", config, args.resume, { bar: { progress: this.options.progress, unit: "trials", total: numTrials + 1 } });
    this.lastRun = rec.run;
    try {
      // Candidates: instructions shared by all trials; one demo set per trial (set 0: the demos as given).
      const random = new Random(seed, "search");
      const candidates: Candidates = { instructions: {}, demoSets: {} };
      for (const [path, p] of predictors) {
        candidates.instructions[path] = [p.instruction, ...(this.options.instructions ?? [])];
        candidates.demoSets[path] = [[...p.demos]];
      }
      const plans: Choices[] = [Object.fromEntries(predictors.map(([path]) => [path, { instruction: 0, demos: 0 }]))];
      // Instructions are drawn round by round from fresh permutations, so every variant gets tried.
      const rounds = new Map<string, number[]>();
      for (let t = 1; t <= numTrials; t++) {
        const choices: Choices = {};
        for (const [path, p] of predictors) {
          const n = candidates.instructions[path]!.length;
          if ((t - 1) % n === 0) rounds.set(path, random.shuffle([...Array(n).keys()]));
          const fits = pool.filter((e) => labelledFits(p, e.example));
          const demos = random.sample(fits, kDemos).map((e) => new FewShotExample({ input: e.example.input, output: e.example.output, id: e.id }));
          candidates.demoSets[path]!.push(fits.length === 0 ? [...p.demos] : demos);
          choices[path] = { instruction: rounds.get(path)![(t - 1) % n]!, demos: t };
        }
        plans.push(choices);
      }
      let best: Trial | undefined;
      for (const [t, choices] of plans.entries()) {
        const kind = t === 0 ? "baseline" : "trial";
        const trial = await rec.trial({ kind, choices: choices as Trial["choices"] }, async () => {
          const r = await scoreOn(configured(moduleInstance, candidates, choices), scored, metric, this.options.concurrency ?? 8);
          return { kind, ...describeChoices(candidates, choices), score: r.score, exampleScores: r.exampleScores, data: { failures: r.failures } };
        });
        if (trial.score !== null && (best === undefined || trial.score > best.score!)) best = trial;
      }
      const trials = rec.run.trials;
      if (best === undefined) {
        throw new TypelmError(`SimpleOptimizer: every trial failed, so there is nothing to return; first failure: ${trials[0]?.error}`);
      }
      const result = configured(moduleInstance, candidates, best.choices as Choices) as M;
      noteScore(result, best.score!);
      const baseline = trials[0]!.score;
      rec.finish({
        status: "completed", score: best.score, bestTrial: best.index,
        summary: {
          baselineScore: baseline, bestScore: best.score, gain: baseline === null ? null : best.score! - baseline,
          instructions: best.instructions, demoIds: best.demoIds, trials: trials.length, failedTrials: trials.filter((t) => t.error !== null).length,
          ...rec.usageTotals(),
        },
      });
      return result;
    } catch (error) {
      throw rec.fail(error);
    }
  }
}
