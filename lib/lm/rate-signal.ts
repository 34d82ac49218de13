import { asyncLocalStorage } from "../load-sync.js";

/** An attempt let go by a listener's pacing gate; handed back with the attempt's outcome. */
export interface PacedAttempt {
  /** When the gate let it go (the gate's clock, ms). */
  readonly at: number;
}

/** Where the attempts go: a pacing gate keeps one per provider endpoint and model. */
export interface AttemptTarget {
  provider: string;
  model: string;
  endpoint?: string;
}

/** Told about each provider attempt made inside its scope, as it happens. */
export interface RateListener {
  /**
   * An attempt was answered 429; `retryAfterMs` is the wait the server asked for, when it gave one.
   * `attempt` is what `pace` returned for it (absent when the listener does not pace).
   */
  limited(retryAfterMs: number | undefined, attempt?: PacedAttempt): void;
  /** An attempt succeeded. */
  succeeded(attempt?: PacedAttempt): void;
  /**
   * Optional pacing gate: called before each attempt, which is sent once it resolves. `retry` says the
   * previous attempt of the same call was refused (429). When a listener paces, a 429 that named its
   * wait (`retry-after-ms` / `retry-after`) is waited out at the gate, not by the retry loop.
   */
  pace?(target: AttemptTarget, retry: boolean): PacedAttempt | Promise<PacedAttempt>;
}

const listeners = asyncLocalStorage<RateListener>();

/**
 * Runs `fn` with `listener` told about every rate-limited or successful provider attempt made inside
 * it (through async work too). The LM retries 429s on its own; this lets an evaluation see them
 * while they happen, slow down and pace the attempts. Only the innermost listener hears a call.
 */
export function withRateListener<T>(listener: RateListener, fn: () => T): T {
  return listeners.run(listener, fn);
}

/** The listener in scope, if any (read once per call by `withRetry`). */
export function currentRateListener(): RateListener | undefined {
  return listeners.getStore();
}
