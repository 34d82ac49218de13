// The options of `program.batch(inputsList, options)` and what it resolves with: the option types,
// their checks (a `ValidationError` naming the option before any call is made), and the error an
// input gets when the signal aborted the batch before it started.
import { ValidationError } from "../errors.js";
import { callSampling } from "../call-sampling.js";
import type { CallOptions } from "../module.js";
import { batchSettings, type BatchOption, type BatchSettings } from "./settings.js";

/** How `program.batch` sends its calls: one live call per input, or through the provider's batch service. */
export type BatchVia = "live" | "provider-batch";

/** Options of `program.batch(inputsList, options)`; `lm`, `temperature` and `rolloutId` apply to every call as in `call`. */
export interface BatchCallOptions extends CallOptions {
  /**
   * Inputs run at once (default 8). Live calls: the most in flight, lowered when the provider rate
   * limits (429) and raised again as calls succeed, as in an evaluation. `via: "provider-batch"`:
   * inputs run at once within a round (at least 64; their calls do not wait on the network).
   */
  concurrency?: number;
  /** "live" (default): one call per input; "provider-batch": the OpenAI / Anthropic batch services, by rounds, at their batch price. */
  via?: BatchVia;
  /** Aborts what is left: inputs not started resolve as `{ ok: false, error }` with an `AbortError`. */
  signal?: AbortSignal;
  /** A progress bar on a terminal and a live display in a notebook (default true). */
  progress?: boolean;
  /** The name on the progress display and in the `batch.*` events (default: the program's class name). */
  name?: string;
  /**
   * With `via: "provider-batch"`: `{ pollInterval, maxRequestsPerBatch, maxRetries, maxWait }`, as
   * `Evaluation({ batch })` takes them (seconds; a request that failed inside a batch goes into the
   * next one up to `maxRetries` times, default 2).
   */
  providerBatch?: Exclude<BatchOption, boolean>;
}

/** One input's outcome in `program.batch`'s results, at the input's position. */
export type BatchResult<O> = { ok: true; value: O } | { ok: false; error: unknown };

/** The options checked, with their defaults. */
export interface BatchPlan {
  concurrency: number;
  via: BatchVia;
  signal: AbortSignal | undefined;
  progress: boolean;
  name: string;
  /** The provider batches' settings; null for live calls. */
  providerBatch: BatchSettings | null;
  /** What each call is given. */
  call: CallOptions;
}

/** Inputs run at once when `concurrency` is not given (an evaluation's default too). */
export const DEFAULT_CONCURRENCY = 8;

const OWNER = "program.batch";
const KNOWN = new Set(["concurrency", "via", "signal", "progress", "name", "providerBatch", "lm", "temperature", "rolloutId"]);

/** `inputsList` and `options` checked: a `ValidationError` naming the option and what it received. */
export function checkBatchOptions(program: string, inputsList: unknown, options: unknown): BatchPlan {
  if (!Array.isArray(inputsList)) {
    throw new ValidationError(`${program}.batch: inputsList must be an array of inputs; received ${describe(inputsList)}`, { field: "inputsList" });
  }
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new ValidationError(`${program}.batch: options must be an object such as { concurrency: 8 }; received ${describe(options)}`, { field: "options" });
  }
  const o = options as BatchCallOptions;
  for (const key of Object.keys(o)) {
    if (!KNOWN.has(key)) {
      throw new ValidationError(
        `${program}.batch: unknown option "${key}"; expected ${[...KNOWN].join(", ")}`, { field: key },
      );
    }
  }
  const concurrency = o.concurrency ?? DEFAULT_CONCURRENCY;
  if (typeof concurrency !== "number" || !Number.isInteger(concurrency) || concurrency < 1) {
    throw new ValidationError(`${program}.batch: concurrency must be a whole number ≥ 1 (default ${DEFAULT_CONCURRENCY}); received ${describe(concurrency)}`, { field: "concurrency" });
  }
  const via = o.via ?? "live";
  if (via !== "live" && via !== "provider-batch") {
    throw new ValidationError(`${program}.batch: via must be "live" or "provider-batch"; received ${describe(via)}`, { field: "via" });
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new ValidationError(`${program}.batch: signal must be an AbortSignal; received ${describe(o.signal)}`, { field: "signal" });
  }
  if (o.progress !== undefined && typeof o.progress !== "boolean") {
    throw new ValidationError(`${program}.batch: progress must be true or false; received ${describe(o.progress)}`, { field: "progress" });
  }
  if (o.name !== undefined && (typeof o.name !== "string" || o.name === "")) {
    throw new ValidationError(`${program}.batch: name must be a non-empty string; received ${describe(o.name)}`, { field: "name" });
  }
  if (o.providerBatch !== undefined && via !== "provider-batch") {
    throw new ValidationError(`${program}.batch: providerBatch applies only with via: "provider-batch"; received via ${JSON.stringify(via)}`, { field: "providerBatch" });
  }
  if (o.providerBatch !== undefined && (o.providerBatch === null || typeof o.providerBatch !== "object")) {
    throw new ValidationError(
      `${program}.batch: providerBatch must be { pollInterval, maxRequestsPerBatch, maxRetries, maxWait }; received ${describe(o.providerBatch)}`,
      { field: "providerBatch" },
    );
  }
  // The sampling options are checked once here rather than failing every input alike.
  callSampling(o);
  const call: CallOptions = {};
  if (o.lm !== undefined) call.lm = o.lm;
  if (o.temperature !== undefined) call.temperature = o.temperature;
  if (o.rolloutId !== undefined) call.rolloutId = o.rolloutId;
  return {
    concurrency, via, signal: o.signal, progress: o.progress ?? true, name: o.name ?? program, call,
    providerBatch: via === "provider-batch" ? batchSettings(`${program}.batch`, o.providerBatch ?? true, "providerBatch") : null,
  };
}

/**
 * The error of an input the signal stopped (`error.name === "AbortError"`, the signal's reason as its
 * cause); `when` says where the input was: not started, or waiting to run again after a 429.
 */
export function abortedInput(signal: AbortSignal, when = "before this input started"): Error {
  const error = new Error(`${OWNER}: aborted ${when}`, { cause: signal.reason });
  error.name = "AbortError";
  return error;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
