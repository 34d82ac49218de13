import { preview, ValidationError } from "../errors.js";
import { describeError, Instrumentation, inSpan } from "../instrument/bus.js";
import { checkModule, type Module } from "../module.js";
import { FewShotExample } from "../prompt/few-shot.js";
import type { LabStore } from "../store/lab-store.js";
import { noteScore } from "../store/module-score.js";
import type { EvaluationRow } from "../store/records.js";
import { checkExpectedFields, describeFields } from "./fields.js";
import { progressBar } from "./progress.js";
import { AdaptiveConcurrency } from "./rate-limiter.js";
import { recordingStore, resumeRecording, startRecording, type RunRecorder } from "./recorder.js";
import type { LabStore as Store } from "../store/lab-store.js";
import { EvaluationReport } from "./report.js";
import { runExample, type ExampleOutcome } from "./run-example.js";
import { aggregate, resolveMetrics, type MetricSpec } from "./scoring.js";
import { checkExampleTimeout } from "./timeout.js";
import { yieldNowAndThen } from "./yield.js";
import { runInRounds } from "./batch-rounds.js";
import { batchSettings, providerTransport, type BatchOption, type BatchSettings } from "./batch-transport.js";

/** Options of `new Evaluation(options)`: concurrency, progress, recording, the run's name and store, the per-example time limit, batches. */
export interface EvaluationOptions {
  /** Examples run at once (default 8); lowered for a while when the provider answers 429. */
  concurrency?: number;
  /** A progress bar on standard error when it is a terminal (default); `false` never draws one. */
  progress?: boolean;
  /** Write the run and every row to the lab store as each example finishes (default true). */
  record?: boolean;
  /** The run's name in the lab store (default "evaluation"). */
  name?: string;
  /** The store to record into (default: the configured one; `null` records nothing). */
  lab?: LabStore | null;
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
   * maxRequestsPerBatch, maxRetries (default 2) }`. The module runs in rounds, one batch per round;
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
  readonly name: string;
  /** The `name` option as given (undefined when defaulted), for the report. */
  private readonly givenName: string | undefined;
  readonly lab: LabStore | null | undefined;
  /** Seconds per example (module call plus metrics) before it is a failed row; see `EvaluationOptions.exampleTimeout`. */
  readonly exampleTimeout: number;
  /** The `batch` option checked (null: live calls). */
  readonly batch: BatchSettings | null;

  constructor(options: EvaluationOptions = {}) {
    const concurrency = options.concurrency ?? 8;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new ValidationError(`Evaluation concurrency must be a positive integer; received ${JSON.stringify(concurrency)}`, { field: "concurrency" });
    }
    this.concurrency = concurrency;
    this.progress = options.progress;
    this.record = options.record ?? true;
    this.name = options.name ?? "evaluation";
    this.givenName = options.name;
    this.lab = options.lab;
    this.exampleTimeout = checkExampleTimeout("Evaluation", options.exampleTimeout);
    this.batch = batchSettings("Evaluation", options.batch);
  }

  // Two signatures rather than a default type argument: with one, TypeScript 5.0 (tslab's) stops
  // inferring the names as soon as `metrics` holds an inline function.
  /** Runs the module over the test examples and scores each prediction with the default metric (every expected field equal), reported as `accuracy`. */
  evaluate(args: EvaluateInput & { metrics?: undefined }): Promise<ReportOf<"accuracy">>;
  /** Runs the module over the test examples and scores each prediction with the given metrics; built-in names asked for are typed properties of the report. */
  evaluate<const M extends MetricSpec>(args: EvaluateArgs<M>): Promise<ReportOf<M>>;
  evaluate(args: EvaluateArgs): Promise<EvaluationReport> {
    // One span around the whole run, so its examples' module calls nest under it in a trace.
    return inSpan(() => this.evaluateInSpan(args));
  }

  private async evaluateInSpan<M extends MetricSpec>(args: EvaluateArgs<M>): Promise<ReportOf<M>> {
    const { onExample } = args;
    const moduleInstance = checkModule("Evaluation.evaluate", args.moduleInstance);
    const examples = checkExamples(args.testExamples);
    // Built-in metrics compare each expected field with the prediction's field of that name; a metric
    // function may read the expected outputs any way it likes.
    if ((args.metrics ?? []).every((m) => typeof m === "string")) checkExpectedFields(moduleInstance, examples);
    const fields = describeFields(moduleInstance, examples);
    const metrics = resolveMetrics(args.metrics, fields);
    const metricNames = metrics.map((m) => m.name);
    const total = examples.length;
    const config = {
      module: moduleInstance.constructor.name, metrics: metricNames, concurrency: this.concurrency, examples: total, exampleTimeout: this.exampleTimeout,
    };
    let kept: EvaluationRow[] = [];
    let recorder: RunRecorder;
    if (args.resume === undefined) {
      recorder = await startRecording(this.record, this.lab, this.name, config);
    } else {
      const store = await recordingStore(this.record, this.lab);
      if (store === null) {
        throw new ValidationError("Evaluation.evaluate: resume needs the lab store, but recording is off (record: false, lab: null or c.lab = false)", { field: "resume" });
      }
      kept = keptRows(store, args.resume, config, examples);
      recorder = resumeRecording(store, args.resume, this.name);
    }
    const { runId } = recorder;
    const started = performance.now();
    // `progress` lets the notebook display skip a run started with `progress: false`.
    Instrumentation.emit("evaluation.start", {
      runId, name: this.name, total, concurrency: this.concurrency, metrics: metricNames, progress: this.progress !== false,
    });

    const limiter = new AdaptiveConcurrency(this.concurrency, Date.now, (limit, cause, retryAfterMs) =>
      Instrumentation.emit("evaluation.concurrency", { runId, name: this.name, limit, cause, retryAfterMs }));
    const bar = progressBar(this.progress, total, this.name);
    const rows: EvaluationRow[] = new Array(total);
    const feedback: Record<string, string>[] = new Array(total);
    let done = 0, failures = 0, scoreSum = 0, cost = 0, inputTokens = 0, outputTokens = 0;
    let callbackError: { error: unknown } | undefined;

    /** Counts a finished row into the running totals (a resumed run's kept rows too). */
    const tally = (row: EvaluationRow, rowFeedback: Record<string, string>): void => {
      rows[row.index] = row;
      feedback[row.index] = rowFeedback;
      done++;
      if (row.error !== null) failures++;
      scoreSum += row.scores[metricNames[0]!] ?? 0;
      cost += row.cost;
      inputTokens += row.inputTokens;
      outputTokens += row.outputTokens;
    };
    const finished = (outcome: ExampleOutcome): void => {
      const { row } = outcome;
      tally(row, outcome.feedback);
      recorder.example(row);
      const score = scoreSum / done;
      Instrumentation.emit("evaluation.example", {
        runId, name: this.name, index: row.index, exampleId: row.exampleId, error: row.error, scores: row.scores,
        durationMs: row.durationMs, done, total, score, failures, cost, inputTokens, outputTokens, concurrency: limiter.limit,
      });
      bar.update(done, { score, failures, cost });
      try {
        onExample?.(outcome);
      } catch (error) {
        callbackError ??= { error };
      }
    };

    try {
      let remaining = total;
      let allDone!: () => void;
      const everyExample = new Promise<void>((resolve) => { allDone = resolve; });
      const finishedOnce = (outcome: ExampleOutcome): void => {
        try {
          finished(outcome);
        } catch (error) {
          callbackError ??= { error };
        }
        if (--remaining === 0) allDone();
      };
      // A resumed run: the rows already recorded count as done (they are not written again).
      const have = new Set<number>();
      for (const row of kept) {
        have.add(row.index);
        tally(row, {});
      }
      remaining -= have.size;
      if (remaining === 0) allDone();
      if (have.size > 0) bar.update(done, { score: scoreSum / done, failures, cost });
      if (this.batch === null) {
        for (let i = 0; i < total; i++) {
          if (have.has(i)) continue;
          await limiter.acquire();
          runExample(moduleInstance, examples[i]!, i, metrics, limiter, this.exampleTimeout, finishedOnce);
          // An instant model settles every example in microtasks: without this, timers and I/O (a
          // notebook redrawing the progress display) would wait for the whole run.
          const turn = yieldNowAndThen();
          if (turn !== undefined) await turn;
        }
      } else {
        // Batch rounds: every example runs; its model calls are collected, sent as one batch per LM
        // and round, and the examples that waited run again with the replies.
        const settings = this.batch;
        const store = await recordingStore(this.record, this.lab);
        const transport = providerTransport({
          settings, store, runId,
          onProgress: (p) => {
            Instrumentation.emit("evaluation.batch", { runId, name: this.name, ...p });
            bar.batch(`round ${p.round}: ${p.status} ${p.counts.completed}/${p.counts.total}, ${p.counts.failed} failed`);
          },
        });
        const todo = examples.map((_, i) => i).filter((i) => !have.has(i));
        await runInRounds(todo, (i) => new Promise<ExampleOutcome>((resolve) => {
          void limiter.acquire().then(() => runExample(moduleInstance, examples[i]!, i, metrics, limiter, this.exampleTimeout, resolve));
        }), transport, { maxRetries: settings.maxRetries, concurrency: Math.max(this.concurrency, 64), onDone: (_, outcome) => finishedOnce(outcome) });
      }
      await everyExample;
      if (callbackError !== undefined) throw callbackError.error;
    } catch (error) {
      // Only a throwing `onExample` (or a bug) gets here: examples themselves never throw.
      bar.stop();
      const message = describeError(error);
      recorder.finish({ ok: false, score: null, summary: { done, failures }, error: message });
      Instrumentation.emit("evaluation.end", { runId, name: this.name, ok: false, error: message, done, total });
      throw error;
    }
    bar.stop();

    const values: Record<string, number> = {};
    for (const metric of metrics) values[metric.name] = aggregate(metric, rows, fields);
    const durationMs = performance.now() - started;
    const failed = rows.filter((r) => r.error !== null);
    const summary = { metrics: values, failures: failed.length, total, inputTokens, outputTokens, cost, durationMs };
    const headline = values[metricNames[0]!]!;
    recorder.finish({ ok: true, score: headline, summary });
    // The registry stores it with the module's next version.
    noteScore(moduleInstance, headline);
    Instrumentation.emit("evaluation.end", {
      runId, name: this.name, ok: true, ...summary, maxConcurrency: limiter.maxRunning, concurrencyDecreases: limiter.decreases,
      recordError: recorder.failure,
    });
    return new EvaluationReport(
      { metrics: values, results: rows, failures: failed, feedback, inputTokens, outputTokens, cost, durationMs, runId, name: this.givenName },
      fields,
    ) as ReportOf<M>;
  }
}

/**
 * The rows of run `runId` that can be kept for these examples: the run must be an evaluation started
 * with the same configuration (module class, metrics, number of examples), and a row is kept when its
 * example id is the example's at that position.
 */
function keptRows(store: Store, runId: string, config: Record<string, unknown>, examples: readonly FewShotExample[]): EvaluationRow[] {
  const run = store.run(runId);
  if (run === undefined) throw new ValidationError(`Evaluation.evaluate: resume: no run with id ${JSON.stringify(runId)} in ${store.path}`, { field: "resume" });
  if (run.kind !== "evaluation") throw new ValidationError(`Evaluation.evaluate: resume: run ${runId} is an ${run.kind} run, not an evaluation`, { field: "resume" });
  for (const key of ["module", "metrics", "examples"] as const) {
    if (JSON.stringify(run.config[key]) !== JSON.stringify(config[key])) {
      throw new ValidationError(
        `Evaluation.evaluate: resume: run ${runId} was started with ${key} ${JSON.stringify(run.config[key])}, this evaluation has ${JSON.stringify(config[key])}; resume the same evaluation`,
        { field: "resume" },
      );
    }
  }
  const kept: EvaluationRow[] = [];
  for (const row of run.rows) {
    const example = examples[row.index];
    if (example === undefined) continue;
    if ((example.id ?? null) !== row.exampleId) {
      throw new ValidationError(
        `Evaluation.evaluate: resume: run ${runId} recorded example ${JSON.stringify(row.exampleId)} at position ${row.index}, where this evaluation has ${JSON.stringify(example.id ?? null)}; resume with the same examples in the same order`,
        { field: "resume" },
      );
    }
    kept.push(row);
  }
  return kept;
}

/** The examples as `FewShotExample`s, or a `ValidationError` saying which one is wrong and how. */
function checkExamples(given: readonly FewShotExample[]): FewShotExample[] {
  if (!Array.isArray(given)) {
    throw new ValidationError(`Evaluation.evaluate: testExamples must be an array of FewShotExample; received ${typeof given}`, { field: "testExamples" });
  }
  if (given.length === 0) {
    throw new ValidationError("Evaluation.evaluate: testExamples is empty; expected at least one FewShotExample with expected outputs", { field: "testExamples" });
  }
  const examples = given.map((e, i) => {
    const example = e instanceof FewShotExample ? e : exampleFromJSON(e, i);
    if (Object.keys(example.output).length === 0) {
      throw new ValidationError(
        `testExamples[${i}]${idText(example)} has no expected output fields; expected e.g. output: { label: "..." } to compare predictions with`,
        { field: `testExamples[${i}].output` },
      );
    }
    return example;
  });
  const fieldNames = [...new Set(examples.flatMap((e) => Object.keys(e.output)))];
  examples.forEach((example, i) => {
    for (const field of fieldNames) {
      if (!(field in example.output) || example.output[field] === undefined) {
        const other = examples.findIndex((e) => e.output[field] !== undefined);
        throw new ValidationError(
          `testExamples[${i}]${idText(example)} is missing expected output field "${field}" (testExamples[${other}] has it); ` +
            "give every example the same output fields",
          { field: `testExamples[${i}].output.${field}` },
        );
      }
    }
  });
  return examples;
}

/** A plain `{ input, output, id }` as a `FewShotExample`; anything else is an error naming its position. */
function exampleFromJSON(value: unknown, i: number): FewShotExample {
  const wrong = (detail: string) => new ValidationError(
    `testExamples[${i}] must be a FewShotExample or { input, output, id }; received ${preview(value)}${detail}`,
    { field: `testExamples[${i}]` },
  );
  if (value === null || typeof value !== "object") throw wrong("");
  try {
    return FewShotExample.fromJSON(value);
  } catch (error) {
    throw wrong(` (${error instanceof Error ? error.message : String(error)})`);
  }
}

function idText(example: FewShotExample): string {
  return example.id === undefined ? "" : ` (id "${example.id}")`;
}
