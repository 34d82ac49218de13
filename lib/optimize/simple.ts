import { inSpan } from "../instrument/bus.js";
import type { Metric } from "../evaluate/metric.js";
import type { Module, Tunable } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { OptimizationRun } from "../store/records.js";
import type { UsageEstimate } from "./estimate.js";
import type { IdentifiedExample as Example } from "./examples.js";
import { checkSimpleOptions, estimateSimple, setupSimple } from "./simple-impl.js";
import type { BatchOption } from "../evaluate/batch-transport.js";

/** Options of `new SimpleOptimizer(options)`: the metric, seed, trials, demos per predictor, candidate instructions, cost and time limits, batches. */
export interface SimpleOptimizerOptions {
  /** Scores a prediction; default: every expected output field equal. */
  metric?: Metric;
  /** Seeds every random choice (default 0). */
  seed?: number;
  /** Random configurations tried after the baseline (default 10). */
  numTrials?: number;
  /**
   * Demos per predictor in a tried configuration (default 4; 0 searches instructions only): each
   * trial's demo set is bootstrapped as DSPy's BootstrapFewShotWithRandomSearch builds its candidates
   * (labelled only, then teacher runs topped up with labelled examples to kDemos).
   */
  kDemos?: number;
  /**
   * The least metric score (in (0, 1]) a bootstrap teacher run needs for its trace to become demos.
   * Default: any score above 0, as DSPy's `metric_threshold=None`.
   */
  metricThreshold?: number;
  /** Instruction variants tried for every predictor, besides its current instruction. */
  instructions?: string[];
  /** Examples evaluated at once (default 8). */
  concurrency?: number;
  /** A progress bar on standard error when it is a terminal (default); `false` never draws one. */
  progress?: boolean;
  /**
   * USD: once the recorded trials have cost this much, the run ends with status "stopped" and the
   * best configuration so far is returned (the trial that crossed the limit is recorded). Checked
   * after every trial; not part of the run's configuration, so a stopped run can be resumed with more.
   */
  maxCost?: number;
  /**
   * Seconds one example may take, its program call plus the metric (default 600). An example past it
   * counts as failed, scoring 0 with an error that says it timed out (kept in the trial's
   * `exampleScores`), like any failed example: the trial fails only when more than half its examples
   * failed, and the run goes on. Not part of the run's configuration, so a resume may change it.
   */
  exampleTimeout?: number;
  /**
   * The full-validation passes (baseline and full evaluations; not the minibatches) through the
   * provider's batch service at the batch price: `true` or `{ pollInterval, maxRequestsPerBatch,
   * maxRetries }`, as `Evaluation`'s `batch`. Their records are the trials'; replies enter the LM cache.
   */
  batch?: BatchOption;
}

/** What `SimpleOptimizer.compile` takes: the program, the training examples, optional validation examples, and a run id to resume. */
export interface SimpleCompileArgs<M extends Module> {
  moduleInstance: M;
  trainingExamples: readonly FewShotExample[];
  /** Scored for every configuration (default: half of the training examples, the other half is the demo pool). */
  validationExamples?: readonly FewShotExample[];
  resume?: string;
}

/** What a compile works with, worked out before any model call. @internal */
export interface Setup {
  predictors: [string, Tunable & Module][];
  train: Example[];
  pool: Example[];
  scored: Example[];
  seed: number;
  kDemos: number;
  numTrials: number;
  metric: Metric;
}

/**
 * Seeded random search: the baseline, then `numTrials` configurations each drawing, per predictor, an
 * instruction (current or one of `instructions`; each round of draws is a permutation, so every one
 * is tried when `numTrials` allows) and, trial t, demo set t, all scored on the same examples. The
 * demo sets are bootstrapped as DSPy's BootstrapFewShotWithRandomSearch builds its candidates (set 1
 * `kDemos` labelled pool examples, set 2 teacher runs on the pool in its order, later sets on seeded
 * shuffles with a quota drawn from 1..kDemos, each topped up with labelled examples to `kDemos`; a
 * teacher run is kept when its score is above 0, or at least `metricThreshold`). Without validation
 * examples the training examples are split (seeded): the first half is the demo pool and the rest
 * is scored, so a demo is never scored against itself. Returns a clone with the best configuration
 * (the baseline unless one scores strictly higher).
 *
 * A configuration is scored once per example: a trial whose configuration (instruction texts and
 * demos) was scored before reuses those scores (`trial.reused`) without calling the model.
 */
export class SimpleOptimizer {
  readonly options: SimpleOptimizerOptions;
  lastRun: OptimizationRun | undefined;

  constructor(options: SimpleOptimizerOptions = {}) {
    checkSimpleOptions(options);
    this.options = options;
  }

  /** Scores the baseline and `numTrials` configurations on a clone and resolves with the clone holding the best one; the module passed is never changed. Every trial goes to the lab store and `lastRun`. */
  compile<M extends Module>(args: SimpleCompileArgs<M>): Promise<M> {
    // One span around the whole run, so its trials' module calls nest under it in a trace.
    // The run's code is loaded at its first use, so `import "typelm"` does not compile it.
    return inSpan(async () => {
      const setup = this.setup(args);
      const { compileSimple } = await import("./simple-run.js");
      return compileSimple(this, args, setup);
    });
  }

  /**
   * What a compile would spend, without calling any model: LM calls = C·B + (numTrials + 1) · S · C
   * for S scored examples and C calls per program run (default: one per predictor, a straight
   * pipeline), B the bootstrap's teacher runs (0 with `kDemos` 0), estimated as MIPROv2's with half
   * of them passing: min(pool, 2k + (k+1)·(numTrials − 2)) for k = kDemos and 2 or more trials;
   * tokens from the prompts rendered for a sample of the examples (the baseline with the predictors'
   * own demos, the teacher runs and the trials with `kDemos` demos from the pool) and replies written
   * from their expected outputs; cost from the model's list price (null when unknown). An actual run
   * makes at most the trials' share of these LM calls: exactly that when no configuration repeats (a
   * repeated one reuses its scores) and no program call fails part-way through a pipeline; its
   * teacher runs depend on how many pass.
   */
  estimate(args: Omit<SimpleCompileArgs<Module>, "resume"> & { callsPerRun?: number }): UsageEstimate {
    return estimateSimple(this, args);
  }

  /** Checks the arguments and works out the demo pool and the scored examples (no model call). */
  private setup(args: Omit<SimpleCompileArgs<Module>, "resume">): Setup {
    return setupSimple(this, args);
  }
}
