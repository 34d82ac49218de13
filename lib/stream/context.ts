/**
 * The running stream, as seen from inside a module's `forward`: an AsyncLocalStorage holds the
 * stream's sink (where events go, the abort signal, each predictor's path), so every predictor or
 * agent called inside the streamed module hands its events to that stream, however deep the call.
 * Outside a stream the hooks do nothing.
 *
 * A lone predictor that makes one model call (a `Predict` whose `forward` is Predict's own) gets its
 * sink handed over directly instead: its model call takes the sink synchronously, before the run's
 * first await. On Node 20 and 22 the first `AsyncLocalStorage.run` turns on promise hooks for the
 * whole process, which were measured to double the cost of every promise (about 0.6 µs per chunk of a
 * streamed reply, and as much again for every other promise of the application).
 */
import { asyncLocalStorage } from "../load-sync.js";
import { PredictionStream, type QueuedEvent } from "./events.js";
import { loadReplyReaders, replyReaders } from "./readers.js";

/** Where the predictors of one running stream send their events. */
export interface StreamSink {
  push(event: QueuedEvent): void;
  signal: AbortSignal | undefined;
  /** The path of a predictor or agent inside the streamed module ("" for the module itself). */
  pathOf(owner: object, fallback: string): string;
}

const sinks = asyncLocalStorage<StreamSink>();

/** The sink handed over directly, while a lone predictor's run starts (see the header); taken once. */
let direct: StreamSink | undefined;

/** Recognises a module that makes exactly one model call, reached synchronously from `call` (set by `Predict`). */
let oneCallTest: (module: object) => boolean = () => false;

/** @internal Sets how `makesOneCall` recognises such modules (`Predict` does, where it is defined). */
export function recognizeOneCall(test: (module: object) => boolean): void {
  oneCallTest = test;
}

/** Whether `module`'s stream can hand its sink over directly, without AsyncLocalStorage (see the header). */
export function makesOneCall(module: object): boolean {
  return oneCallTest(module);
}

/** The sink of the stream running here, or undefined outside a stream. A directly handed sink is taken once. */
export function currentSink(): StreamSink | undefined {
  const handed = direct;
  if (handed === undefined) return sinks.getStore();
  direct = undefined;
  return handed;
}

/** An agent's hook: one step completed. Nothing happens outside a stream. */
export function emitStep(owner: object, step: unknown): void {
  const sink = sinks.getStore();
  if (sink !== undefined) sink.push({ type: "step", step, path: sink.pathOf(owner, owner.constructor.name) });
}

/** The error a stream rejects with when its signal aborts: an `AbortError`, keeping a custom reason as its cause. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const error = new DOMException("The stream was aborted", "AbortError");
  if (reason !== undefined) Object.defineProperty(error, "cause", { value: reason });
  return error;
}

/**
 * Runs `run` with `sink` handed over directly (`oneCall`) or in the AsyncLocalStorage, once the reply
 * readers are loaded (at once when they already are: see readers.ts).
 */
function runWith<R>(sink: StreamSink, oneCall: boolean, run: () => Promise<R>): Promise<R> {
  if (replyReaders() === undefined) return loadReplyReaders().then(() => runWithNow(sink, oneCall, run));
  return runWithNow(sink, oneCall, run);
}

function runWithNow<R>(sink: StreamSink, oneCall: boolean, run: () => Promise<R>): Promise<R> {
  if (!oneCall) return sinks.run(sink, run);
  direct = sink;
  try {
    return run();
  } finally {
    direct = undefined; // not taken (the run failed before its model call): nobody else may take it
  }
}

/**
 * Starts `run` with a sink of its own and returns its stream. `paths` maps each predictor and agent
 * inside the streamed module to its path; `oneCall` says the module makes one model call, reached
 * synchronously (see `makesOneCall`). The stream rejects with an `AbortError` as soon as `signal`
 * aborts; the model calls inside see the same signal and stop.
 */
export function openStream<R, P>(paths: Map<object, string>, signal: AbortSignal | undefined, run: () => Promise<R>, oneCall = false): PredictionStream<R, P> {
  return new PredictionStream<R, P>((push) => {
    const sink: StreamSink = { push, signal, pathOf: (owner, fallback) => paths.get(owner) ?? fallback };
    if (signal === undefined) return runWith(sink, oneCall, run);
    if (signal.aborted) return Promise.reject(abortError(signal));
    return new Promise<R>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal));
      signal.addEventListener("abort", onAbort, { once: true });
      runWith(sink, oneCall, run).then(resolve, (error: unknown) => reject(signal.aborted ? abortError(signal) : error))
        .finally(() => signal.removeEventListener("abort", onAbort));
    });
  });
}
