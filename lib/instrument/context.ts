/**
 * Trace context: which span the running code is in, carried through async work by
 * AsyncLocalStorage so many calls in flight at once never adopt each other's parent. Ids use the
 * OpenTelemetry formats (32 and 16 lowercase hex digits) so they can be matched against exported spans.
 */
import { asyncLocalStorage, nodeCrypto } from "../load-sync.js";

export interface SpanIds {
  traceId: string;
  spanId: string;
  /** The enclosing span, or null at the root of a trace. */
  parentSpanId: string | null;
}

const storage = asyncLocalStorage<SpanIds>();

// One pooled buffer of randomness: a span id costs a slice, not a system call.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    nodeCrypto().randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString("hex", poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  // All-zero ids are invalid in OpenTelemetry; the chance is 2^-64, but the fix is free.
  return /^0+$/.test(hex) ? randomHex(bytes) : hex;
}

/** The span the caller is running in, if any. */
export function currentSpan(): SpanIds | undefined {
  return storage.getStore();
}

/** A new span id under the current span (or a new trace at the root). */
export function childOf(parent: SpanIds | undefined): SpanIds {
  return {
    traceId: parent?.traceId ?? randomHex(16),
    spanId: randomHex(8),
    parentSpanId: parent?.spanId ?? null,
  };
}

/** Runs `fn` as a new span nested in the caller's (see `inSpan` in bus.ts, which callers use). */
export function runInChildSpan<T>(fn: () => T): T {
  return storage.run(childOf(storage.getStore()), fn);
}
