/**
 * What a stream hands out: the `StreamEvent` types, `DeepPartial`, and `PredictionStream`, the
 * async iterable of events with the final `result`. The events wait in a queue for whoever
 * iterates; consecutive `partial` events of one predictor are merged (only the newest is kept), so a
 * stream that nobody iterates holds a few events per field, never one per chunk. A consumer waiting
 * for the next event gets a partial once per turn of the event loop (the newest state of the chunks
 * that arrived in that turn), and every other event at once.
 */
import type { Temporal } from "../signature/temporal.js";

/** `T` with every property optional, all the way down: what a reply holds before it ends. */
export type DeepPartial<T> = T extends string | number | boolean | bigint | null | undefined | Date | Temporal.PlainDate | Temporal.ZonedDateTime
  ? T
  : T extends readonly (infer E)[]
    ? DeepPartial<E>[]
    : T extends object
      ? { [K in keyof T]?: DeepPartial<T[K]> }
      : T;

/**
 * One event of a stream. `path` names the predictor (or agent) inside the streamed module, as
 * `namedPredictors()` names it (`"step"`, `"agent.extract"`); `""` is the streamed predictor itself.
 * - `partial`: the outputs read so far (finished fields converted, strings as they grow);
 * - `field`: one output field finished, converted and validated exactly as `call()` converts it;
 * - `step`: an agent's completed step (a `ReActStep`, a `CodeActStep`, a `ProgramAttempt`).
 */
export type StreamEvent<P = Record<string, unknown>> =
  | { type: "partial"; partial: DeepPartial<P>; path: string }
  | { type: "field"; name: string; value: unknown; path: string }
  | { type: "step"; step: unknown; path: string };

/** A queued event; a partial is built when it is read (or when a later event is queued behind it). */
type Queued = StreamEvent<any> | { type: "partial"; path: string; build: () => unknown };

/**
 * The events of a running prediction, as an async iterable, and `result`: the same `Prediction`
 * that `call()` returns. Iterating is optional. Iterate once: events are handed out once. Leaving a
 * `for await` loop early does not stop the prediction (use the `signal` option for that).
 */
export class PredictionStream<R = unknown, P = Record<string, unknown>> implements AsyncIterable<StreamEvent<P>> {
  /** The prediction, once the run ends; rejects with what the run threw (`OutputError`, `AbortError`...). */
  readonly result: Promise<R>;
  private queue: Queued[] = [];
  private head = 0;
  /** The consumer waiting for the next event (its `next()` found the queue empty). */
  private waiter: { resolve: (r: IteratorResult<StreamEvent<any>>) => void; reject: (error: unknown) => void } | undefined;
  private done = false;
  /** A hand-over of a queued partial is scheduled for the end of this turn (see `push`). */
  private flushing = false;
  private failure: { error: unknown } | undefined;

  /** @internal Built by `stream()`; `start` runs the prediction, handing events to `push`. */
  constructor(start: (push: (event: Queued) => void) => Promise<R>) {
    this.result = start((event) => this.push(event)).then(
      (value) => { this.end(undefined); return value; },
      (error: unknown) => { this.end({ error }); throw error; },
    );
    // A caller that only iterates (and sees the error there) must not get an unhandled rejection.
    this.result.catch(() => undefined);
  }

  private push(event: Queued): void {
    if (this.done) return;
    const waiter = this.waiter;
    if (waiter !== undefined && !isLazy(event) && this.head === this.queue.length) {
      // The queue is empty and someone waits: hand the event over directly.
      this.waiter = undefined;
      waiter.resolve({ value: materialize(event), done: false });
      return;
    }
    this.enqueue(event);
    if (waiter === undefined) return;
    // A partial for a waiting consumer is handed over at the end of this turn of the event loop, so
    // the chunks that arrive in one turn (one network read) make one partial, not one each; any
    // other event is handed over at once, the partial queued before it first.
    if (!isLazy(event)) this.flush();
    else if (!this.flushing) {
      this.flushing = true;
      setImmediate(this.flushLater);
    }
  }

  /** Hands the next queued event to the waiting consumer, if both are there. */
  private flush(): void {
    const waiter = this.waiter;
    if (waiter === undefined || this.head === this.queue.length) return;
    this.waiter = undefined;
    waiter.resolve({ value: this.take(), done: false });
  }

  private readonly flushLater = (): void => {
    this.flushing = false;
    this.flush();
  };

  private enqueue(event: Queued): void {
    const last = this.queue[this.queue.length - 1];
    if (this.head < this.queue.length && last !== undefined && isLazy(last)) {
      if (event.type === "partial" && last.path === event.path) {
        this.queue[this.queue.length - 1] = event; // the newer state supersedes it
        return;
      }
      // Fixed now, so it does not show what happened after the events queued behind it.
      this.queue[this.queue.length - 1] = materialize(last);
    }
    this.queue.push(event);
  }

  private end(failure: { error: unknown } | undefined): void {
    this.done = true;
    this.failure = failure;
    // Events still queued go first; `next()` hands out the end after them.
    this.flush();
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter === undefined) return;
    if (failure === undefined) waiter.resolve({ value: undefined, done: true });
    else waiter.reject(failure.error);
  }

  /**
   * The events as they come; ends when the prediction ends, throwing its error if it failed.
   * Written by hand rather than as an async generator: one promise per event (an event queued is
   * handed out resolved, one for a waiting consumer resolves its promise directly), which keeps the
   * cost per event low when events come one per chunk.
   */
  [Symbol.asyncIterator](): AsyncIterator<StreamEvent<P>> {
    const next = (): Promise<IteratorResult<StreamEvent<P>>> => {
      if (this.head < this.queue.length) return Promise.resolve({ value: this.take(), done: false });
      if (this.done) return this.failure === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(this.failure.error);
      return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
    };
    return { next, return: () => Promise.resolve({ value: undefined, done: true }) };
  }

  private take(): StreamEvent<P> {
    const event = this.queue[this.head]!;
    this.queue[this.head++] = undefined as unknown as Queued;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    return materialize(event) as StreamEvent<P>;
  }
}

function isLazy(event: Queued): event is { type: "partial"; path: string; build: () => unknown } {
  return event.type === "partial" && "build" in event;
}

function materialize(event: Queued): StreamEvent<any> {
  return isLazy(event) ? { type: "partial", partial: event.build(), path: event.path } : event;
}

/** @internal What the predictors hand to a running stream. */
export type QueuedEvent = Queued;
