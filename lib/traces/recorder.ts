/**
 * The writer of production traces, loaded at the first sampled call: drains the queue the caller's
 * path fills (trace-call.ts) in batches, one batch at a time, into a sink (the configured lab by
 * default). Nothing here can fail or slow a call: a batch that fails is counted and reported as
 * `traces.record.error`, and while a slow batch is written new traces wait in the bounded queue.
 */
import { describeError, Instrumentation } from "../instrument/bus.js";
import type { TraceQueue, TraceRecord } from "../trace-call.js";
import { labSink } from "./lab-sink.js";

/** Where traces are written: the lab by default; tests put their own (`setTraceSink`). */
export interface TraceSink {
  /** Writes a batch; a rejection (or a throw) fails the whole batch. */
  write(batch: readonly TraceRecord[]): Promise<void> | void;
}

/** The most traces written in one batch. */
export const BATCH_SIZE = 500;

let sink: TraceSink | undefined;
let writing: Promise<void> | null = null;

/** Replaces the sink traces are written to (`undefined`: the configured lab, opened at the next batch). */
export function setTraceSink(next: TraceSink | undefined): void {
  sink = next;
}

/** Writes what is in `queue`, batch after batch, until it is empty; resolves then (never rejects). */
export function drain(queue: TraceQueue): Promise<void> {
  if (writing !== null) return writing.then(() => (queue.items.length > 0 ? drain(queue) : undefined));
  writing = (async () => {
    while (queue.items.length > 0) {
      const batch = queue.items.splice(0, BATCH_SIZE);
      try {
        await (sink ??= labSink()).write(batch);
        queue.written += batch.length;
      } catch (error) {
        queue.failed += batch.length;
        Instrumentation.emit("traces.record.error", { error: describeError(error), traces: batch.length, failed: queue.failed });
      }
    }
  })().finally(() => {
    writing = null;
  });
  return writing;
}
