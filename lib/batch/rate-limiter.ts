// Adaptive concurrency for many calls at once (an evaluation's examples, `program.batch`'s inputs):
// how many run together, lowered on rate limiting (429) and raised again as calls succeed.
import { setTimeout as sleep } from "node:timers/promises";
import type { AttemptTarget, RateListener } from "../lm/rate-signal.js";
import { Pacer } from "./pacer.js";

/** Lowest concurrency the limiter falls to: one call at a time always makes progress. */
const MIN_LIMIT = 1;

/**
 * Bounds how many examples an evaluation runs at once, adapts the bound to the provider's rate
 * limit (AIMD, as TCP does for congestion), and paces the provider attempts of all its examples:
 * - a 429 halves the limit (multiplicative decrease), at most once per round: a 429 from an attempt
 *   started before the last decrease says nothing new, so a burst of 429s from calls that were already
 *   in flight together counts once;
 * - a 429 with `retry-after` / `retry-after-ms` also holds back every new example until that time;
 * - each successful call raises the limit by 1/limit, so one round of successes adds one slot
 *   (additive increase), up to the configured concurrency;
 * - every attempt to a provider endpoint and model passes one shared gate (`Pacer`,
 *   lib/batch/pacer.ts): after a 429 that named its wait, the gate holds all attempts until the
 *   server's time and then lets them go one per interval, learned from the rate of admitted
 *   attempts. A 429 of an attempt the gate paced lowers neither the limit nor pauses new starts: it
 *   is the gate probing the rate, and the gate itself holds the calls back.
 * Examples already running when the limit falls finish; only new starts wait. The LM's own retries
 * (lib/lm/retry.ts) go through the gate inside a running example; the evaluation retries an
 * example whose LM gave up on 429 after `pauseRemainingMs()`.
 */
export class AdaptiveConcurrency {
  readonly max: number;
  private current: number;
  private running = 0;
  private pausedUntil = 0;
  /** Bumped at each decrease; an attempt's round is the generation when it started. */
  private generation = 0;
  private readonly waiters: (() => void)[] = [];
  private wakeTimer: ReturnType<typeof setTimeout> | undefined;
  /** Highest number of examples running at once so far. */
  maxRunning = 0;
  /** How many times the limit was lowered. */
  decreases = 0;
  /** One pacing gate per provider endpoint and model (lib/batch/pacer.ts). */
  readonly pacers = new Map<string, Pacer>();

  /**
   * `onLimit` hears each change of the whole-number limit: why, and the server's wait for a decrease.
   * `now` is the clock (tests pass their own).
   */
  constructor(
    max: number,
    private readonly now: () => number = Date.now,
    private readonly onLimit?: (limit: number, cause: "decrease" | "increase", retryAfterMs: number | undefined) => void,
  ) {
    this.max = max;
    this.current = max;
  }

  /** The number of examples allowed to run at once right now. */
  get limit(): number {
    return Math.max(MIN_LIMIT, Math.floor(this.current));
  }

  get inFlight(): number {
    return this.running;
  }

  /** Milliseconds until new starts are allowed again (0 when not paused). */
  pauseRemainingMs(): number {
    return Math.max(0, this.pausedUntil - this.now());
  }

  /** Waits for a free slot (and the end of any `retry-after` pause), then takes it. */
  async acquire(): Promise<void> {
    for (;;) {
      const pause = this.pauseRemainingMs();
      if (pause > 0) await sleep(pause);
      else if (this.running < this.limit) {
        this.running++;
        if (this.running > this.maxRunning) this.maxRunning = this.running;
        return;
      } else await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  release(): void {
    this.running--;
    this.wake();
  }

  /** A listener for one example's calls (see `withRateListener`). */
  listener(): RateListener {
    let round = this.generation;
    return {
      pace: (target, retry) => this.pacer(target).ready(retry),
      limited: (retryAfterMs, attempt) => {
        Pacer.of(attempt)?.limited(attempt!, retryAfterMs);
        // A refusal of an attempt the gate paced is its probe finding the rate, not congestion:
        // the gate already holds the calls until the server's time.
        if (Pacer.paced(attempt)) return;
        if (round === this.generation) {
          const before = this.limit;
          this.current = Math.max(MIN_LIMIT, this.current / 2);
          this.generation++;
          this.decreases++;
          if (this.limit !== before) this.onLimit?.(this.limit, "decrease", retryAfterMs);
        }
        // The next attempt of this example starts after the decrease, so its 429 would be news.
        round = this.generation;
        if (retryAfterMs !== undefined && retryAfterMs > 0) {
          this.pausedUntil = Math.max(this.pausedUntil, this.now() + retryAfterMs);
        }
      },
      succeeded: (attempt) => {
        Pacer.of(attempt)?.succeeded(attempt!);
        round = this.generation;
        if (this.current < this.max) {
          const before = this.limit;
          this.current = Math.min(this.max, this.current + 1 / this.current);
          if (this.limit !== before) this.onLimit?.(this.limit, "increase", undefined);
          this.wake();
        }
      },
    };
  }

  /** The pacing gate for calls to `target`. */
  pacer(target: AttemptTarget): Pacer {
    const key = `${target.provider}\u0000${target.endpoint ?? ""}\u0000${target.model}`;
    let pacer = this.pacers.get(key);
    if (pacer === undefined) this.pacers.set(key, (pacer = new Pacer()));
    return pacer;
  }

  private wake(): void {
    if (this.pauseRemainingMs() > 0) {
      // Waiters re-check the pause themselves once woken; wake them when it ends.
      if (this.wakeTimer === undefined) {
        this.wakeTimer = setTimeout(() => {
          this.wakeTimer = undefined;
          this.wake();
        }, this.pauseRemainingMs());
      }
      return;
    }
    let free = this.limit - this.running;
    while (free-- > 0 && this.waiters.length > 0) this.waiters.shift()!();
  }
}
