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

export const display = {
  prediction: displayPrediction,
  trace: displayTrace,
  candidates: displayCandidates,
  metrics: displayMetrics,
  confusion: displayConfusion,
  runs: displayRuns,
  examples: displayExamples,
  compare: displayCompare,
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

// In a tslab kernel, importing the helpers turns on live progress for evaluations and optimizers.
if (inNotebook()) watchProgress();
