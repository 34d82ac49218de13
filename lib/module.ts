import { globalConfig, withModuleLM, withSampling, type ModuleConfig, type Sampling } from "./config.js";
import { traceCall } from "./trace-call.js";
import { ValidationError } from "./errors.js";
import { callSampling } from "./call-sampling.js";
import { MODULE_BRAND } from "./module-brand.js";
import { describeError, Instrumentation, inSpan } from "./instrument/bus.js";
import type { LanguageModel } from "./lm/types.js";
export { callSampling } from "./call-sampling.js";
import type { FewShotExample } from "./prompt/few-shot.js";
import { cloneModule, dumpStateOf, loadStateInto, namedPredictorsOf } from "./module-state.js";
import type { BatchCallOptions, BatchResult } from "./batch/options.js";
import { makesOneCall, openStream } from "./stream/context.js";
import type { PredictionStream } from "./stream/events.js";

/** Options accepted by every `call`. */
export interface CallOptions {
  /** Use this model for this call (beats every configured one). */
  lm?: LanguageModel;
  /**
   * Sampling temperature for every model call made inside this call (child modules and agent steps
   * included); beats the LM's own `temperature`. A finite number >= 0.
   */
  temperature?: number;
  /**
   * Marks the requests of this call as one rollout: calls differing only in `rolloutId` are distinct
   * requests, so neither the response cache nor coalescing of identical in-flight calls merges them.
   * Never sent to the provider. Without it, cache keys are those of a request without the option.
   */
  rolloutId?: string | number;
}

/** Options of `stream`: those of `call`, and a `signal` that aborts the run (the stream rejects with an `AbortError`). */
export interface StreamOptions extends CallOptions {
  signal?: AbortSignal;
}

/**
 * Runs `fn` with the call options' `temperature` and `rolloutId` (checked first) applying to every
 * model call inside it; the innermost call's options win.
 */
export function withCallSampling<T>(options: CallOptions, fn: () => T): T {
  return withSampling(callSampling(options), fn);
}


/** What optimizers tune: anything with an instruction and demos that reach its prompt. */
export interface Tunable {
  instruction: string;
  demos: FewShotExample[];
  readonly isPredictor: true;
}

/** One predictor's tunable state: its instruction and its demos as plain JSON. */
export interface PredictorState {
  instruction: string;
  demos: { input: Record<string, unknown>; output: Record<string, unknown>; id?: string }[];
}

/** What `Module.dumpState` returns and `loadState` restores: every predictor's state, keyed by its path. */
export interface ModuleState {
  predictors: Record<string, PredictorState>;
}

function isTunable(value: unknown): value is Tunable & Module {
  return value instanceof Module && (value as Partial<Tunable>).isPredictor === true;
}

/**
 * A reusable, composable unit. Subclasses implement `forward`; callers use `call`, which runs
 * `forward` with events around it and with this module's configured LM applying to its children.
 */
export abstract class Module<I = any, O = any> {
  /** Per-instance configuration (see `configure`). */
  config: ModuleConfig = {};

  /** The module's own work: subclasses implement it; callers use `call`, which wraps it. */
  abstract forward(inputs: I, options?: CallOptions): Promise<O>;

  /** Sets per-instance configuration, e.g. `m.configure((c) => { c.lm = new LM(...) })`. */
  configure(fn: (config: ModuleConfig) => void): this {
    fn(this.config);
    return this;
  }

  /**
   * Runs `forward` in a span of its own, between `module.forward.start` and `module.forward.end`
   * events, with this module's configured LM and the call's `temperature` / `rolloutId` applying to
   * every model call inside it. When the call is recorded as a production trace (`c.traces`), the
   * returned prediction (or the thrown error) carries the trace's id as `traceId` (not enumerable).
   */
  call(inputs: I, options: CallOptions = {}): Promise<O> {
    // Production traces (`c.traces`): one branch when off; sampling is decided before any work.
    const traces = globalConfig.traces;
    if (traces !== undefined && traces.sample > 0) return traceCall(this, inputs, traces, () => inSpan(() => this.callInSpan(inputs, options)));
    return inSpan(() => this.callInSpan(inputs, options));
  }

  /**
   * Runs `call` and streams the events of every predictor and agent it calls: `partial` and `field`
   * events as replies arrive, `step` events as agents complete steps, each tagged with the path of
   * its predictor inside this module ("" for this module itself). `result` is what `call` returns;
   * awaiting it alone is enough. A field that fails conversion fails its model call at once
   * (`OutputError`, the request aborted); `signal` aborts the run (`AbortError`).
   */
  stream(inputs: I, options: StreamOptions = {}): PredictionStream<O, Record<string, unknown>> {
    const { signal, ...callOptions } = options;
    return openStream(modulePaths(this), signal, () => this.call(inputs, callOptions), makesOneCall(this));
  }

  private async callInSpan(inputs: I, options: CallOptions): Promise<O> {
    const name = this.constructor.name;
    const started = performance.now();
    Instrumentation.emit("module.forward.start", { module: name });
    try {
      // A predictor resolves its own LM (per-call option first); only modules with children need a scope.
      const lm = isTunable(this) ? undefined : options.lm ?? this.config.lm;
      const result = await withCallSampling(options, () => withModuleLM(lm, () => this.forward(inputs, options)));
      Instrumentation.emit("module.forward.end", { module: name, ok: true, durationMs: performance.now() - started });
      return result;
    } catch (error) {
      Instrumentation.emit("module.forward.end", {
        module: name, ok: false, durationMs: performance.now() - started,
        error: describeError(error),
      });
      throw error;
    }
  }

  /** Every predictor inside this module as `[path, predictor]`, found through its properties. */
  namedPredictors(): [string, Tunable & Module][] {
    return namedPredictorsOf(this);
  }

  /** The instruction and demos of every predictor, keyed by path (JSON-ready). */
  dumpState(): ModuleState {
    return dumpStateOf(this);
  }

  /** Restores what `dumpState` produced. Unknown paths are an error: the state belongs to another module. */
  loadState(state: ModuleState, makeExample?: (d: PredictorState["demos"][number]) => FewShotExample): this {
    loadStateInto(this, state, makeExample);
    return this;
  }

  /**
   * A deep copy: sub-modules and predictors are copied, models and tools are shared. Whatever is
   * reachable twice is copied once, so a sub-module shared by two properties stays shared and a
   * back-reference to a parent points at the parent's copy.
   */
  clone(): this {
    return cloneModule(this);
  }

  // --- many calls at once (lib/batch/) ---

  /**
   * Calls this program on every input of `inputsList` and resolves with one result per input, in
   * the order of `inputsList`: `{ ok: true, value }` or `{ ok: false, error }`; one failed input
   * never rejects the batch. Live calls run `concurrency` at once (default 8), adapting to the
   * provider's rate limit as an evaluation does; `via: "provider-batch"` sends them through the
   * OpenAI / Anthropic batch services by rounds, at their batch price. `signal` aborts what is left.
   * Rejects only for a bad argument (`ValidationError`), before any call.
   */
  batch(inputsList: readonly I[], options: BatchCallOptions = {}): Promise<BatchResult<O>[]> {
    return import("./batch/run.js").then(({ runBatch }) => runBatch(this, inputsList, options));
  }
}

// The brand store/ reads instead of `instanceof Module` (module-brand.ts).
Object.defineProperty(Module.prototype, MODULE_BRAND, { value: true });

/**
 * Every module inside `root` (predictors and agents) with its path, named as `namedPredictors()`
 * names them, except that `root` itself is "".
 */
function modulePaths(root: Module): Map<object, string> {
  const paths = new Map<object, string>();
  const visit = (value: unknown, path: string): void => {
    if (value === null || typeof value !== "object" || paths.has(value)) return;
    if (value instanceof Module) {
      paths.set(value, path);
      for (const [key, child] of Object.entries(value)) {
        if (key !== "config") visit(child, path ? `${path}.${key}` : key);
      }
    } else if (Array.isArray(value)) value.forEach((child, i) => visit(child, `${path}[${i}]`));
    else if (value instanceof Map) for (const [k, child] of value) visit(child, `${path}[${String(k)}]`);
  };
  visit(root, "");
  return paths;
}

/** `moduleInstance` as a Module, or a `ValidationError` naming the call it was given to (`where`). */
export function checkModule(where: string, moduleInstance: unknown): Module {
  if (!(moduleInstance instanceof Module)) {
    throw new ValidationError(`${where}: moduleInstance must be a Module (Predict, ChainOfThought, your own Module subclass ...)`, { field: "moduleInstance" });
  }
  return moduleInstance;
}
