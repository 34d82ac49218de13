// Evaluation.evaluate's run, loaded the first time an evaluation runs (see Evaluation.evaluate), so
// `import "typelm"` does not compile the example loop, recording, batching and scoring.
import { preview, ValidationError } from "../errors.js";
import { addPromptCache, emptyPromptCache, usedPromptCache } from "./prompt-cache.js";
import { describeError, Instrumentation } from "../instrument/bus.js";
import { resolveLM } from "../config.js";
import type { LanguageModel } from "../lm/types.js";
import { checkModule, type Module } from "../module.js";
import { predictorLMs } from "./predictor-models.js";
import { FewShotExample } from "../prompt/few-shot.js";
import { noteScore } from "../store/module-score.js";
import type { EvaluationRow } from "../store/records.js";
import { checkExpectedFields, describeFields } from "./fields.js";
import { JUDGE_ONE_VERDICT, modelMetricChecks } from "./model-metrics.js";
import { progressBar } from "./progress.js";
import { AdaptiveConcurrency } from "./rate-limiter.js";
import { isRecording, recordingStore, resumeRecording, startRecording, type RunRecorder } from "./recorder.js";
import type { Lab as Store } from "../store/lab-store.js";
import { EvaluationReport } from "./report.js";
import { runExample, type ExampleOutcome } from "./run-example.js";
import { aggregate, resolveMetrics, type MetricSpec } from "./scoring.js";
import { yieldNowAndThen } from "./yield.js";
import { runInRounds } from "./batch-rounds.js";
import { providerTransport } from "./batch-transport.js";
import type { EvaluateArgs, Evaluation, ReportOf } from "./evaluation.js";

/** `extraConfig` is merged into the run's recorded config (a rescore names its source run and module there). */
/** `warnings` are the caller's (a rescore's remark on its source); the run adds its own (a judge's one verdict for every row). */
export async function evaluateRun<M extends MetricSpec>(
  ev: Evaluation, args: EvaluateArgs<M>, extraConfig: Record<string, unknown> = {}, warnings: readonly RunWarning[] = [],
): Promise<ReportOf<M>> {
  const { onExample } = args;
  const moduleInstance = checkModule("Evaluation.evaluate", args.moduleInstance);
  const examples = checkExamples(args.testExamples);
  // Built-in metrics compare each expected field with the prediction's field of that name; a metric
  // function may read the expected outputs any way it likes.
  if ((args.metrics ?? []).every((m) => typeof m === "string")) checkExpectedFields(moduleInstance, examples);
  const fields = describeFields(moduleInstance, examples);
  const metrics = resolveMetrics(args.metrics, fields);
  // Each judge's model, before anything is recorded or called: none, or the offline stand-in, is refused.
  const checks = await modelMetricChecks(args.metrics);
  checks.checkModels(args.metrics);
  const metricNames = metrics.map((m) => m.name);
  const total = examples.length;
  const config = {
    module: moduleInstance.constructor.name, metrics: metricNames, concurrency: ev.concurrency, examples: total, exampleTimeout: ev.exampleTimeout,
    models: modelIds(moduleInstance), ...extraConfig,
  };
  let kept: EvaluationRow[] = [];
  let recorder: RunRecorder;
  if (args.resume === undefined) {
    recorder = await startRecording(ev.record, ev.lab, ev.name, config);
  } else {
    const store = await recordingStore(ev.record, ev.lab);
    if (store === null) {
      throw new ValidationError("Evaluation.evaluate: resume needs the lab store, but recording is off (record: false, lab: null or c.lab = false)", { field: "resume" });
    }
    kept = await keptRows(store, args.resume, config, examples);
    recorder = resumeRecording(store, args.resume, ev.name);
  }
  const { runId } = recorder;
  // The examples' model calls are kept only to be written with their rows.
  const keepCalls = ev.recordCalls && isRecording(recorder);
  const started = performance.now();
  // `progress` lets the notebook display skip a run started with `progress: false`.
  Instrumentation.emit("evaluation.start", {
    runId, name: ev.name, total, concurrency: ev.concurrency, metrics: metricNames, progress: ev.progress !== false,
  });

  const limiter = new AdaptiveConcurrency(ev.concurrency, Date.now, (limit, cause, retryAfterMs) =>
    Instrumentation.emit("evaluation.concurrency", { runId, name: ev.name, limit, cause, retryAfterMs }));
  const bar = progressBar(ev.progress, total, ev.name);
  const rows: EvaluationRow[] = new Array(total);
  const feedback: Record<string, string>[] = new Array(total);
  let done = 0, failures = 0, scoreSum = 0, cost = 0, inputTokens = 0, outputTokens = 0;
  const judge = { calls: 0, inputTokens: 0, outputTokens: 0, cost: 0 };
  const promptCache = emptyPromptCache();
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
    const { row, metricUsage } = outcome;
    tally(row, outcome.feedback);
    addPromptCache(promptCache, outcome.usage);
    if (metricUsage !== undefined) {
      judge.calls += metricUsage.calls;
      judge.inputTokens += metricUsage.inputTokens;
      judge.outputTokens += metricUsage.outputTokens;
      judge.cost += metricUsage.cost;
    }
    recorder.example(row, outcome.calls);
    const score = scoreSum / done;
    Instrumentation.emit("evaluation.example", {
      runId, name: ev.name, index: row.index, exampleId: row.exampleId, error: row.error, scores: row.scores,
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
    if (ev.batch === null) {
      for (let i = 0; i < total; i++) {
        if (have.has(i)) continue;
        await limiter.acquire();
        runExample(moduleInstance, examples[i]!, i, metrics, limiter, ev.exampleTimeout, finishedOnce, keepCalls);
        // An instant model settles every example in microtasks: without this, timers and I/O (a
        // notebook redrawing the progress display) would wait for the whole run.
        const turn = yieldNowAndThen();
        if (turn !== undefined) await turn;
      }
    } else {
      // Batch rounds: every example runs; its model calls are collected, sent as one batch per LM
      // and round, and the examples that waited run again with the replies.
      const settings = ev.batch;
      const store = await recordingStore(ev.record, ev.lab);
      const transport = providerTransport({
        settings, store, runId,
        onProgress: (p) => {
          Instrumentation.emit("evaluation.batch", { runId, name: ev.name, ...p });
          bar.batch(`round ${p.round}: ${p.status} ${p.counts.completed}/${p.counts.total}, ${p.counts.failed} failed`);
        },
      });
      const todo = examples.map((_, i) => i).filter((i) => !have.has(i));
      await runInRounds(todo, (i) => new Promise<ExampleOutcome>((resolve) => {
        void limiter.acquire().then(() => runExample(moduleInstance, examples[i]!, i, metrics, limiter, ev.exampleTimeout, resolve, keepCalls));
      }), transport, { maxRetries: settings.maxRetries, concurrency: Math.max(ev.concurrency, 64), onDone: (_, outcome) => finishedOnce(outcome) });
    }
    await everyExample;
    if (callbackError !== undefined) throw callbackError.error;
  } catch (error) {
    // Only a throwing `onExample` (or a bug) gets here: examples themselves never throw.
    bar.stop();
    const message = describeError(error);
    await recorder.finish({ ok: false, score: null, summary: { done, failures }, error: message });
    Instrumentation.emit("evaluation.end", { runId, name: ev.name, ok: false, error: message, done, total });
    throw error;
  }
  bar.stop();

  const values: Record<string, number> = {};
  for (const metric of metrics) values[metric.name] = aggregate(metric, rows, fields);
  const durationMs = performance.now() - started;
  const failed = rows.filter((r) => r.error !== null);
  const runWarnings = [...warnings, ...checks.oneVerdictWarnings(args.metrics, rows).map((message) => ({ code: JUDGE_ONE_VERDICT, message }))];
  for (const w of runWarnings) warn(runId, ev.name, w);
  const allWarnings = runWarnings.map((w) => w.message);
  const summary = {
    metrics: values, failures: failed.length, total, inputTokens, outputTokens, cost, durationMs, judge,
    ...(allWarnings.length > 0 ? { warnings: allWarnings } : {}),
    ...(usedPromptCache(promptCache) ? { promptCache } : {}),
  };
  const headline = values[metricNames[0]!]!;
  await recorder.finish({ ok: true, score: headline, summary });
  // The registry stores it with the module's next version.
  noteScore(moduleInstance, headline);
  Instrumentation.emit("evaluation.end", {
    runId, name: ev.name, ok: true, ...summary, maxConcurrency: limiter.maxRunning, concurrencyDecreases: limiter.decreases,
    recordError: recorder.failure,
  });
  return new EvaluationReport(
    { metrics: values, results: rows, failures: failed, feedback, inputTokens, outputTokens, cost, durationMs, runId, name: ev.givenName, judge, warnings: allWarnings,
      ...(usedPromptCache(promptCache) ? { promptCache } : {}) },
    fields,
  ) as ReportOf<M>;
}

/**
 * A warning of the run: on the event bus (`evaluation.warning`, which the logger writes at level
 * warn) and as a Node process warning (the terminal); the report and the stored summary keep it.
 */
function warn(runId: string | null, name: string, { code, message }: RunWarning): void {
  Instrumentation.emit("evaluation.warning", { runId, name, code, message });
  process.emitWarning(message, { type: "TypelmWarning", code });
}

/** A warning of the run: its code (as Node process warnings have) and its sentence. */
export interface RunWarning {
  code: string;
  message: string;
}

/** The ids of the models the module's predictors call (`typelm show` names them); [] when none is configured. */
function modelIds(moduleInstance: Module): string[] {
  let configured: LanguageModel | undefined;
  try {
    configured = resolveLM(undefined, undefined);
  } catch {
    configured = undefined; // every example will fail and say so; the run still records
  }
  const ids = [...predictorLMs(moduleInstance, configured).values()].map((lm) => lm?.id);
  return [...new Set(ids.filter((id): id is string => typeof id === "string"))];
}

/**
 * The rows of run `runId` that can be kept for these examples: the run must be an evaluation started
 * with the same configuration (module class, metrics, number of examples), and a row is kept when its
 * example id is the example's at that position.
 */
async function keptRows(store: Store, runId: string, config: Record<string, unknown>, examples: readonly FewShotExample[]): Promise<EvaluationRow[]> {
  const run = await store.run(runId);
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
