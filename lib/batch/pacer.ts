// The pacing gate: after a 429 that named its wait, the attempts to one provider endpoint and model
// go one per learned interval instead of all at once. Used by the adaptive concurrency (rate-limiter.ts).
import { performance } from "node:perf_hooks";
import type { PacedAttempt } from "../lm/rate-signal.js";

/** Weight of each new time between two admitted attempts in the running average. */
const SPACING_WEIGHT = 0.1;
/**
 * A time between admitted attempts counts as at most this multiple of the average, so a stall of the
 * process (a long GC pause, a busy machine) does not slow the gate for long afterwards.
 */
const SPACING_CLAMP = 1.5;
/**
 * The gate lets attempts go this much faster than the average time between admitted ones (a
 * fraction of it). Without it the gate could only slow down: paced at the rate it observed, it would
 * never see a faster one. With it the gate keeps pressing a little: when it is too fast the
 * provider refuses an attempt now and then, the refused call goes again at the time the provider
 * named, and the time between admitted attempts (which counts those round trips) grows until it
 * balances the probe.
 */
const PROBE = 0.03;
/**
 * After this many admitted attempts in a row the gate halves its interval with each further one,
 * so a limit that was lifted or a long `retry-after` that overstated the rate stops slowing the run
 * within a few calls. A refusal ends the run of successes and undoes the halving.
 */
const STREAK = 16;
/** Below this interval (ms) the gate opens again: the limit no longer binds. */
const MIN_INTERVAL_MS = 0.5;
/**
 * The longest interval a server's wait alone sets (ms). A long `retry-after` may be the end of a
 * window after which many requests are allowed at once, not the time per request; past the wait the
 * gate then starts at one attempt per second and the run of admissions opens it (`STREAK`).
 * Intervals learned from admitted attempts are not capped.
 */
const MAX_GUESS_MS = 1000;
/**
 * An attempt let go this many ms after the gate's time (nobody was waiting then, or its timer fired
 * late because the process was busy or stalled) says nothing about the provider's rate: its spacing
 * is left out of the average.
 */
const LATE_MS = 2;
/**
 * A timer that fires more than this many ms before the gate's time is set again for the rest: Node's
 * timers count whole milliseconds from a clock read at the start of the event-loop turn, so they can
 * fire up to a millisecond early, and an attempt that arrives before the provider's next slot is
 * refused.
 */
const EARLY_MS = 0.25;

/** The time and timers a gate runs on (tests pass a virtual clock). */
export interface PacerClock {
  /** Milliseconds, with fractions (`performance.now()`). */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_CLOCK: PacerClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** One released attempt: when it was let go, and the one let go before it. */
interface Ticket extends PacedAttempt {
  readonly at: number;
  readonly gate: Pacer;
  /** Whether the gate was pacing when it let the attempt go (not open). */
  readonly paced: boolean;
  /**
   * Let go well after the gate's time, because nobody was waiting then or the process was busy: the
   * time since the previous one is not the gate's, so it stays out of the average.
   */
  readonly late: boolean;
}

/**
 * A gate in front of every provider attempt to one endpoint and model, shared by all examples of an
 * evaluation, that lets attempts go one per interval once the provider has refused one (429).
 *
 * - Open until the first 429: attempts go at once.
 * - A 429 with `retry-after-ms` / `retry-after` says when the provider has room again. The gate
 *   holds every waiting attempt until then, lets the refused one go first, and the others one per
 *   interval after it, instead of all of them firing together when the wait ends (against a bucket
 *   of one token all but one would be refused again, each after a wasted round trip).
 * - The interval starts at the server's wait and then follows the observed rate: a running average
 *   of the time between admitted attempts, less a small probe (`PROBE`), so the gate settles just
 *   above the rate the provider grants, with an occasional 429 as the price of not drifting below it.
 * - A long run of admissions shrinks the interval fast (`STREAK`), and once it is negligible the
 *   gate opens again.
 */
export class Pacer {
  /** Attempts let go, and how many of them were answered 429. */
  released = 0;
  refused = 0;
  /** Average ms between admitted attempts; 0 while the gate is open. */
  private spacing = 0;
  /** Multiplies the interval after a long run of admissions (1 otherwise). */
  private boost = 1;
  private streak = 0;
  private lastAdmitted = -Infinity;
  private nextAt = 0;
  private last: Ticket | undefined;
  private readonly queue: ((ticket: Ticket) => void)[] = [];
  private timer: unknown;

  private readonly now: () => number;

  constructor(private readonly clock: PacerClock = REAL_CLOCK) {
    this.now = () => clock.now();
  }

  /** The gate that let `attempt` go, when a `Pacer` did. */
  static of(attempt: PacedAttempt | undefined): Pacer | undefined {
    const gate = (attempt as Partial<Ticket> | undefined)?.gate;
    return gate instanceof Pacer ? gate : undefined;
  }

  /** Whether `attempt` was let go while its gate was pacing (rather than open). */
  static paced(attempt: PacedAttempt | undefined): boolean {
    return (attempt as Partial<Ticket> | undefined)?.paced === true;
  }

  /** Whether the gate paces attempts (it has seen a 429 with a wait and not opened since). */
  get pacing(): boolean {
    return this.spacing > 0;
  }

  /** The time the gate leaves between two attempts (ms; 0 while open). */
  get interval(): number {
    return this.spacing * (1 - PROBE) * this.boost;
  }

  /** Milliseconds until the gate lets the next attempt go (0 when it would go now). */
  delayMs(): number {
    return this.pacing ? Math.max(0, this.nextAt - this.now()) : 0;
  }

  /** Attempts waiting at the gate. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Resolves when an attempt may be sent: at once while the gate is open, or when nobody waits and
   * the interval since the last one has passed. `retry`: the call's previous attempt was refused;
   * it goes before the others.
   */
  ready(retry = false): PacedAttempt | Promise<PacedAttempt> {
    if (!this.pacing || (this.queue.length === 0 && this.now() >= this.nextAt)) return this.release();
    return new Promise<PacedAttempt>((resolve) => {
      if (retry) this.queue.unshift(resolve);
      else this.queue.push(resolve);
      this.arm();
    });
  }

  /** The attempt was answered 429; `retryAfterMs` is the server's wait, when it named one. */
  limited(attempt: PacedAttempt, retryAfterMs: number | undefined): void {
    const ticket = attempt as Ticket;
    this.refused++;
    this.streak = 0;
    this.boost = 1;
    // Without a time the LM backs off on its own, then comes back to the gate.
    if (retryAfterMs === undefined) return;
    // Until the gate has seen a rate, the wait for the next slot is the best guess at the interval,
    // and no later interval is shorter than a wait the server named.
    this.spacing = Math.max(this.spacing, Math.min(retryAfterMs, MAX_GUESS_MS), MIN_INTERVAL_MS);
    const freeAt = this.now() + retryAfterMs;
    // The last attempt let go was refused, so it took no slot: the next goes when the server said.
    // An older attempt's word may be about a slot that a later attempt has taken since.
    this.nextAt = ticket === this.last ? freeAt : Math.max(this.nextAt, freeAt);
    this.rearm();
  }

  /** The attempt succeeded. */
  succeeded(attempt: PacedAttempt): void {
    if (!this.pacing) return;
    const ticket = attempt as Ticket;
    if (ticket.at > this.lastAdmitted) {
      if (ticket.paced && !ticket.late && this.lastAdmitted > -Infinity) {
        this.spacing += SPACING_WEIGHT * (Math.min(ticket.at - this.lastAdmitted, SPACING_CLAMP * this.spacing) - this.spacing);
      }
      this.lastAdmitted = ticket.at;
    }
    if (++this.streak > STREAK) this.boost /= 2;
    if (this.interval < MIN_INTERVAL_MS) this.open();
  }

  private release(): Ticket {
    const at = this.now();
    const paced = this.pacing;
    const late = paced && at > this.nextAt + LATE_MS;
    const ticket: Ticket = { at, gate: this, paced, late };
    this.last = ticket;
    this.released++;
    if (paced) this.nextAt = at + this.interval;
    return ticket;
  }

  private rearm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.arm();
  }

  /** Sets the timer for the next release, if anyone waits and none is set. */
  private arm(): void {
    if (this.timer !== undefined || this.queue.length === 0) return;
    const wait = this.nextAt - this.now();
    if (!this.pacing || wait <= 0) {
      this.queue.shift()!(this.release());
      this.arm();
      return;
    }
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (this.now() < this.nextAt - EARLY_MS) {
        this.arm();
        return;
      }
      this.queue.shift()?.(this.release());
      this.arm();
    }, wait);
  }

  /** Stops pacing and lets every waiting attempt go. */
  private open(): void {
    this.spacing = 0;
    this.boost = 1;
    this.streak = 0;
    this.lastAdmitted = -Infinity;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0) this.queue.shift()!(this.release());
  }
}
