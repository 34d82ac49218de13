import { AsyncLocalStorage } from "node:async_hooks";

/** Told about each provider attempt made inside its scope, as it happens. */
export interface RateListener {
  /** An attempt was answered 429; `retryAfterMs` is the wait the server asked for, when it gave one. */
  limited(retryAfterMs: number | undefined): void;
  /** An attempt succeeded. */
  succeeded(): void;
}

const listeners = new AsyncLocalStorage<RateListener>();

/**
 * Runs `fn` with `listener` told about every rate-limited or successful provider attempt made inside
 * it (through async work too). The LM retries 429s on its own; this lets an evaluation see them
 * while they happen and slow down. Only the innermost listener hears a call.
 */
export function withRateListener<T>(listener: RateListener, fn: () => T): T {
  return listeners.run(listener, fn);
}

/** Called by `withRetry` when an attempt is answered 429. */
export function signalRateLimited(retryAfterMs: number | undefined): void {
  listeners.getStore()?.limited(retryAfterMs);
}

/** Called by `withRetry` when an attempt succeeds. */
export function signalSucceeded(): void {
  listeners.getStore()?.succeeded();
}
