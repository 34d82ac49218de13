import type { FewShotExample } from "../predict/few-shot.js";
import type { TraceEntry } from "../predict/trace.js";

/** What a metric may return: a score (booleans count 1/0) or a score with feedback text (for GEPA). */
export type MetricResult = number | boolean | { score: number | boolean; feedback?: string };

/**
 * Scores one prediction against an example's expected outputs. `trace` lists the predictor calls
 * made for this example (present during optimization and evaluation).
 */
export type Metric = (
  example: FewShotExample,
  prediction: Record<string, unknown>,
  trace?: readonly TraceEntry[],
) => MetricResult | Promise<MetricResult>;
