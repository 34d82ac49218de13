// What `program.batch` tells the world as it goes: the `batch.*` events (a notebook's live display,
// loggers and exporters follow them) and the terminal progress bar, the one evaluations draw.
import { randomUUID } from "node:crypto";
import { describeError, Instrumentation } from "../instrument/bus.js";
import type { BatchProgress } from "./transport.js";
import { terminalBar, type TerminalBar } from "./terminal-bar.js";

/** The running totals of one `program.batch`, reported after each input. */
export interface BatchTally {
  done: number;
  failures: number;
  /** USD spent so far (calls whose price is unknown add nothing). */
  cost: number;
}

/** Reports one `program.batch`: start, each input, the provider batch's status, the limit's changes, the end. */
export class BatchReporter {
  /** Tells this batch's events apart from another running at the same time. */
  readonly id = randomUUID();
  private readonly bar: TerminalBar | null;
  private readonly started = performance.now();
  private batchText = "";
  readonly tally: BatchTally = { done: 0, failures: 0, cost: 0 };

  constructor(private readonly name: string, private readonly total: number, progress: boolean, info: { concurrency: number; via: string }) {
    Instrumentation.emit("batch.start", { id: this.id, name, total, ...info, progress });
    this.bar = terminalBar(progress, total, `${name} {bar} {value}/{total} | failed {failures} | $ {cost}{batch} | {eta_formatted} left`, {
      failures: 0, cost: "0.0000", batch: "",
    });
  }

  /** One input's outcome stands; `cost` is what its calls cost. */
  input(index: number, error: unknown, cost: number, concurrency: number): void {
    const t = this.tally;
    t.done++;
    if (error !== undefined) t.failures++;
    t.cost += cost;
    Instrumentation.emit("batch.input", {
      id: this.id, name: this.name, index, ok: error === undefined, ...(error === undefined ? {} : { error: describeError(error) }),
      done: t.done, total: this.total, failures: t.failures, cost: t.cost, concurrency,
    });
    this.draw();
  }

  /** A provider batch's status while the inputs wait on it. */
  provider(p: BatchProgress): void {
    Instrumentation.emit("batch.provider", { id: this.id, name: this.name, ...p });
    this.batchText = ` | batch round ${p.round}: ${p.status} ${p.counts.completed}/${p.counts.total}, ${p.counts.failed} failed`;
    this.draw();
  }

  /** The live calls' concurrency limit changed (a 429 lowered it, or successes raised it again). */
  limit(limit: number, cause: "decrease" | "increase", retryAfterMs: number | undefined): void {
    Instrumentation.emit("batch.concurrency", { id: this.id, name: this.name, limit, cause, retryAfterMs });
  }

  /** The end: every input has its result. `extra` says how the concurrency went and whether the signal aborted. */
  end(extra: { aborted: boolean; maxConcurrency?: number; concurrencyDecreases?: number; error?: string }): void {
    this.bar?.stop();
    const t = this.tally;
    Instrumentation.emit("batch.end", {
      id: this.id, name: this.name, ok: true, total: this.total, done: t.done, failures: t.failures, cost: t.cost,
      durationMs: performance.now() - this.started, ...extra,
    });
  }

  private draw(): void {
    this.bar?.update(this.tally.done, { failures: this.tally.failures, cost: this.tally.cost.toFixed(4), batch: this.batchText });
  }
}
