import { canonicalJson } from "../canonical-json.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { TraceEntry } from "../predict/trace.js";

/**
 * What a metric may return: a score (booleans count 1/0) or a score with feedback text (for GEPA)
 * and details the row keeps (a judge's verdict and rationale).
 */
export type MetricResult = number | boolean | { score: number | boolean; feedback?: string; details?: Record<string, unknown> };

/**
 * The fourth argument GEPA gives a metric when it asks for feedback on one predictor (as DSPy's
 * GEPA feedback metric gets `pred_name` and `pred_trace`): the path of the predictor being improved
 * and that predictor's calls for this example, in order.
 */
export interface MetricPredictorArg {
  predictor: string;
  predictorTrace: { inputs: Record<string, unknown>; outputs: Record<string, unknown> }[];
}

/**
 * Scores one prediction against an example's expected outputs. `trace` lists the predictor calls
 * made for this example (present during optimization and evaluation). `predictor` is given only by
 * GEPA's reflection, in a call of its own made to get feedback for that one predictor: the feedback
 * returned then is what the reflection LM reads about it (a metric may ignore it and return the
 * same as without it).
 */
export type Metric = (
  example: FewShotExample,
  prediction: Record<string, unknown>,
  trace?: readonly TraceEntry[],
  predictor?: MetricPredictorArg,
) => MetricResult | Promise<MetricResult>;

/** A metric's result as a number and optional feedback and details; booleans count 1/0. */
export interface MetricScore {
  score: number;
  feedback: string | undefined;
  /** What the metric reported beyond its score (a judge: verdict and rationale), JSON-ready. */
  details?: Record<string, unknown> | undefined;
}

/**
 * A metric that is an object rather than a function (a `Judge`): `Evaluation` reports it under
 * `name` and scores with `metric`.
 */
export interface MetricObject {
  readonly name: string;
  readonly metric: Metric;
}

/** Whether `value` is a `MetricObject` (an object with a string `name` and a `metric` function). */
export function isMetricObject(value: unknown): value is MetricObject {
  return typeof value === "object" && value !== null &&
    typeof (value as { name?: unknown }).name === "string" && typeof (value as { metric?: unknown }).metric === "function";
}

/**
 * Reads what a metric returned. Throws `TypeError` for anything but a finite score in [0, 1] (or a
 * boolean), so a metric that returns NaN, 7 or a string is caught where it is scored.
 */
export function metricScore(result: MetricResult, metricName: string): MetricScore {
  const isObject = typeof result === "object" && result !== null;
  const raw: unknown = isObject ? (result as { score: unknown }).score : result;
  const feedback = isObject && typeof (result as { feedback?: unknown }).feedback === "string" ? (result as { feedback: string }).feedback : undefined;
  const details = isObject ? (result as { details?: unknown }).details : undefined;
  const score = typeof raw === "boolean" ? (raw ? 1 : 0) : raw;
  if (typeof score !== "number" || !Number.isFinite(score) || score < 0 || score > 1) {
    throw new TypeError(
      `Metric "${metricName}" returned ${describe(raw)}; expected a number in [0, 1], a boolean, or { score, feedback }`,
    );
  }
  if (details !== undefined && (typeof details !== "object" || details === null || Array.isArray(details))) {
    throw new TypeError(`Metric "${metricName}" returned details ${describe(details)}; expected an object of JSON values`);
  }
  return details === undefined ? { score, feedback } : { score, feedback, details: details as Record<string, unknown> };
}

/** Whether two output values are equal in their JSON form (dates compare by their ISO text). */
export function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * The default metric: true when every expected output field of the example equals the prediction's
 * value (compared in JSON form, so a `Temporal.PlainDate` equals its "YYYY-MM-DD" text).
 */
export function defaultMetric(example: FewShotExample, prediction: Record<string, unknown>): boolean {
  for (const [field, expected] of Object.entries(example.output)) {
    if (!sameValue(prediction?.[field], expected)) return false;
  }
  return true;
}

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value === undefined) return "undefined";
  try {
    return `${typeof value} ${JSON.stringify(value)}`;
  } catch {
    return typeof value;
  }
}
