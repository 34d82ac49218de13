/** The event bus: every part of typelm reports what it does here; subscribers decide what to show. */

export type EventName =
  | "lm.request.start" | "lm.request.end" | "lm.chat.start" | "lm.chat.end" | "lm.tokens.used"
  | "prediction.start" | "prediction.end" | "module.forward.start" | "module.forward.end"
  | "react.iteration" | "codeact.iteration" | "programofthought.attempt" | "tool.call"
  | (string & {});

export interface TypelmEvent<P = Record<string, unknown>> {
  name: string;
  payload: P;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

export type Listener = (event: TypelmEvent<any>) => void;

interface Subscription {
  match: string | RegExp;
  listener: Listener;
}

const subscriptions = new Set<Subscription>();
/** Errors thrown by listeners, kept (bounded) so they are not lost silently. */
const listenerFailures: { event: string; error: unknown }[] = [];

function matches(match: string | RegExp, name: string): boolean {
  if (typeof match === "string") return match === name;
  match.lastIndex = 0;
  return match.test(name);
}

export const Instrumentation = {
  /** Calls `listener` for every event whose name equals `match` or matches the pattern. Returns an unsubscribe function. */
  subscribe(match: string | RegExp, listener: Listener): () => void {
    const sub: Subscription = { match, listener };
    subscriptions.add(sub);
    return () => {
      subscriptions.delete(sub);
    };
  },

  /** Publishes an event. A listener that throws never breaks the caller. */
  emit(name: EventName, payload: Record<string, unknown> = {}): void {
    if (subscriptions.size === 0) return;
    const event: TypelmEvent = { name, payload, timestamp: Date.now() };
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
