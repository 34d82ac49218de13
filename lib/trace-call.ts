/**
 * Production traces on the caller's path (`c.traces`). `Module.call` hands a top-level call here
 * only when `c.traces.sample > 0`; this file decides, before any work, whether the call is sampled,
 * captures a sampled call (inputs, outputs, each model call, latency, cost, error) and puts it in a
 * bounded in-memory queue. Writing is never done here: the writer (traces/recorder.ts) is loaded with
 * `import()` when the first trace is queued and drains the queue behind the calls, in batches.
 */
import { asyncLocalStorage } from "./load-sync.js";
import type { TracesConfig } from "./config.js";
import { describeError, hasListeners, Instrumentation } from "./instrument/bus.js";
import { childOf, currentSpan, runInChildSpan } from "./instrument/context.js";
import { emptyUsage, trackUsage, type ModelCall } from "./lm/usage-scope.js";
import { Random } from "./random.js";

/** One sampled top-level call, as it waits in the queue to be written. */
export interface TraceRecord {
  traceId: string;
  /** The top-level module's class name. */
  module: string;
  /** When the call started, ms since the epoch. */
  at: number;
  inputs: Record<string, unknown>;
  /** The output values (JSON form), or null when the call failed. */
  outputs: Record<string, unknown> | null;
  /** `Name: message` of what the call threw, or null. */
  error: string | null;
  durationMs: number;
  calls: ModelCall[];
  inputTokens: number;
  outputTokens: number;
  cost: number;
}

/** The queue and its counters, shared with the writer (which drains it). */
export interface TraceQueue {
  items: TraceRecord[];
  /** Traces dropped because the queue was full, since the process started (or the last reset). */
  dropped: number;
  /** Traces written, and traces that failed to be written. */
  written: number;
  failed: number;
}

/** The default bound of the queue (`c.traces.maxQueue`). */
export const DEFAULT_MAX_QUEUE = 10_000;

const queue: TraceQueue = { items: [], dropped: 0, written: 0, failed: 0 };
const inside = asyncLocalStorage<true>();
let scheduled = false;
let exitHook = false;
let seeded: { config: TracesConfig; seed: number; random: Random } | undefined;
let writer: Promise<typeof import("./traces/recorder.js")> | undefined;

/**
 * Runs `run` (a module's call) as a top-level call under `config`: nested calls and calls not drawn
 * run as they are (marked, so their children are not drawn again); a drawn call is recorded.
 */
export function traceCall<O>(module: object, inputs: unknown, config: TracesConfig, run: () => Promise<O>): Promise<O> {
  if (inside.getStore() !== undefined) return run();
  const name = module.constructor.name;
  if ((config.modules !== undefined && !config.modules.includes(name)) || draw(config) >= config.sample) return inside.run(true, run);
  // With listeners, the trace id is the span's (events, logs and spans carry it); without, a fresh id and no span to track.
  if (hasListeners()) return inside.run(true, () => runInChildSpan(() => sampled(currentSpan()!.traceId, name, inputs, config, run)));
  return inside.run(true, () => sampled(childOf(undefined).traceId, name, inputs, config, run));
}

function draw(config: TracesConfig): number {
  if (config.seed === undefined) return Math.random();
  if (seeded === undefined || seeded.config !== config || seeded.seed !== config.seed) seeded = { config, seed: config.seed, random: new Random(config.seed, "traces") };
  return seeded.random.next();
}

async function sampled<O>(traceId: string, module: string, inputs: unknown, config: TracesConfig, run: () => Promise<O>): Promise<O> {
  const at = Date.now();
  const started = performance.now();
  const usage = emptyUsage();
  usage.log = [];
  Instrumentation.emit("traces.sampled", { module, traceId });
  const base = { traceId, module, at, inputs: plain(inputs) ?? {}, calls: usage.log };
  try {
    const result = await trackUsage(usage, run);
    tag(result, traceId);
    enqueue({ ...base, outputs: plain(result), error: null, durationMs: performance.now() - started, ...totals(usage) }, config);
    return result;
  } catch (error) {
    tag(error, traceId);
    enqueue({ ...base, outputs: null, error: describeError(error), durationMs: performance.now() - started, ...totals(usage) }, config);
    throw error;
  }
}

function totals(usage: ReturnType<typeof emptyUsage>): Pick<TraceRecord, "inputTokens" | "outputTokens" | "cost"> {
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cost: usage.cost };
}

/** A shallow copy of an object's own fields (a Prediction's output values), so later changes do not reach the trace. */
function plain(value: unknown): Record<string, unknown> | null {
  if (value === null || typeof value !== "object") return value === undefined ? null : { value };
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === "function" && !(value instanceof Date)) {
    const out = json.call(value);
    if (out !== null && typeof out === "object") return { ...(out as Record<string, unknown>) };
  }
  return Array.isArray(value) ? { value: [...value] } : { ...(value as Record<string, unknown>) };
}

/** The trace id on the returned prediction (or the thrown error) as `traceId`, not enumerable so its JSON form is unchanged. */
function tag(value: unknown, traceId: string): void {
  if (value === null || typeof value !== "object" || !Object.isExtensible(value)) return;
  try {
    Object.defineProperty(value, "traceId", { value: traceId, configurable: true, enumerable: false, writable: true });
  } catch {
    // A frozen or exotic object keeps no id: the `traces.sampled` event still carries it.
  }
}

function enqueue(record: TraceRecord, config: TracesConfig): void {
  if (queue.items.length >= (config.maxQueue ?? DEFAULT_MAX_QUEUE)) {
    queue.dropped++;
    Instrumentation.emit("traces.dropped", { module: record.module, traceId: record.traceId, dropped: queue.dropped });
    return;
  }
  queue.items.push(record);
  if (!exitHook) {
    exitHook = true;
    // The loop is about to empty: write what is left (the writes keep the process alive until done).
    process.on("beforeExit", () => {
      if (queue.items.length > 0) void flushTraces();
    });
  }
  if (!scheduled) {
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void drain();
    });
  }
}

function drain(): Promise<void> {
  writer ??= import("./traces/recorder.js");
  return writer.then((w) => w.drain(queue), (error: unknown) => {
    writer = undefined;
    Instrumentation.emit("traces.record.error", { error: describeError(error), traces: queue.items.length });
  });
}

/**
 * Writes every trace still in memory to the lab and resolves when they are stored (or failed:
 * `traces.record.error`). Never rejects. Also done when the process is about to exit (`beforeExit`).
 */
export async function flushTraces(): Promise<void> {
  if (queue.items.length === 0 && writer === undefined) return;
  await drain();
}

/** How many traces were written, failed to be written, were dropped (queue full) and wait in memory. */
export function traceCounters(): { written: number; failed: number; dropped: number; pending: number } {
  return { written: queue.written, failed: queue.failed, dropped: queue.dropped, pending: queue.items.length };
}

/** A user's feedback on a trace: `score` (e.g. 1 thumbs-up, 0 thumbs-down, or a number on your scale) and an optional comment. */
export interface TraceFeedback {
  score: number;
  comment?: string;
}

/**
 * Attaches a user's feedback to the trace `traceId` (the `traceId` of a recorded call's prediction)
 * in the configured lab. Resolves once it is stored; a bad argument is a `ValidationError`. Feedback
 * may arrive before the trace itself is written: they are matched by id when read.
 */
export async function recordFeedback(traceId: string, feedback: TraceFeedback): Promise<void> {
  const { storeFeedback } = await import("./traces/feedback.js");
  await storeFeedback(traceId, feedback);
}
