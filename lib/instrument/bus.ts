/** The event bus: every part of typelm reports what it does here; subscribers decide what to show. */
import { currentSpan, childOf, runInChildSpan } from "./context.js";
import { redact } from "./redact.js";

/** The names of the events typelm emits (any other string is allowed too). */
export type EventName =
  | "lm.request.start" | "lm.request.end" | "lm.chat.start" | "lm.chat.end" | "lm.tokens.used"
  | "prediction.start" | "prediction.end" | "module.forward.start" | "module.forward.end"
  | "react.iteration" | "codeact.iteration" | "programofthought.attempt" | "tool.call.start" | "tool.call"
  | "sandbox.run.start" | "sandbox.run.end"
  | "evaluation.start" | "evaluation.example" | "evaluation.end" | "evaluation.warning" | "optimizer.start" | "optimizer.trial" | "optimizer.warning" | "optimizer.end"
  | "traces.sampled" | "traces.dropped" | "traces.record.error"
  | (string & {});

/** One event as listeners get it: its name, its redacted payload (with `traceId`, `spanId`, `parentSpanId`) and when it was emitted. */
export interface TypelmEvent<P = Record<string, unknown>> {
  name: string;
  payload: P;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** A function `Instrumentation.subscribe` calls with each matching event. */
export type Listener = (event: TypelmEvent<any>) => void;

interface Subscription {
  match: string | RegExp;
  listener: Listener;
}

const subscriptions = new Set<Subscription>();
/** What `flush` waits for: exporters register how to send what they hold. */
const flushers = new Set<() => Promise<void>>();
/** Errors thrown by listeners, kept (bounded) so they are not lost silently. */
const listenerFailures: { event: string; error: unknown }[] = [];

function matches(match: string | RegExp, name: string): boolean {
  if (typeof match === "string") return match === name;
  match.lastIndex = 0;
  return match.test(name);
}

/** The event bus: `subscribe` to events by name or pattern, `emit` them, and `flush` what exporters hold. */
export const Instrumentation = {
  /** Calls `listener` for every event whose name equals `match` or matches the pattern. Returns an unsubscribe function. */
  subscribe(match: string | RegExp, listener: Listener): () => void {
    const sub: Subscription = { match, listener };
    subscriptions.add(sub);
    return () => {
      subscriptions.delete(sub);
    };
  },

  /**
   * Publishes an event. The payload is redacted once, here, so every listener gets a copy without
   * secrets, and labelled with the current span's `traceId`, `spanId` and `parentSpanId` (an event
   * outside any span gets a root span of its own). A listener that throws never breaks the caller.
   */
  emit(name: EventName, payload: Record<string, unknown> = {}): void {
    if (subscriptions.size === 0) return;
    const ids = currentSpan() ?? childOf(undefined);
    const clean = redact(payload) as Record<string, unknown>;
    const event: TypelmEvent = { name, payload: { ...clean, traceId: ids.traceId, spanId: ids.spanId, parentSpanId: ids.parentSpanId }, timestamp: Date.now() };
    for (const sub of subscriptions) {
      if (!matches(sub.match, name)) continue;
      try {
        sub.listener(event);
      } catch (error) {
        if (listenerFailures.length >= 100) listenerFailures.shift();
        listenerFailures.push({ event: name, error });
      }
    }
  },

  /** Sends what exporters hold (OTLP batches). Resolves, never rejects, within the exporters' time bound. */
  async flush(): Promise<void> {
    await Promise.allSettled([...flushers].map((f) => f()));
  },

  /** Listener errors caught so far (most recent last, at most 100). */
  listenerFailures(): readonly { event: string; error: unknown }[] {
    return listenerFailures;
  },

  /** Removes every subscription (for tests). */
  reset(): void {
    subscriptions.clear();
    listenerFailures.length = 0;
  },
};

/** Whether any listener is subscribed (without one, events are not built and spans are not tracked). */
export function hasListeners(): boolean {
  return subscriptions.size > 0;
}

/** Lets an exporter take part in `Instrumentation.flush()`; returns a function that withdraws it. */
export function registerFlusher(flush: () => Promise<void>): () => void {
  flushers.add(flush);
  return () => {
    flushers.delete(flush);
  };
}

/**
 * Runs `fn` as a new span nested in the caller's: every event emitted inside it, however deep in
 * awaited work, carries this span's ids. With no listener there is nothing to label, so `fn` runs as is.
 */
export function inSpan<T>(fn: () => Promise<T>): Promise<T> {
  return subscriptions.size === 0 ? fn() : runInChildSpan(fn);
}

/**
 * Runs `fn` as a span reported by `<name>.start` and `<name>.end` events (`ok`, `durationMs`, and
 * `error` on failure), for work that has no events of its own (sandbox runs). `outcome` adds fields
 * to the end event from the result, e.g. `ok: false` for a run that reports its failure as a value.
 */
export function spanned<T>(
  name: string, payload: Record<string, unknown>, fn: () => Promise<T>, outcome?: (result: T) => Record<string, unknown>,
): Promise<T> {
  return inSpan(async () => {
    const started = performance.now();
    Instrumentation.emit(`${name}.start`, payload);
    try {
      const result = await fn();
      Instrumentation.emit(`${name}.end`, { ...payload, ok: true, durationMs: performance.now() - started, ...outcome?.(result) });
      return result;
    } catch (error) {
      Instrumentation.emit(`${name}.end`, { ...payload, ok: false, durationMs: performance.now() - started, error: describeError(error) });
      throw error;
    }
  });
}

/** `Name: message` of a thrown value, as events report it. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
