// A mean metric's BCa bootstrap interval over a large run takes seconds (2,000 resamples of every
// score), and so does a comparison of two such runs; the viewer has them computed on a worker thread
// so that its server goes on answering pages meanwhile. One worker, started at the first job and
// ended with the viewer; jobs run in turn.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { ValidationError } from "../errors.js";
import type { Comparison } from "../evaluate/compare.js";
import type { CiMethod, Interval } from "../evaluate/stats.js";
import type { IntervalAnswer, IntervalJob, PackedRun } from "./interval-worker.js";

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

/** The typed arrays of a packed run, each once (transferred to the worker, not copied). */
function buffersOf(run: PackedRun): ArrayBuffer[] {
  const f = run.fields;
  const arrays = [...Object.values(run.scores), ...(f === undefined ? [] : [...f.expected, ...f.predicted, f.flags])];
  return [...new Set(arrays.map((a) => a.buffer as ArrayBuffer))];
}

/** The worker thread that computes the viewer's bootstrap intervals and comparisons. */
export class IntervalWorker {
  #worker: Worker | undefined;
  #next = 1;
  readonly #waiting = new Map<number, { done: (answer: IntervalAnswer) => void; fail: (error: Error) => void }>();

  /** The BCa interval of the mean of `scores`, computed on the worker; `scores` is handed over (emptied here). */
  async meanInterval(scores: Float64Array): Promise<Interval> {
    const answer = await this.#ask({ id: 0, kind: "mean", scores }, [scores.buffer as ArrayBuffer]);
    if (!("ci" in answer)) throw new Error("the interval worker answered a mean's interval with something else");
    return answer.ci;
  }

  /** One metric's interval over a packed run, as `typelm show` computes it from the rows; the run's arrays are handed over. */
  async interval(run: PackedRun, metric: string): Promise<{ ci: Interval; method: CiMethod }> {
    const answer = await this.#ask({ id: 0, kind: "interval", run, metric }, buffersOf(run));
    if (!("ci" in answer) || answer.method === undefined) throw new Error("the interval worker answered an interval with something else");
    return { ci: answer.ci, method: answer.method };
  }

  /** Run B against run A on each of `metrics`, as `typelm compare` computes it (Holm-adjusted), on the worker; the runs' arrays are handed over. */
  async compare(a: PackedRun, b: PackedRun, metrics: string[]): Promise<(Comparison & { pAdjusted: number })[]> {
    const answer = await this.#ask({ id: 0, kind: "compare", a, b, metrics }, [...buffersOf(a), ...buffersOf(b)]);
    if (!("comparisons" in answer)) throw new Error("the interval worker answered a comparison with something else");
    return answer.comparisons;
  }

  #ask(job: IntervalJob, transfer: ArrayBuffer[]): Promise<IntervalAnswer> {
    const worker = this.#start();
    const id = this.#next++;
    return new Promise<IntervalAnswer>((done, fail) => {
      this.#waiting.set(id, { done, fail });
      worker.postMessage({ ...job, id }, transfer);
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
      if (!("error" in answer)) waiting.done(answer);
      else waiting.fail(answer.validation ? new ValidationError(answer.error, { field: answer.field }) : new Error(`the viewer's statistics failed: ${answer.error}`));
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
