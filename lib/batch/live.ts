// `program.batch` with live calls: every input is one `program.call`, as many at once as the adaptive
// concurrency allows (the evaluation's AIMD limit and pacing gate: a 429 lowers the limit, successes
// raise it again), an input whose LM gave up on 429 is run again after the server's wait, and the
// signal stops inputs from starting. Never throws for an input: its error is its result.
import { setTimeout as sleep } from "node:timers/promises";
import { LMError } from "../errors.js";
import { withRateListener } from "../lm/rate-signal.js";
import { emptyUsage, trackUsage } from "../lm/usage-scope.js";
import type { Module } from "../module.js";
import { abortedInput, type BatchPlan, type BatchResult } from "./options.js";
import type { BatchReporter } from "./progress.js";
import { AdaptiveConcurrency } from "./rate-limiter.js";
import { yieldNowAndThen } from "./yield.js";

/** Runs of an input after its LM gave up on 429s (each run is a full series of the LM's own retries), as an evaluation does. */
const MAX_RATE_LIMIT_RERUNS = 20;
/** Wait before such a run when the server named no time (doubles each run), up to RERUN_MAX_MS. */
const RERUN_BASE_MS = 250;
const RERUN_MAX_MS = 10_000;
const AFTER_429 = "while this input waited to run again after its model gave up on rate limiting (429)";

/** What a live batch reports at its end besides the results. */
export interface LiveSummary {
  maxConcurrency: number;
  concurrencyDecreases: number;
}

/**
 * Calls `program` on every input, at most `plan.concurrency` at once (fewer while the provider rate
 * limits), and resolves with each input's result at its position. Once `plan.signal` aborts, inputs
 * not started resolve with an `AbortError`; calls already running finish (a module call takes no
 * signal) and keep their outcome.
 */
export async function runLive<I, O>(
  program: Module<I, O>, inputs: readonly I[], plan: BatchPlan, reporter: BatchReporter,
): Promise<{ results: BatchResult<O>[]; summary: LiveSummary }> {
  const { signal } = plan;
  const limiter = new AdaptiveConcurrency(plan.concurrency, Date.now, (limit, cause, retryAfterMs) => reporter.limit(limit, cause, retryAfterMs));
  const results = new Array<BatchResult<O>>(inputs.length);
  const running: Promise<void>[] = [];
  const settle = (index: number, result: BatchResult<O>, cost: number): void => {
    results[index] = result;
    reporter.input(index, result.ok ? undefined : result.error, cost, limiter.limit);
  };
  for (let i = 0; i < inputs.length; i++) {
    if (!(await acquire(limiter, signal))) {
      for (let j = i; j < inputs.length; j++) settle(j, { ok: false, error: abortedInput(signal!) }, 0);
      break;
    }
    running.push(callOne(program, inputs[i] as I, plan, limiter).then(({ result, cost }) => settle(i, result, cost)));
    // An instant model settles every call in microtasks: give timers and I/O (a notebook's display) a turn.
    const turn = yieldNowAndThen();
    if (turn !== undefined) await turn;
  }
  await Promise.all(running);
  return { results, summary: { maxConcurrency: limiter.maxRunning, concurrencyDecreases: limiter.decreases } };
}

/** Takes a slot, unless `signal` aborts first (then false, and a slot granted later is given back). */
async function acquire(limiter: AdaptiveConcurrency, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal === undefined) {
    await limiter.acquire();
    return true;
  }
  if (signal.aborted) return false;
  let onAbort!: () => void;
  const aborted = new Promise<false>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  const slot = limiter.acquire().then(() => true as const);
  const got = await Promise.race([slot, aborted]);
  signal.removeEventListener("abort", onAbort);
  if (got) {
    // Both may be ready at once: an aborted signal wins, and the slot goes back.
    if (!signal.aborted) return true;
    limiter.release();
    return false;
  }
  void slot.then(() => limiter.release());
  return false;
}

/** One input's call holding a slot (taken by the caller, released here), run again after its LM gave up on 429. */
async function callOne<I, O>(
  program: Module<I, O>, input: I, plan: BatchPlan, limiter: AdaptiveConcurrency,
): Promise<{ result: BatchResult<O>; cost: number }> {
  const usage = emptyUsage();
  let held = true;
  try {
    for (let rerun = 0; ; rerun++) {
      try {
        const value = await trackUsage(usage, () => withRateListener(limiter.listener(), () => program.call(input, plan.call)));
        return { result: { ok: true, value }, cost: usage.cost };
      } catch (error) {
        if (!(error instanceof LMError && error.status === 429) || rerun >= MAX_RATE_LIMIT_RERUNS || plan.signal?.aborted === true) {
          return { result: { ok: false, error }, cost: usage.cost };
        }
        held = false;
        limiter.release();
        try {
          const wait = limiter.pauseRemainingMs() || Math.min(RERUN_BASE_MS * 2 ** rerun, RERUN_MAX_MS);
          await sleep(wait, undefined, plan.signal === undefined ? undefined : { signal: plan.signal });
        } catch {
          return { result: { ok: false, error: abortedInput(plan.signal!, AFTER_429) }, cost: usage.cost };
        }
        if (!(await acquire(limiter, plan.signal))) return { result: { ok: false, error: abortedInput(plan.signal!, AFTER_429) }, cost: usage.cost };
        held = true;
      }
    }
  } finally {
    if (held) limiter.release();
  }
}
