/**
 * The shapes the lab store records and returns. Evaluation and the optimizers write them as they
 * finish each example or trial; `LabStore.run(id)` reads them back (also while a run is going on).
 */

export type RunKind = "evaluation" | "optimization" | "traces";
/** `stopped`: an optimizer ended early on its `maxCost` and returned the best program found so far. */
export type RunStatus = "running" | "completed" | "failed" | "stopped";

/** One row of `lab.runs()`: what every run has, whatever its kind. */
export interface RunSummary {
  id: string;
  kind: RunKind;
  /** The evaluation's or optimizer's `name` option, else a default such as "MIPROv2". */
  name: string;
  status: RunStatus;
  /** ISO 8601. */
  startedAt: string;
  endedAt: string | null;
  /** The headline score: an evaluation's first metric, an optimizer's best validation score. */
  score: number | null;
  /** Options the run was started with (JSON-ready: seed, mode, metric names, module class, ...). */
  config: Record<string, unknown>;
  /** Totals written when the run ends (metrics, token and cost totals, ...). */
  summary: Record<string, unknown>;
  /** Why the run failed, when it did. */
  error: string | null;
}

/** One evaluated example, as `Evaluation` records it. */
export interface EvaluationRow {
  index: number;
  exampleId: string | null;
  inputs: Record<string, unknown>;
  expected: Record<string, unknown>;
  /** The prediction's output values (JSON form), or null when the example failed before one existed. */
  prediction: Record<string, unknown> | null;
  /** Metric name → score in [0, 1]. A failed example scores 0 on every metric. */
  scores: Record<string, number>;
  /** `Name: message` of what failed (provider error, bad reply, throwing metric), or null. */
  error: string | null;
  durationMs: number;
  /** The module's tokens and cost for this example (a judge's calls are counted in `report.judge`). */
  inputTokens: number;
  outputTokens: number;
  cost: number;
  /**
   * Metric name → what the metric reported beyond its score (a judge: `verdict` or `score`, and
   * `rationale`); present only when some metric gave details. Kept in the report and in the lab store.
   */
  details?: Record<string, Record<string, unknown>>;
}

/** An evaluation's run, or a run of production traces (`c.traces`: one per module and UTC day, a row per trace). */
export interface EvaluationRun extends RunSummary {
  kind: "evaluation" | "traces";
  rows: EvaluationRow[];
}

/** One example's score in a trial: 0 with `Name: message` in `error` when its run or its metric failed. */
export interface ExampleScore {
  exampleId: string;
  score: number;
  error: string | null;
}

/**
 * One optimizer trial or candidate. MIPROv2 writes one per (instruction, demo set) combination
 * scored; GEPA one per candidate program (with `parents` and per-example scores).
 */
export interface Trial {
  /** 0, 1, 2 ... in the order the trials finished. */
  index: number;
  /** What was scored: a minibatch, the full validation set, the baseline, a bootstrap pass, ... */
  kind: string;
  /** Indices of the trials (candidates) this one was derived from (GEPA); empty for MIPROv2. */
  parents: number[];
  /** Per predictor path: the chosen candidate indices, e.g. `{ "self": { instruction: 2, demos: 1 } }`. */
  choices: Record<string, Record<string, number>>;
  /** Per predictor path: the instruction text in force. */
  instructions: Record<string, string>;
  /** Per predictor path: the ids of the demos in force. */
  demoIds: Record<string, string[]>;
  /** Mean score on the examples scored, or null when the trial failed. */
  score: number | null;
  /**
   * Per example scores, when kept (GEPA's Pareto front needs them). An example whose program call
   * failed or whose metric threw (or returned no score in [0, 1]) scores 0 with its `error`.
   */
  exampleScores: ExampleScore[] | null;
  /**
   * Examples whose score was taken from an earlier trial of the same run that scored the same
   * configuration on the same example (no model or metric call made for them); 0 when none.
   */
  reused: number;
  /** Budget spent when this trial finished (metric calls so far for GEPA, LM calls for MIPROv2). */
  budgetSpent: number;
  lmCalls: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  durationMs: number;
  /**
   * `Name: message` when the trial threw, or when more than half of its examples failed (then
   * `score` is null); the trial is still recorded.
   */
  error: string | null;
  /** Anything else the optimizer wants to keep (the predictor changed, minibatch scores, ...). */
  data: Record<string, unknown>;
}

export interface OptimizationRun extends RunSummary {
  kind: "optimization";
  trials: Trial[];
  /** The trial whose configuration was returned, or null before the run ends. */
  bestTrial: number | null;
}

/** A run as the lab store reads it back: an evaluation with its rows or an optimization with its trials. */
export type LabRun = EvaluationRun | OptimizationRun;

/** One stored version of a module in the registry. */
export interface RegistryVersion {
  name: string;
  version: number;
  createdAt: string;
  /** The module's last recorded score (from metadata.score or the run that produced it), or null. */
  score: number | null;
  metadata: Record<string, unknown>;
}
