import { builtin } from "../load-sync.js";
import { LMError, TypelmError } from "../errors.js";
import { Instrumentation, inSpan } from "../instrument/bus.js";
import { classifyFailure, type Failure } from "./failure.js";
import type { LMPolicy } from "./policy.js";
import { currentRateListener, type PacedAttempt } from "./rate-signal.js";

export interface RetryTarget {
  provider: string;
  model: string;
  /** The server (scheme, host, port, path: `shownUrl`, never credentials): said when it cannot be reached. */
  endpoint?: string;
}

/** One attempt: receives a signal that aborts when the attempt's time is up. */
export type Attempt<T> = (signal: AbortSignal, timeoutMs: number) => Promise<T>;

/**
 * What a streamed (or abortable) call tells the retry loop about its attempts. Every member is
 * optional; without hooks an attempt is retried as before.
 */
export interface AttemptHooks {
  /** Whether the attempt that just failed had already handed reply text to its caller: then it is never retried. */
  delivered?(): boolean;
  /** Milliseconds from the attempt's start to its first text chunk (for `lm.request.end`); undefined when none came. */
  firstTokenMs?(): number | undefined;
  /**
   * An error to throw as it is, without retry or wrapping in `LMError` (what the caller's `onDelta`
   * threw, the `AbortError` of the caller's signal), or undefined for a provider failure.
   */
  ownError?(error: unknown): { error: unknown } | undefined;
  /** The caller's signal: a wait between attempts ends with the `AbortError` when it aborts. */
  signal?: AbortSignal | undefined;
}

/** Upper bound of one computed backoff wait, so a long run of failures cannot stall for minutes. */
const MAX_BACKOFF_MS = 30_000;
/** The backoff's jitter takes a wait down to this share of its step at most. */
const MIN_JITTER_SHARE = 0.75;

/**
 * Runs `attempt` under the library's retry policy: a timeout per attempt, retries on 408/409/429/5xx,
 * connection failures and timeouts, waits from `retry-after-ms` / `retry-after` (at least
 * `retryFloorMs`) or else exponential backoff with jitter. Emits `lm.request.start` / `lm.request.end` per attempt. After the last
 * attempt, or on a failure not worth retrying, throws `LMError` whose message holds no secret.
 *
 * Inside an evaluation (a rate listener in scope, lib/lm/rate-signal.ts) each 429 and success is
 * reported as it happens, and when the listener paces, every attempt first waits at its gate: a 429
 * that named its wait is then waited out there (the gate holds all calls to the provider until the
 * token the server named), not by a sleep of this call alone. A named wait under the floor is not
 * waited at the gate: the call sleeps its floor, then goes back through the gate.
 */
export async function withRetry<T>(target: RetryTarget, policy: Readonly<LMPolicy>, attempt: Attempt<T>, hooks: AttemptHooks = {}): Promise<T> {
  const timeoutMs = policy.httpTimeout * 1000;
  const maxAttempts = policy.maxRetries + 1;
  const listener = currentRateListener();
  let refused = false;
  for (let number = 1; ; number++) {
    // The gate's wait comes before the attempt's span and timeout: it is not the provider's time.
    const paced: PacedAttempt | undefined = listener?.pace === undefined ? undefined : await listener.pace(target, refused);
    // Each attempt is its own span under the chat call, so retries show as siblings.
    const outcome = await inSpan(async () => {
      Instrumentation.emit("lm.request.start", { provider: target.provider, model: target.model, attempt: number });
      const started = performance.now();
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new DOMException(`attempt exceeded ${policy.httpTimeout}s`, "TimeoutError"));
      }, timeoutMs);
      try {
        const value = await attempt(controller.signal, timeoutMs);
        const firstTokenMs = hooks.firstTokenMs?.();
        Instrumentation.emit("lm.request.end", {
          provider: target.provider, model: target.model, attempt: number, ok: true, status: 200,
          durationMs: performance.now() - started, ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
        });
        listener?.succeeded(paced);
        return { done: true as const, value };
      } catch (error) {
        const own = hooks.ownError?.(error);
        const failure = classifyFailure(error, timedOut);
        // Reply text already handed out cannot be taken back: a stream cut off after its first
        // byte is not retried (the caller would see the reply's start twice).
        const streamed = hooks.delivered?.() === true;
        const willRetry = own === undefined && !streamed && failure.retryable && number < maxAttempts;
        const delayMs = willRetry ? backoffMs(failure, number, policy.retryDelay) : undefined;
        refused = failure.status === 429;
        const firstTokenMs = hooks.firstTokenMs?.();
        Instrumentation.emit("lm.request.end", {
          provider: target.provider, model: target.model, attempt: number, ok: false, status: failure.status,
          durationMs: performance.now() - started, failure: failure.kind, retryable: failure.retryable,
          willRetry, delayMs, error: failure.message, ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
        });
        // An evaluation listening in lowers its concurrency and paces (lib/batch/rate-limiter.ts).
        if (refused) listener?.limited(failure.retryAfterMs, paced);
        // Our own errors (e.g. an OutputError for a reply without the forced tool call) pass through.
        if (own !== undefined) throw own.error;
        if (error instanceof TypelmError) throw error;
        if (!willRetry) throw toLMError(target, failure, number, policy, streamed);
        // A paced 429 with the server's time waits at the gate, which holds every call until then; a
        // time under the floor is no time: this call waits its floor on its own, then comes back.
        const gated = refused && paced !== undefined && failure.retryAfterMs !== undefined && failure.retryAfterMs >= retryFloorMs(policy.retryDelay);
        return { done: false as const, delayMs: gated ? undefined : delayMs ?? 0 };
      } finally {
        clearTimeout(timer);
      }
    });
    if (outcome.done) return outcome.value;
    if (outcome.delayMs !== undefined) await sleepUnlessAborted(outcome.delayMs, hooks);
  }
}

/** Waits `ms`, or ends with the caller's `AbortError` as soon as the caller's signal aborts. */
async function sleepUnlessAborted(ms: number, hooks: AttemptHooks): Promise<void> {
  const signal = hooks.signal;
  const sleep = builtin("node:timers/promises").setTimeout;
  if (signal === undefined) return void (await sleep(ms));
  try {
    await sleep(ms, undefined, { signal });
  } catch (error) {
    const own = hooks.ownError?.(error);
    throw own === undefined ? error : own.error;
  }
}

/**
 * Wait before retry number `attempt` (1-based): the server's word when given, but never less than
 * `retryFloorMs`; else backoff.
 */
export function backoffMs(failure: Failure, attempt: number, retryDelaySeconds: number, random = Math.random): number {
  if (failure.retryAfterMs !== undefined) return Math.max(failure.retryAfterMs, retryFloorMs(retryDelaySeconds));
  const base = Math.min(retryDelaySeconds * 1000 * 2 ** (attempt - 1), MAX_BACKOFF_MS);
  // Jitter in [75%, 100%] keeps clients that failed together from retrying in lockstep.
  return base * (1 - (1 - MIN_JITTER_SHARE) * random());
}

/**
 * The shortest wait between two attempts of one request, whatever the server says: the normal
 * backoff's minimum (its first step less the most jitter takes off, 750 ms with the default
 * `retryDelay` of 1 s). A `retry-after` of 0 (or a date in the past, or a few milliseconds) would
 * otherwise send every retry back to back: 8 examples made 672 requests against a server that kept
 * answering 429 with `retry-after: 0`.
 */
export function retryFloorMs(retryDelaySeconds: number): number {
  return retryDelaySeconds * 1000 * MIN_JITTER_SHARE;
}

function toLMError(target: RetryTarget, failure: Failure, attempts: number, policy: Readonly<LMPolicy>, streamed: boolean): LMError {
  const what = describe(target, failure, policy);
  const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  const why = streamed && failure.retryable
    ? `not retried (part of the reply was already streamed to the caller; ${tries})`
    : failure.retryable ? `gave up after ${tries}` : `not retried (${what} is not a transient failure)`;
  return new LMError(
    `${target.provider} request for model "${target.model}" failed: ${what}; ${why}. ` +
      `Expected a successful reply; received: ${failure.message || "(no message)"}`,
    { status: failure.status, retryable: failure.retryable, provider: target.provider, attempts },
  );
}

function describe(target: RetryTarget, failure: Failure, policy: Readonly<LMPolicy>): string {
  switch (failure.kind) {
    case "http": return `HTTP ${failure.status}`;
    case "timeout": return `no reply${target.endpoint === undefined ? "" : ` from ${target.endpoint}`} within httpTimeout ${policy.httpTimeout}s`;
    case "connection": return target.endpoint === undefined ? "connection failed" : `connection to ${target.endpoint} failed`;
    case "invalid-response": return "malformed response body";
    case "stream-error": return "an error event in the streamed reply";
    default: return "request error";
  }
}
