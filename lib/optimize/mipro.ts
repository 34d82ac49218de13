import { inSpan } from "../instrument/bus.js";
import type { Metric } from "../evaluate/metric.js";
import type { LanguageModel } from "../lm/types.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { OptimizationRun } from "../store/records.js";
import { checkMIPROOptions, miproBudget, type MIPROMode } from "./budget.js";
import type { UsageEstimate } from "./estimate.js";
import type { BatchOption } from "../evaluate/batch-transport.js";

/** Options of `new MIPROv2(options)`: the metric, the budget (mode or each number), seeds, models, cost and time limits, batches. */
export interface MIPROv2Options {
  /** Scores a prediction; default: every expected output field equal. */
  metric?: Metric;
  /** Demos per demo set (default 4). 0 searches instructions only. */
  kDemos?: number;
  /** Budget preset (default "light"); "medium" is "balanced". See the table in docs/optimizers.md. */
  mode?: MIPROMode | "medium";
  /** Instruction candidates and demo sets per predictor (default: the mode's). */
  numCandidates?: number;
  /** Search trials (default: max(2·2P·log2 N, 1.5·N) for P predictors, N candidates). */
  numTrials?: number;
  /** Validation examples per trial (default: the mode's). */
  minibatchSize?: number;
  /** At most this many validation examples are used (a seeded sample when there are more). */
  validationSize?: number;
  /** A full validation evaluation after every this many trials (default 5). */
  fullEvalEvery?: number;
  /** Seeds every random choice (default 0). */
  seed?: number;
  /** The LM that proposes instructions (default: the configured LM). */
  promptModel?: LanguageModel;
  /**
   * The least metric score (in (0, 1]) a bootstrap teacher run needs for its trace to become demos.
   * Default: any score above 0, as DSPy's `metric_threshold=None`.
   */
  metricThreshold?: number;
  /** Temperature of each instruction proposal (default 1.0, as DSPy's init_temperature); each proposal also gets its own rollout id. */
  proposalTemperature?: number;
  /** Examples evaluated at once (default 8). */
  concurrency?: number;
  /** A progress bar on standard error when it is a terminal (default); `false` never draws one. */
  progress?: boolean;
  /**
   * USD: once the recorded trials have cost this much the run stops (status "stopped") and returns
   * the best program fully evaluated so far (the program as given when none was); the trial that
   * crossed the limit is recorded. Costs come from the price table (0 for models without a price).
   */
  maxCost?: number;
  /**
   * Score each (configuration, example) pair once per run and reuse it when a later trial meets it
   * again (default true). `false` asks the model again every time: only for measuring what the memo
   * saves (`npm run bench:mipro-memo`).
   */
  memo?: boolean;
  /**
   * Seconds one example may take, its program call plus the metric (default 600), in the bootstrap's
   * teacher runs and in every trial. An example past it counts as failed, with an error that says it
   * timed out: a bootstrap run that timed out gives no demo (listed in the bootstrap trial's
   * `data.failures`); in a trial it scores 0 with the error kept in `exampleScores`, and the trial
   * fails only when more than half its examples failed. The run goes on. Not part of the run's
   * configuration, so a resume may change it.
   */
  exampleTimeout?: number;
  /**
   * The full-validation passes (baseline and full evaluations; not the minibatches) through the
   * provider's batch service at the batch price: `true` or `{ pollInterval, maxRequestsPerBatch,
   * maxRetries }`, as `Evaluation`'s `batch`. Their records are the trials'; replies enter the LM cache.
   */
  batch?: BatchOption;
}

/** What `mipro.compile` takes: the program, the training examples, optional validation examples, and a run id to resume. */
export interface CompileArgs {
  moduleInstance: Module;
  trainingExamples: readonly FewShotExample[];
  /**
   * Scored for the search. Default: a seeded split of the training examples, 20% demo pool and
   * 80% validation, as DSPy does, so no example is scored while it is a demo in the prompt.
   */
  validationExamples?: readonly FewShotExample[];
  /** The id of an interrupted run in the lab store to continue. */
  resume?: string;
}

/** The numbers one compile works with, after mode, options and data sizes. */
export interface MIPROBudget {
  mode: MIPROMode;
  /** Instruction candidates per predictor (the current one included). */
  candidates: number;
  /** Demo sets per predictor (set 0, the demos as given, included); 1 when kDemos is 0. */
  demoSets: number;
  trials: number;
  minibatchSize: number;
  validationSize: number;
  fullEvalEvery: number;
  /** Expected teacher runs of the bootstrap (docs/optimizers.md: half the runs passing), at most the demo pool. */
  bootstrapRuns: number;
  /** Demo sets bootstrapped only to show the proposer (kDemos 0: DSPy's 3-demo sets), else 0. */
  proposerSets: number;
}

/**
 * MIPROv2 (Opsahl-Ong et al. 2024): bootstraps candidate demo sets, proposes grounded candidate
 * instructions, then searches (instruction, demo set) per predictor with a seeded categorical TPE on
 * validation minibatches, evaluating the most promising combination on the full validation set every
 * few trials. Returns a clone holding the best fully evaluated configuration (the baseline unless one
 * scores strictly higher); the module given is never changed.
 */
export class MIPROv2 {
  readonly options: MIPROv2Options;
  /** The last (or current) run: every trial, its choices, scores, calls, tokens and cost. */
  lastRun: OptimizationRun | undefined;

  constructor(options: MIPROv2Options = {}) {
    checkMIPROOptions(options);
    this.options = options;
  }

  /**
   * The budget for a program with `predictors` predictors, `training` demo-pool examples and
   * `validation` validation examples (what the table in docs/optimizers.md computes).
   */
  budget(predictors: number, training: number, validation: number): MIPROBudget {
    return miproBudget(this.options, predictors, training, validation);
  }

  /**
   * What a compile with these arguments is expected to spend, without calling any model: LM calls
   * from the formula in docs/optimizers.md (the bootstrap's runs as `budget` estimates them, every minibatch and
   * full evaluation as if nothing were reused, so an upper bound for those), tokens from the prompts
   * rendered for a sample of the examples (a demo set of kDemos pool examples in them), the
   * proposer's calls from its signatures, and cost from the price table (null when a model has no price).
   */
  async estimate(args: Omit<CompileArgs, "resume">): Promise<UsageEstimate> {
    // The estimate's code (the split, token counts, the proposer's signatures) loads at first use,
    // so `import "typelm"` does not compile it.
    return (await import("./mipro-estimate.js")).estimateMIPRO(this, args);
  }

  /** Runs the search (split, bootstrap, proposals, baseline, trials) on a clone and resolves with the clone holding the best configuration found; the module passed is never changed. Every trial goes to the lab store and `lastRun`. */
  compile<M extends Module>(args: CompileArgs & { moduleInstance: M }): Promise<M> {
    // One span around the whole run, so its trials' module calls nest under it in a trace.
    // The run's code is loaded at its first use, so `import "typelm"` does not compile it.
    return inSpan(async () => (await import("./mipro-run.js")).compileMIPRO(this, args));
  }
}
