import { setTimeout as sleep } from "node:timers/promises";
import { LMError } from "../errors.js";
import { withRateListener } from "../lm/rate-signal.js";
import { emptyUsage, trackUsage } from "../lm/usage-scope.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { withTrace, type TraceEntry } from "../predict/trace.js";
import type { EvaluationRow } from "../store/records.js";
import type { AdaptiveConcurrency } from "./rate-limiter.js";
import type { ResolvedMetric } from "./scoring.js";
import { isPlainObject } from "../plain-object.js";

/**
 * How many times the evaluation runs an example again after its LM gave up on 429s (each run is a
 * full series of the LM's own retries), before recording the 429 as the example's failure.
 */
const MAX_RATE_LIMIT_RERUNS = 20;
/** Wait before re-running a rate-limited example when the server named no time (doubles each rerun). */
const RERUN_BASE_MS = 250;
const RERUN_MAX_MS = 10_000;

/** One example's outcome: its row, plus what the row does not keep (for optimizers). */
export interface ExampleOutcome {
  row: EvaluationRow;
  /** What the module returned, or null when it failed. */
  prediction: Record<string, unknown> | null;
  /** The predictor calls made for this example (the last run's, when it was re-run). */
  trace: TraceEntry[];
  /** Metric name → feedback text, for metrics that gave some. */
  feedback: Record<string, string>;
}

/**
 * Runs one example while holding a limiter slot (acquired by the caller, released here): calls the
 * module with usage, trace and rate-limit scopes around it, re-runs it after a wait when its LM gave
 * up on 429, then scores it. Never throws: every failure becomes the row's `error` with all scores 0.
 */
export async function runExample(
  moduleInstance: Module, example: FewShotExample, index: number, metrics: readonly ResolvedMetric[], limiter: AdaptiveConcurrency,
): Promise<ExampleOutcome> {
  const started = performance.now();
  const usage = emptyUsage();
  let trace: TraceEntry[] = [];
  let value: unknown;
  let error: unknown;
  let failedMetric: string | undefined;
  let holding = true;
  try {
    for (let rerun = 0; ; rerun++) {
      trace = [];
      error = undefined;
      try {
        value = await trackUsage(usage, () => withRateListener(limiter.listener(), async () =>
          (await withTrace(() => moduleInstance.call(example.input), trace)).result));
        break;
      } catch (caught) {
        error = caught;
        if (!isRateLimited(caught) || rerun >= MAX_RATE_LIMIT_RERUNS) break;
        limiter.release();
        holding = false;
        await sleep(limiter.pauseRemainingMs() || Math.min(RERUN_BASE_MS * 2 ** rerun, RERUN_MAX_MS));
        await limiter.acquire();
        holding = true;
      }
    }
  } finally {
    if (holding) limiter.release();
  }

  const scores: Record<string, number> = {};
  const feedback: Record<string, string> = {};
  let prediction: Record<string, unknown> | null = null;
  let rowPrediction: Record<string, unknown> | null = null;
  if (error === undefined) {
    if (!isPlainObject(value)) {
      error = new TypeError(`${moduleInstance.constructor.name}.call returned ${typeof value}; expected an object of output fields`);
    } else {
      prediction = value;
      try {
        rowPrediction = jsonForm(prediction);
      } catch (caught) {
        error = new TypeError(`${moduleInstance.constructor.name}.call returned a prediction with no JSON form: ${(caught as Error).message}`);
        prediction = null;
      }
    }
  }
  if (error === undefined && prediction !== null) {
    for (const metric of metrics) {
      try {
        const result = await metric.score(example, prediction, trace);
        scores[metric.name] = result.score;
        if (result.feedback !== undefined) feedback[metric.name] = result.feedback;
      } catch (caught) {
        error = caught;
        failedMetric = metric.name;
        break;
      }
    }
  }
  if (error !== undefined) for (const metric of metrics) scores[metric.name] = 0;

  const row: EvaluationRow = {
    index,
    exampleId: example.id ?? null,
    inputs: jsonFormOrText(example.input),
    expected: jsonFormOrText(example.output),
    prediction: rowPrediction,
    scores,
    error: error === undefined ? null : errorText(error, failedMetric),
    durationMs: performance.now() - started,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cost: usage.cost,
  };
  return { row, prediction: error === undefined ? prediction : null, trace, feedback };
}

/** The JSON form the row keeps (dates as ISO text); throws for BigInt or cycles. */
function jsonForm(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

/** Example values were checked when the example was made; a value with no JSON form is kept as text. */
function jsonFormOrText(value: Record<string, unknown>): Record<string, unknown> {
  try {
    return jsonForm(value);
  } catch {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
  }
}

function isRateLimited(error: unknown): boolean {
  return error instanceof LMError && error.status === 429;
}

/** `Name: message`, saying which metric failed when one did. */
function errorText(error: unknown, metricName: string | undefined): string {
  const name = error instanceof Error ? error.name : "Error";
  const message = error instanceof Error ? error.message : String(error);
  const where = metricName === undefined || message.includes(`"${metricName}"`) ? "" : `metric "${metricName}" threw: `;
  return `${name}: ${where}${message}`;
}
