// typelm/notebook: display helpers for tslab notebooks. Each shows one MIME bundle in a notebook and
// returns it elsewhere; chart helpers are async (vega and resvg load on first use).
import { inNotebook } from "./bundle.js";
import { displayCandidates } from "./candidates.js";
import { displayCompare } from "./compare.js";
import { displayConfusion } from "./confusion.js";
import { displayExamples } from "./examples.js";
import { displayMetrics } from "./metrics.js";
import { displayPrediction } from "./prediction.js";
import { watchProgress } from "./progress.js";
import { displayRuns } from "./runs.js";
import { displayTrace } from "./trace.js";
import { displayStream } from "./stream.js";

/**
 * The display helpers. In a tslab kernel each shows one MIME bundle (HTML and text; charts also as
 * vega-lite and PNG); elsewhere it returns the bundle and prints nothing. Chart helpers are async.
 */
export const display = {
  /** Shows a prediction's fields (reasoning first), model and tokens. */
  prediction: displayPrediction,
  /** Shows a ReAct, CodeAct or ProgramOfThought result (or a `MaxIterationsError`) as a timeline of steps. */
  trace: displayTrace,
  /** Charts an optimizer run's trials by kind with the best full score so far, with a table of each trial. */
  candidates: displayCandidates,
  /** Charts the metrics of one or more evaluations side by side, each with its 95% interval. */
  metrics: displayMetrics,
  /** Charts the confusion matrix (expected × predicted) of a classification evaluation. */
  confusion: displayConfusion,
  /** Lists the lab store's runs and, with `{ registry, names }`, registry versions. */
  runs: displayRuns,
  /** Lists examples or demos: ids, inputs and outputs. */
  examples: displayExamples,
  /** Shows how a second evaluation of the same examples differs from a first, with the examples that changed. */
  compare: displayCompare,
  /** Shows a `PredictionStream` filling in, in place: each field as it grows, agents' steps as they complete. */
  stream: displayStream,
};

export { watchProgress, inNotebook };
export { renderChart } from "./chart.js";
export { confusionMatrix } from "./confusion.js";
export type { MimeBundle } from "./bundle.js";
export type { VegaLiteSpec, RenderedChart } from "./chart.js";
export type { CandidatesInput } from "./candidates.js";
export type { CompareDisplayOptions } from "./compare.js";
export type { ConfusionMatrix } from "./confusion.js";
export type { ExampleInput, ExamplesOptions } from "./examples.js";
export type { MetricsOptions } from "./metrics.js";
export type { ReportInput } from "./report.js";
export type { RunsSource, VersionsSource, RunsOptions } from "./runs.js";
export type { ProgressState } from "./progress.js";
export type { StreamDisplayOptions } from "./stream.js";

// In a tslab kernel, importing the helpers turns on live progress for evaluations and optimizers.
if (inNotebook()) watchProgress();
