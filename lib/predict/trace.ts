import { asyncLocalStorage } from "../load-sync.js";
import type { Prediction } from "./prediction.js";

/** One predictor call inside a traced run: which predictor, what it was given, what it answered. */
export interface TraceEntry {
  /** The predictor object that was called (compare by identity with `namedPredictors()`). */
  predictor: object;
  /** Its input values after validation and defaults. */
  inputs: Record<string, unknown>;
  /** Its converted outputs. */
  prediction: Prediction;
}

const traces = asyncLocalStorage<TraceEntry[]>();

/**
 * Runs `fn` and collects every successful predictor call made inside it, in order: what optimizers
 * bootstrap demos from and what a metric's `trace` argument holds. Nested traces each get the calls.
 */
export async function withTrace<T>(fn: () => Promise<T>, trace: TraceEntry[] = []): Promise<{ result: T; trace: TraceEntry[] }> {
  const result = await traces.run(trace, fn);
  return { result, trace };
}

/** Called by predictors after a successful call. */
export function recordTrace(entry: TraceEntry): void {
  traces.getStore()?.push(entry);
}
