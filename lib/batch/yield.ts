// Giving the event loop a turn while a loop starts many calls (an evaluation, `program.batch`), so
// timers, I/O and a notebook's display keep running when the model answers instantly.
/** Longest stretch of synchronous work (ms) an evaluation runs before giving the event loop a turn. */
const YIELD_EVERY_MS = 25;

/** When a loop last gave the event loop a turn; shared, so back-to-back short evaluations (an optimizer's) count together. */
let lastYield = performance.now();

/**
 * A promise that gives the event loop a turn (timers, I/O, a notebook's display messages) when the
 * last turn given here was more than 25 ms ago; otherwise undefined, so the caller need not await.
 * Cheap enough to call per example: a clock read, and one `setImmediate` per 25 ms.
 */
export function yieldNowAndThen(): Promise<void> | undefined {
  if (performance.now() - lastYield < YIELD_EVERY_MS) return undefined;
  return new Promise<void>((resolve) => setImmediate(() => {
    lastYield = performance.now();
    resolve();
  }));
}
