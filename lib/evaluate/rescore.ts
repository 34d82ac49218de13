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
 * 0, and the metrics' model calls are in `report.judge`. A source row whose program failed stays a
 * failed row with the same error; a row whose metric failed then is scored again. Rows are read from
 * `options.lab` (default: the configured store) and the new run is written there unless `record: false`.
 * Label fields are told apart from free text by their values (the source's signature is not stored).
 */
export async function rescore<const M extends MetricSpec>(runId: string, options: RescoreOptions<M>): Promise<ReportOf<M>> {
  return (await import("./rescore-run.js")).rescoreRun<M>(runId, options);
}
