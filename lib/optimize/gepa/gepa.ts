import { inSpan } from "../../instrument/bus.js";
import type { Metric } from "../../evaluate/metric.js";
import type { LanguageModel } from "../../lm/types.js";
import type { Module } from "../../module.js";
import type { FewShotExample } from "../../prompt/few-shot.js";
import type { OptimizationRun } from "../../store/records.js";
import type { UsageEstimate } from "../estimate.js";
import type { GEPAMode } from "./budget.js";
import { checkGEPAOptions, estimateGEPA, gepaBudget, setupGEPA } from "./gepa-plan.js";
import type { BatchOption } from "../../evaluate/batch-transport.js";

/** Options of `new GEPA(options)`: the metric (ideally with feedback), the budget (mode or metric calls), the reflection LM, seeds, merges, parent selection, cost and time limits, batches. */
export interface GEPAOptions {
  /**
   * Scores a prediction, ideally with `{ score, feedback }`; default: every expected output field
   * equal. During reflection it is also called with a fourth argument, `{ predictor, predictorTrace }`,
   * for feedback on that one predictor (see `Metric`).
   */
  metric?: Metric;
  /** Budget preset (default "light"); the table in docs/optimizers.md gives each in metric calls. Not with `maxMetricCalls`. */
  mode?: GEPAMode | "medium";
  /** The budget in metric calls (one per example a program is run on); never exceeded. Not with `mode`. */
  maxMetricCalls?: number;
  /** The LM that writes new instructions from the feedback (default: the configured LM). */
  reflectionLM?: LanguageModel;
  /** Seeds every random choice (default 0). */
  seed?: number;
  /** Training examples per reflective step (default 3). */
  minibatchSize?: number;
  /** Also try merging two descendants that improved different predictors (default true, at most 5 merges accepted). */
  useMerge?: boolean;
  /** How a parent is chosen: from the Pareto front by example (default) or the best average. */
  candidateSelection?: "pareto" | "best";
  /** Examples evaluated at once (default 8). */
  concurrency?: number;
  /** A progress bar on standard error when it is a terminal (default); metric calls spent / budget; `false` never draws one. */
  progress?: boolean;
  /**
   * USD: once the recorded trials have cost this much (program and reflection calls), the run ends
   * with status "stopped" and the best candidate so far is returned (the trial that crossed the limit
   * is recorded). Checked after every trial; not part of the run's configuration, so a stopped run can
   * be resumed with a higher limit.
   */
  maxCost?: number;
  /**
   * Seconds one example may take, its program call plus the metric (default 600), in every scoring
   * and in each metric call for a predictor's feedback. An example past it counts as failed: it
   * scores 0 with an error that says it timed out (kept in the trial's `exampleScores`; a feedback
   * call past it is listed in `data.feedbackErrors` and the scoring's feedback is used), and a
   * scoring fails only when more than half its examples failed. The run goes on. Not part of the
   * run's configuration, so a resume may change it.
   */
  exampleTimeout?: number;
  /**
   * The full-validation passes (baseline and full evaluations; not the minibatches) through the
   * provider's batch service at the batch price: `true` or `{ pollInterval, maxRequestsPerBatch,
   * maxRetries }`, as `Evaluation`'s `batch`. Their records are the trials'; replies enter the LM cache.
   */
  batch?: BatchOption;
}

/** What `gepa.compile` takes: the program, the training examples, optional validation examples, and a run id to resume. */
export interface GEPACompileArgs<M extends Module> {
  moduleInstance: M;
  trainingExamples: readonly FewShotExample[];
  /** Scored for the Pareto front and the final choice (default: the training examples). */
  validationExamples?: readonly FewShotExample[];
  /** The id of an interrupted GEPA run in the lab store to continue. */
  resume?: string;
}

/** @internal */
export type Example = { example: FewShotExample; id: string };

/** What a compile works with, worked out before any model call. @internal */
export interface Setup {
  paths: string[];
  train: Example[];
  val: Example[];
  validation: "given" | "training";
  budget: number;
  minibatchSize: number;
  metric: Metric;
}

/**
 * GEPA (Agrawal et al. 2025, "Reflective Prompt Evolution Can Outperform Reinforcement Learning"):
 * evolves the instructions of a program's predictors. From a pool of candidates scored per
 * validation example it picks a parent on the Pareto front, runs it on a training minibatch, shows
 * one predictor's inputs, outputs and the metric's feedback to a reflection LM that writes a new
 * instruction, keeps the child only when it beats the parent on that minibatch, and then scores it
 * on the validation set. Optionally merges two descendants that improved different predictors.
 * Spends at most the budget in metric calls and returns a clone holding the candidate with the best
 * validation average (the seed unless one is strictly better); the module given is never changed.
 *
 * A program is scored once per example: a candidate met again (the same instructions) takes its
 * earlier scores, which cost no metric call (`trial.reused`). The one scoring never taken from the
 * memo is the parent's run on the reflective minibatch: the reflection reads what the program did on
 * each example (its trace and outputs), which a remembered score does not have.
 */
export class GEPA {
  readonly options: GEPAOptions;
  /** The last (or current) run: every candidate and rejected proposal, with scores, budget spent, tokens and cost. */
  lastRun: OptimizationRun | undefined;

  constructor(options: GEPAOptions = {}) {
    checkGEPAOptions(options);
    this.options = options;
  }

  /** The budget in metric calls for `validation` examples and `predictors` predictors (what the table in docs/optimizers.md computes). */
  budget(predictors: number, validation: number): number {
    return gepaBudget(this.options, predictors, validation);
  }

  /**
   * What a compile would spend, without calling any model. With P predictors, V validation examples,
   * minibatch b, budget B = `budget(P, V)` and C LM calls per program run (`callsPerRun`, default P,
   * a straight pipeline):
   *
   * - program LM calls C·B (every metric call runs the program once);
   * - reflection calls R = ⌊(B − V)·P / (V + 2·b·P)⌋: the reflective proposals the budget plans for
   *   (c·P for a mode's c).
   *
   * A run makes at most C·B program calls (fewer when it stops early, reuses scores or a step's worst
   * case no longer fits); its reflection calls are R when every proposal is accepted and the budget is
   * spent to the last call, more when proposals are rejected (a rejected one costs 2·b metric calls
   * instead of 2·b + V), fewer when proposals end before the reflection (the parent scored 1 on every
   * minibatch example). Tokens come from the prompts rendered for a sample of the examples (the
   * minibatch calls on training examples, the rest on validation examples; instructions as they are
   * now, so the longer instructions reflection writes are not counted) and replies written from their
   * expected outputs; a reflection call from its prompt with b examples of evidence and a reply the
   * length of the current instruction. Cost from the list prices, null when a model has none.
   */
  estimate(args: Omit<GEPACompileArgs<Module>, "resume"> & { callsPerRun?: number }): UsageEstimate {
    return estimateGEPA(this, args);
  }

  /** Evolves the program's instructions on a clone until the budget runs out and resolves with the clone holding the candidate with the best validation average; the module passed is never changed. Every step goes to the lab store and `lastRun`. */
  compile<M extends Module>(args: GEPACompileArgs<M>): Promise<M> {
    // One span around the whole run, so its module calls nest under it in a trace.
    // The run's code is loaded at its first use, so `import "typelm"` does not compile it.
    return inSpan(async () => {
      const setup = this.setup(args);
      const { compileGEPA } = await import("./run.js");
      return compileGEPA(this, args, setup);
    });
  }

  /** Checks the arguments and works out the examples and the budget (no model call). */
  private setup(args: Omit<GEPACompileArgs<Module>, "resume">): Setup {
    return setupGEPA(this, args);
  }
}
