import type { EvaluationOptions, ReportOf } from "./evaluation.js";
import type { MetricSpec } from "./scoring.js";

/** Options of `rescore(runId, options)`: the metrics, and the evaluation's options for the new run. */
export interface RescoreOptions<M extends MetricSpec = MetricSpec> extends EvaluationOptions {
  /** The metrics to score the stored predictions with (names, functions, judges). */
  metrics: readonly M[];
}

/**
 * Scores the stored predictions of evaluation run `runId` again with `metrics` (e.g. a judge added
 * after the run) and records a new evaluation run linked to it by `config.rescoredFrom`, with the
 * source's module and models in its config. The program is not called: its rows' tokens and cost are
 * 0, and the metrics' model calls are in `report.judge`. A source row that failed (its program, or a
 * metric then) stays a failed row with the same error. Rows are read from `options.lab` (default: the
 * configured store) and the new run is written there unless `record: false`. Label fields are told
 * apart from free text by their values (the source's signature is not stored).
 *
 * Refused with a `ValidationError`: a source still running, and one holding an example id twice. A
 * source that failed is rescored from the rows it has, with a warning saying so (`report.warnings`,
 * the stored summary, the terminal) and `config.sourceStatus: "failed"`. Each judge's model is
 * checked first: none, or the offline stand-in, is a `ConfigurationError`, and each judge answers
 * one call (on the first stored answer) before the run.
 */
export async function rescore<const M extends MetricSpec>(runId: string, options: RescoreOptions<M>): Promise<ReportOf<M>> {
  return (await import("./rescore-run.js")).rescoreRun<M>(runId, options);
}
