import { inSpan } from "../instrument/bus.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { Lab } from "../store/lab-store.js";
import type { EvaluationReport } from "./report.js";
import type { ExampleOutcome } from "./run-example.js";
import type { MetricSpec } from "./scoring.js";
import type { BatchOption, BatchSettings } from "../batch/settings.js";
import { evaluationSettings } from "./evaluation-settings.js";

/** Options of `new Evaluation(options)`: concurrency, progress, recording, the run's name and store, the per-example time limit, batches. */
export interface EvaluationOptions {
  /** Examples run at once (default 8); lowered for a while when the provider answers 429. */
  concurrency?: number;
  /** A progress bar on standard error when it is a terminal (default); `false` never draws one. */
  progress?: boolean;
  /** Write the run and every row to the lab store as each example finishes (default true). */
  record?: boolean;
  /**
   * With each recorded row, its model calls: messages, reply, model, tokens, cost, latency, cache hit
   * (default true; a long text, such as a system prompt, is stored once by its hash). `false` records the rows only.
   */
  recordCalls?: boolean;
  /** The run's name in the lab store (default "evaluation"). */
  name?: string;
  /** The store to record into (default: the configured one; `null` records nothing). */
  lab?: Lab | null;
  /**
   * Seconds one example may take, its module call (re-runs after rate limiting included) plus its
   * metrics (default 600). An example past it is a failed row whose error says it timed out and
   * names the limit, scored 0 like any failure; the run goes on and completes. The module's work
   * cannot be cancelled (a module call takes no abort signal), so it is abandoned: a late answer is
   * ignored and writes nothing, and its limiter slot is given back at the limit.
   */
  exampleTimeout?: number;
  /**
   * Send the model requests through the provider's batch service (OpenAI Batch API, Anthropic
   * Message Batches) at the batch price: `true`, or `{ pollInterval (seconds, default 5),
   * maxRequestsPerBatch, maxRetries (default 2), maxWait (seconds one batch may take, default 24 h) }`.
   * The module runs in rounds, one batch per round;
   * cached replies stay out of batches and batch replies enter the LM cache. Each batch is written to
   * the lab store before the first poll, so `resume` waits for it instead of paying twice. Ollama has
   * no batch service (`ConfigurationError`).
   */
  batch?: BatchOption;
}

/** What `evaluate` takes besides the metrics. */
export interface EvaluateInput {
  moduleInstance: Module;
  testExamples: readonly FewShotExample[];
  /** Called as each example finishes, with what the row does not keep (prediction object, trace, feedback). */
  onExample?: (outcome: ExampleOutcome) => void;
  /**
   * A run id of this evaluation (same examples, metrics and module class) that was interrupted: its
   * recorded rows are kept and only the missing examples run; the run is finished under the same id.
   */
  resume?: string;
}

/** What `evaluate` takes: the module, the test examples, the metrics, and optionally a per-example callback and a run id to resume. */
export interface EvaluateArgs<M extends MetricSpec = MetricSpec> extends EvaluateInput {
  /** Built-in names ("accuracy", "f1_score", "exact_match", "token_f1") or metric functions; default: every expected field equal, reported as `accuracy`. */
  metrics?: readonly M[];
}

/** The report with each built-in metric asked for by name typed as a number. */
export type ReportOf<M extends MetricSpec> = EvaluationReport & { readonly [K in Extract<M, string>]: number };

/**
 * Runs a module over test examples with bounded, rate-adaptive concurrency and scores every
 * prediction. A failed example is a row with its error, scored 0 on every metric; it is never
 * dropped and never ends the run. The module is only called, never changed.
 */
export class Evaluation {
  readonly concurrency: number;
  readonly progress: boolean | undefined;
  readonly record: boolean;
  readonly recordCalls: boolean;
  readonly name: string;
  /** The `name` option as given (undefined when defaulted), for the report. */
  /** @internal */
  readonly givenName: string | undefined;
  readonly lab: Lab | null | undefined;
  /** Seconds per example (module call plus metrics) before it is a failed row; see `EvaluationOptions.exampleTimeout`. */
  readonly exampleTimeout: number;
  /** The `batch` option checked (null: live calls). */
  readonly batch: BatchSettings | null;

  constructor(options: EvaluationOptions = {}) {
    const settings = evaluationSettings(options);
    this.concurrency = settings.concurrency;
    this.progress = settings.progress;
    this.record = settings.record;
    this.recordCalls = settings.recordCalls;
    this.name = settings.name;
    this.givenName = settings.givenName;
    this.lab = settings.lab;
    this.exampleTimeout = settings.exampleTimeout;
    this.batch = settings.batch;
  }

  // Two signatures rather than a default type argument: with one, TypeScript 5.0 (tslab's) stops
  // inferring the names as soon as `metrics` holds an inline function.
  /** Runs the module over the test examples and scores each prediction with the default metric (every expected field equal), reported as `accuracy`. */
  evaluate(args: EvaluateInput & { metrics?: undefined }): Promise<ReportOf<"accuracy">>;
  /** Runs the module over the test examples and scores each prediction with the given metrics; built-in names asked for are typed properties of the report. */
  evaluate<const M extends MetricSpec>(args: EvaluateArgs<M>): Promise<ReportOf<M>>;
  evaluate(args: EvaluateArgs): Promise<EvaluationReport> {
    // One span around the whole run, so its examples' module calls nest under it in a trace.
    return inSpan(async () => (await import("./evaluation-run.js")).evaluateRun(this, args));
  }
}
