import { setTimeout as sleep } from "node:timers/promises";
import { LMError } from "../errors.js";
import { withRateListener } from "../lm/rate-signal.js";
import { emptyUsage, trackUsage, type ModelCall, type UsageTotals } from "../lm/usage-scope.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { withTrace, type TraceEntry } from "../predict/trace.js";
import type { EvaluationRow } from "../store/records.js";
import type { AdaptiveConcurrency } from "./rate-limiter.js";
import type { ResolvedMetric } from "./scoring.js";
import { exampleTimeoutError, timerDelay } from "./timeout.js";
import { isPlainObject } from "../plain-object.js";
import { MediaValue } from "../media/media.js";

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
  /** The model calls the metrics made (judges), counted apart from the module's (the row's tokens and cost). */
  metricUsage?: UsageTotals;
  /** The module's usage for this example (its cache and reasoning tokens reach the run's summary). */
  usage?: UsageTotals;
  /** The model calls the example's module made (re-runs included), when the evaluation records them; else null. */
  calls?: ModelCall[] | null;
}

/** What one example's work produced (the row is made from it). */
interface Attempt {
  error: unknown;
  failedMetric: string | undefined;
  prediction: Record<string, unknown> | null;
  rowPrediction: Record<string, unknown> | null;
  scores: Record<string, number>;
  feedback: Record<string, string>;
  details: Record<string, Record<string, unknown>>;
  trace: TraceEntry[];
}

/** Where an example's work is, for the timeout's message (and its partial trace). */
interface Progress {
  doing: string;
  trace: TraceEntry[];
}

/**
 * The limiter slot an example holds while its module runs (taken by the caller). Released at most
 * once per take; once the example is abandoned (timed out) it gives the slot back and never takes
 * one again, so work that goes on in the background cannot hold or double-release a slot.
 */
class Slot {
  private held = true;
  abandoned = false;
  /** Told when the example is abandoned (a re-run's wait stops then, so no timer outlives the run). */
  onAbandon: (() => void) | undefined;

  constructor(private readonly limiter: AdaptiveConcurrency) {}

  release(): void {
    if (!this.held) return;
    this.held = false;
    this.limiter.release();
  }

  /** Takes a slot again for a re-run; false when the example was abandoned meanwhile. */
  async retake(): Promise<boolean> {
    if (this.abandoned) return false;
    await this.limiter.acquire();
    if (this.abandoned) {
      this.limiter.release();
      return false;
    }
    this.held = true;
    return true;
  }

  abandon(): void {
    this.abandoned = true;
    this.release();
    this.onAbandon?.();
  }
}

/**
 * Runs one example while holding a limiter slot (acquired by the caller, released here): calls the
 * module with usage, trace and rate-limit scopes around it, re-runs it after a wait when its LM gave
 * up on 429, then scores it, and hands the outcome to `done`, exactly once. Never throws: every
 * failure becomes the row's `error` with all scores 0.
 *
 * The whole example (module call, re-runs and metrics) gets `exampleTimeout` seconds; past that
 * `done` gets a failed row saying it timed out, and the work still running is abandoned (a module
 * call takes no abort signal): it writes nothing to the row, calls no further metric and takes no
 * slot afterwards, and its timer is cleared whichever way the example ends. A callback rather than a
 * promise raced against a timer: an instant model makes per-example promises the evaluation's cost.
 */
export function runExample(
  moduleInstance: Module, example: FewShotExample, index: number, metrics: readonly ResolvedMetric[], limiter: AdaptiveConcurrency,
  exampleTimeout: number, done: (outcome: ExampleOutcome) => void, recordCalls = false,
): void {
  const started = performance.now();
  const usage = emptyUsage();
  const metricUsage = emptyUsage();
  if (recordCalls) usage.log = [];
  const slot = new Slot(limiter);
  const progress: Progress = { doing: `${moduleInstance.constructor.name}.call was running`, trace: [] };
  let settled = false;
  const settle = (attempt: Attempt): void => {
    if (settled) return;
    settled = true;
    done(outcomeOf(example, index, metrics, attempt, usage, metricUsage, started));
  };
  const timer = setTimeout(() => {
    slot.abandon();
    settle({ ...FAILED, error: exampleTimeoutError(exampleTimeout, progress.doing), scores: {}, feedback: {}, details: {}, trace: [...progress.trace] });
  }, timerDelay(exampleTimeout));
  attemptExample(moduleInstance, example, metrics, limiter, slot, usage, metricUsage, progress).then(
    (attempt) => {
      clearTimeout(timer);
      if (attempt !== undefined) settle(attempt);
    },
    // Not expected (the attempt catches what it runs), but a bug must still end the example.
    (error: unknown) => {
      clearTimeout(timer);
      slot.release();
      settle({ ...FAILED, error, scores: {}, feedback: {}, details: {}, trace: [...progress.trace] });
    },
  );
}

const FAILED = { failedMetric: undefined, prediction: null, rowPrediction: null } as const;

/** The example's row and what the row does not keep. */
function outcomeOf(
  example: FewShotExample, index: number, metrics: readonly ResolvedMetric[], attempt: Attempt, usage: UsageTotals, metricUsage: UsageTotals,
  started: number,
): ExampleOutcome {
  const { error, failedMetric, scores, feedback, details, trace } = attempt;
  if (error !== undefined) for (const metric of metrics) scores[metric.name] = 0;
  const row: EvaluationRow = {
    index,
    exampleId: example.id ?? null,
    inputs: jsonFormOrText(example.input),
    expected: jsonFormOrText(example.output),
    prediction: attempt.rowPrediction,
    scores,
    error: error === undefined ? null : errorText(error, failedMetric),
    durationMs: performance.now() - started,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cost: usage.cost,
  };
  // Only rows some metric gave details for carry the field, so other rows keep their former shape.
  if (Object.keys(details).length > 0) row.details = details;
  // The calls: a copy, as work abandoned at a timeout may still answer into the log after the row is written.
  return {
    row, prediction: error === undefined ? attempt.prediction : null, trace, feedback, metricUsage, usage,
    calls: usage.log === undefined ? null : [...usage.log],
  };
}

/** The example's work: module call (re-run after 429s), then every metric. Undefined once abandoned. */
async function attemptExample(
  moduleInstance: Module, example: FewShotExample, metrics: readonly ResolvedMetric[], limiter: AdaptiveConcurrency,
  slot: Slot, usage: UsageTotals, metricUsage: UsageTotals, progress: Progress,
): Promise<Attempt | undefined> {
  let value: unknown;
  let error: unknown;
  let failedMetric: string | undefined;
  try {
    for (let rerun = 0; ; rerun++) {
      const trace: TraceEntry[] = (progress.trace = []);
      error = undefined;
      try {
        value = await trackUsage(usage, () => withRateListener(limiter.listener(), async () =>
          (await withTrace(() => moduleInstance.call(example.input), trace)).result));
        break;
      } catch (caught) {
        error = caught;
        if (!isRateLimited(caught) || rerun >= MAX_RATE_LIMIT_RERUNS) break;
        slot.release();
        progress.doing = "waiting to run it again after its model gave up on rate limiting (429)";
        const wait = new AbortController();
        slot.onAbandon = () => wait.abort();
        try {
          await sleep(limiter.pauseRemainingMs() || Math.min(RERUN_BASE_MS * 2 ** rerun, RERUN_MAX_MS), undefined, { signal: wait.signal });
        } catch {
          return undefined; // abandoned while waiting
        }
        if (!(await slot.retake())) return undefined;
        progress.doing = `${moduleInstance.constructor.name}.call was running`;
      }
    }
  } finally {
    slot.release();
  }
  if (slot.abandoned) return undefined;

  const scores: Record<string, number> = {};
  const feedback: Record<string, string> = {};
  const details: Record<string, Record<string, unknown>> = {};
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
      progress.doing = `metric "${metric.name}" was scoring`;
      try {
        const result = await trackUsage(metricUsage, () => metric.score(example, prediction!, progress.trace));
        if (slot.abandoned) return undefined;
        scores[metric.name] = result.score;
        if (result.feedback !== undefined) feedback[metric.name] = result.feedback;
        if (result.details !== undefined) details[metric.name] = result.details;
      } catch (caught) {
        error = caught;
        failedMetric = metric.name;
        break;
      }
    }
  }
  return { error, failedMetric, prediction, rowPrediction, scores, feedback, details, trace: progress.trace };
}

/** Marks where a media value was in `jsonForm`'s text (a key no JSON value from typelm holds). */
const MEDIA_MARK = "\u0000typelm-media";

/**
 * The JSON form the row keeps (dates as ISO text); throws for BigInt or cycles. An `Image`, `Audio`
 * or `Document` (a field, or in a list) stays the value itself, so the lab store keeps its bytes once
 * by sha256 and the row a reference to them.
 */
function jsonForm(value: Record<string, unknown>): Record<string, unknown> {
  const hasMedia = Object.values(value).some((v) => v instanceof MediaValue || (Array.isArray(v) && v.some((x) => x instanceof MediaValue)));
  if (!hasMedia) return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  const media: MediaValue[] = [];
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
    const original = this[key];
    return original instanceof MediaValue ? { [MEDIA_MARK]: media.push(original) - 1 } : v;
  });
  return JSON.parse(text, (_key, v: unknown) => (isPlainObject(v) && typeof v[MEDIA_MARK] === "number" ? media[v[MEDIA_MARK]] : v)) as Record<string, unknown>;
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
