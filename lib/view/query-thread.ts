// The main side of lib/view/query-worker.ts: runs the viewer's slow reads of a lab store file on a
// worker thread, one at a time in the order asked, so the server answers other pages meanwhile. A read
// whose client went away (its AbortSignal) is dropped from the queue or stopped where it is; one that
// runs past its time is stopped and fails with `QueryTimeout`.
import { Worker } from "node:worker_threads";
import { workerScript } from "./intervals.js";
import type { QueryAnswer, QueryJob, QueryWorkerData } from "./query-worker.js";
import { QueryTimeout } from "./data/source.js";

interface Waiting {
  job: QueryJob;
  done: (rows: unknown[]) => void;
  fail: (error: Error) => void;
  /** Ends the job's timer and abort listener. */
  settle: () => void;
}

/** One worker thread with its own read-only connection to the file at `path`, started at the first read. */
export class QueryThread {
  #worker: Worker | undefined;
  readonly #stop = new SharedArrayBuffer(4);
  readonly #queue: Waiting[] = [];
  #running: Waiting | undefined;
  #next = 1;

  constructor(readonly path: string, readonly timeoutMs: number) {}

  /**
   * The rows of `sql` (the first only, `first`), read on the worker. Rejects with `QueryTimeout` past
   * `timeoutMs` (the thread's unless given) from now, waiting included, and with the signal's reason
   * once it is aborted.
   */
  read<T>(sql: string, params: Record<string, unknown>, first: boolean, signal?: AbortSignal, timeoutMs = this.timeoutMs): Promise<T[]> {
    signal?.throwIfAborted();
    const job: QueryJob = { id: this.#next++, sql, params, first };
    return new Promise<T[]>((done, fail) => {
      const stop = (error: Error) => {
        const queued = this.#queue.findIndex((w) => w.job.id === job.id);
        if (queued >= 0) this.#queue.splice(queued, 1);
        // Running: the worker's query sees the flag on its next row and ends.
        else if (this.#running?.job.id === job.id) Atomics.store(new Int32Array(this.#stop), 0, job.id);
        waiting.settle();
        fail(error);
      };
      const timer = setTimeout(() => stop(new QueryTimeout(timeoutMs)), timeoutMs);
      const aborted = () => stop(signal!.reason instanceof Error ? signal!.reason : new Error("the request was abandoned"));
      signal?.addEventListener("abort", aborted, { once: true });
      const waiting: Waiting = {
        job, done: (rows) => { waiting.settle(); done(rows as T[]); }, fail: (error) => { waiting.settle(); fail(error); },
        settle: () => { clearTimeout(timer); signal?.removeEventListener("abort", aborted); waiting.done = () => undefined; waiting.fail = () => undefined; },
      };
      this.#queue.push(waiting);
      this.#pump();
    });
  }

  /**
   * Starts the worker now, before any read (the viewer does at its start): starting it takes a few
   * hundred milliseconds on a busy machine, which the first slow read, a matrix's say, then does not wait for.
   */
  start(): void {
    this.#start();
  }

  #pump(): void {
    if (this.#running !== undefined) return;
    const next = this.#queue.shift();
    if (next === undefined) return;
    this.#running = next;
    this.#start().postMessage(next.job);
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const script = workerScript("query-worker");
    const data: QueryWorkerData = { path: this.path, stop: this.#stop };
    const worker = new Worker(script.file, { eval: script.eval, workerData: data });
    worker.on("message", (answer: QueryAnswer) => {
      const running = this.#running;
      this.#running = undefined;
      if (running !== undefined && running.job.id === answer.id) {
        if ("rows" in answer) running.done(answer.rows);
        else running.fail(Object.assign(new Error(answer.error), { code: answer.code }));
      }
      this.#pump();
    });
    worker.on("error", (error) => {
      this.#running?.fail(error);
    });
    worker.on("exit", () => {
      this.#worker = undefined;
      const running = this.#running;
      this.#running = undefined;
      running?.fail(new Error("the viewer's query thread stopped"));
      this.#pump();
    });
    // An idle worker does not keep the process alive.
    worker.unref();
    return (this.#worker = worker);
  }

  /** Ends the worker; reads still queued or running fail. */
  async close(): Promise<void> {
    for (const w of this.#queue.splice(0)) w.fail(new Error("the viewer is closing"));
    await this.#worker?.terminate();
  }
}
