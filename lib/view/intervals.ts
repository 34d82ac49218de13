// A mean metric's BCa bootstrap interval over a large run takes seconds (2,000 resamples of every
// score), and so does a comparison of two such runs; the viewer has them computed on a worker thread
// so that its server goes on answering pages meanwhile. One worker at a time, started at the first
// job with a heap limit sized to it (see `IntervalWorker`); jobs run in turn.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { ValidationError } from "../errors.js";
import type { Comparison } from "../evaluate/compare.js";
import type { CiMethod, Interval } from "../evaluate/stats/methods.js";
import type { IntervalAnswer, IntervalJob, PackedRun } from "./interval-worker.js";

/**
 * Where a viewer worker's code is (`name`: interval-worker or query-worker): beside this module (tsc's
 * build), or the bundle's own file, view-<name>.js (dist/pkg).
 */
export function workerScript(name = "interval-worker"): { file: string | URL; eval: boolean } {
  const here = import.meta.url;
  if (here.endsWith(".ts")) {
    // Run from the TypeScript sources (the tests): tsx compiles the worker's module as it loads.
    const tsx = pathToFileURL(createRequire(here).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href;
    const worker = new URL(`./${name}.ts`, here).href;
    return { file: `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(worker)}); });`, eval: true };
  }
  for (const file of [`./${name}.js`, `./view-${name}.js`, `../view-${name}.js`]) {
    const url = new URL(file, here);
    if (existsSync(fileURLToPath(url))) return { file: url, eval: false };
  }
  throw new Error(`the viewer's ${name.replace("-", " ")} is missing beside ${fileURLToPath(here)} (view-${name}.js): rebuild typelm (npm run build)`);
}

/** The typed arrays of a packed run, each once (transferred to the worker, not copied). */
function buffersOf(run: PackedRun): ArrayBuffer[] {
  const f = run.fields;
  const arrays = [...Object.values(run.scores), ...(f === undefined ? [] : [...f.expected, ...f.predicted, f.flags])];
  return [...new Set(arrays.map((a) => a.buffer as ArrayBuffer))];
}

/** A worker thread with the old-generation limit it was started with and the jobs it has to answer. */
interface Running {
  worker: Worker;
  limitMb: number;
  waiting: Map<number, { done: (answer: IntervalAnswer) => void; fail: (error: Error) => void }>;
  /** A larger job went to a new worker: this one ends once it has answered its own. */
  retired: boolean;
  idle?: NodeJS.Timeout;
}

/** How the worker's heap is sized (see `IntervalWorker`). */
export interface WorkerSizing {
  /** Heap allowed to any job, in MB; default 64. */
  baseMb?: number;
  /** Heap bytes allowed per row of the rows a job reads (the library's rows, maps of ids, scores); default 500. */
  bytesPerRow?: number;
  /** Milliseconds an idle worker is kept before it is ended and its heap returned; default 20,000. */
  idleMs?: number;
}

const YOUNG_MB = 16;

/**
 * The worker thread that computes the viewer's bootstrap intervals and comparisons. Its heap is
 * limited to what the largest job it has been given needs (`baseMb` and `bytesPerRow` per row): with a
 * limit V8 collects a large job's garbage as it goes instead of letting the heap grow to several times
 * what is alive, and the limit only grows (a larger job starts a larger worker, the smaller one ends
 * once it has answered). A job that runs out of it fails with a clear error, and every later job is
 * allowed twice as much (again). An idle worker ends after `idleMs`, returning its heap.
 */
export class IntervalWorker {
  #running: Running | undefined;
  #next = 1;
  readonly #baseMb: number;
  readonly #bytesPerRow: number;
  /** Doubled each time a job runs out of memory. */
  #scale = 1;
  readonly #idleMs: number;
  readonly #all = new Set<Running>();

  constructor(sizing: WorkerSizing = {}) {
    this.#baseMb = sizing.baseMb ?? 64;
    this.#bytesPerRow = sizing.bytesPerRow ?? 500;
    this.#idleMs = sizing.idleMs ?? 20_000;
  }

  /** The interval of the mean of `scores` and its method (see `meanScoreInterval`), computed on the worker; `scores` is handed over (emptied here). */
  async meanInterval(scores: Float64Array): Promise<{ ci: Interval; method: CiMethod }> {
    // The scores and the resamples' arrays are not on the heap.
    const answer = await this.#ask({ id: 0, kind: "mean", scores }, [scores.buffer as ArrayBuffer], 0);
    if (!("ci" in answer) || answer.method === undefined) throw new Error("the interval worker answered a mean's interval with something else");
    return { ci: answer.ci, method: answer.method };
  }

  /** One metric's interval over a packed run, as `typelm show` computes it from the rows; the run's arrays are handed over. */
  async interval(run: PackedRun, metric: string): Promise<{ ci: Interval; method: CiMethod }> {
    const answer = await this.#ask({ id: 0, kind: "interval", run, metric }, buffersOf(run), run.n);
    if (!("ci" in answer) || answer.method === undefined) throw new Error("the interval worker answered an interval with something else");
    return { ci: answer.ci, method: answer.method };
  }

  /** Run B against run A on each of `metrics`, as `typelm compare` computes it (Holm-adjusted), on the worker; the runs' arrays are handed over. */
  async compare(a: PackedRun, b: PackedRun, metrics: string[]): Promise<(Comparison & { pAdjusted: number })[]> {
    const answer = await this.#ask({ id: 0, kind: "compare", a, b, metrics }, [...buffersOf(a), ...buffersOf(b)], a.n + b.n);
    if (!("comparisons" in answer)) throw new Error("the interval worker answered a comparison with something else");
    return answer.comparisons;
  }

  #ask(job: IntervalJob, transfer: ArrayBuffer[], rows: number): Promise<IntervalAnswer> {
    const running = this.#workerFor(Math.ceil(this.#scale * (this.#baseMb + (rows * this.#bytesPerRow) / 2 ** 20)));
    if (running.idle !== undefined) clearTimeout(running.idle);
    running.idle = undefined;
    const id = this.#next++;
    return new Promise<IntervalAnswer>((done, fail) => {
      running.waiting.set(id, { done, fail });
      running.worker.postMessage({ ...job, id }, transfer);
    });
  }

  /** The worker to give a job needing `needMb`: the current one when its limit is enough, else a new one. */
  #workerFor(needMb: number): Running {
    const current = this.#running;
    if (current !== undefined && current.limitMb >= needMb) return current;
    if (current !== undefined) {
      current.retired = true;
      if (current.waiting.size === 0) void current.worker.terminate();
    }
    return (this.#running = this.#start(Math.max(needMb, current?.limitMb ?? 0)));
  }

  #start(limitMb: number): Running {
    const script = workerScript();
    const worker = new Worker(script.file, { eval: script.eval, resourceLimits: { maxOldGenerationSizeMb: limitMb, maxYoungGenerationSizeMb: YOUNG_MB } });
    const running: Running = { worker, limitMb, waiting: new Map(), retired: false };
    this.#all.add(running);
    // An idle worker does not keep the process alive; one with jobs does (see meanInterval's promises).
    worker.unref();
    worker.on("message", (answer: IntervalAnswer) => {
      const waiting = running.waiting.get(answer.id);
      if (waiting === undefined) return;
      running.waiting.delete(answer.id);
      if (!("error" in answer)) waiting.done(answer);
      else waiting.fail(answer.validation ? new ValidationError(answer.error, { field: answer.field }) : new Error(`the viewer's statistics failed: ${answer.error}`));
      if (running.waiting.size > 0) return;
      if (running.retired) void worker.terminate();
      else running.idle = setTimeout(() => { if (running.waiting.size === 0) this.#retire(running); }, this.#idleMs).unref();
    });
    let failure: Error | undefined;
    worker.on("error", (error) => {
      if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") {
        // Every later job is allowed twice as much.
        this.#scale *= 2;
        failure = new Error(`the viewer's statistics ran out of the memory allowed to them (${limitMb} MB); asked again, they are allowed twice as much`);
      } else {
        failure = error;
      }
    });
    worker.on("exit", (code) => {
      if (running.idle !== undefined) clearTimeout(running.idle);
      if (this.#running === running) this.#running = undefined;
      this.#all.delete(running);
      const error = failure ?? new Error(`the interval worker stopped (exit code ${code})`);
      for (const w of running.waiting.values()) w.fail(error);
      running.waiting.clear();
    });
    return running;
  }

  /**
   * Ends an idle worker. It stops being the one jobs go to at once: a job asked before its exit is seen
   * would otherwise be posted to it and fail with it ("the interval worker stopped").
   */
  #retire(running: Running): void {
    running.retired = true;
    if (this.#running === running) this.#running = undefined;
    void running.worker.terminate();
  }

  /** The workers running now (for tests): their old-generation limits, in MB. */
  get limits(): number[] {
    return [...this.#all].map((r) => r.limitMb);
  }

  /** Ends the workers; intervals still being computed fail. */
  async close(): Promise<void> {
    this.#running = undefined;
    await Promise.all([...this.#all].map((r) => r.worker.terminate()));
  }
}
