// A mean metric's BCa bootstrap interval over a large run takes seconds (2,000 resamples of every
// score); the viewer has it computed on a worker thread so that its server goes on answering pages
// meanwhile. One worker, started at the first interval and ended with the viewer; jobs run in turn.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Interval } from "../evaluate/stats.js";
import type { IntervalAnswer, IntervalJob } from "./interval-worker.js";

/** Where the worker's code is: beside this module (tsc's build), or the bundle's own file (dist/pkg). */
function workerScript(): { file: string | URL; eval: boolean } {
  const here = import.meta.url;
  if (here.endsWith(".ts")) {
    // Run from the TypeScript sources (the tests): tsx compiles the worker's module as it loads.
    const tsx = pathToFileURL(createRequire(here).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href;
    const worker = new URL("./interval-worker.ts", here).href;
    return { file: `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(worker)}); });`, eval: true };
  }
  for (const name of ["./interval-worker.js", "./view-interval-worker.js", "../view-interval-worker.js"]) {
    const url = new URL(name, here);
    if (existsSync(fileURLToPath(url))) return { file: url, eval: false };
  }
  throw new Error(`the viewer's interval worker is missing beside ${fileURLToPath(here)} (view-interval-worker.js): rebuild typelm (npm run build)`);
}

/** The worker thread that computes the viewer's bootstrap intervals. */
export class IntervalWorker {
  #worker: Worker | undefined;
  #next = 1;
  readonly #waiting = new Map<number, { done: (ci: Interval) => void; fail: (error: Error) => void }>();

  /** The BCa interval of the mean of `scores`, computed on the worker; `scores` is handed over (emptied here). */
  meanInterval(scores: Float64Array): Promise<Interval> {
    const worker = this.#start();
    const id = this.#next++;
    return new Promise<Interval>((done, fail) => {
      this.#waiting.set(id, { done, fail });
      worker.postMessage({ id, scores } satisfies IntervalJob, [scores.buffer as ArrayBuffer]);
    });
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const script = workerScript();
    const worker = new Worker(script.file, { eval: script.eval });
    // An idle worker does not keep the process alive; one with jobs does (see meanInterval's promises).
    worker.unref();
    worker.on("message", (answer: IntervalAnswer) => {
      const waiting = this.#waiting.get(answer.id);
      if (waiting === undefined) return;
      this.#waiting.delete(answer.id);
      if ("ci" in answer) waiting.done(answer.ci);
      else waiting.fail(new Error(`the bootstrap interval failed: ${answer.error}`));
    });
    const stop = (error: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const w of this.#waiting.values()) w.fail(error);
      this.#waiting.clear();
    };
    worker.on("error", (error) => stop(error));
    worker.on("exit", (code) => stop(new Error(`the interval worker stopped (exit code ${code})`)));
    this.#worker = worker;
    return worker;
  }

  /** Ends the worker; intervals still being computed fail. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }
}
