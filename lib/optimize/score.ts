import { Evaluation } from "../evaluate/evaluation.js";
import { metricScore, type Metric } from "../evaluate/metric.js";
import type { ExampleOutcome } from "../evaluate/run-example.js";
import { RESERVED_NAMES } from "../evaluate/scoring.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { ExampleScore } from "../store/records.js";
import type { ScoreMemo } from "./memo.js";
import { TrialError } from "./recorder.js";
import type { BatchOption } from "../evaluate/batch-transport.js";

export interface Scored {
  /** Mean over the examples; a failed example (provider error, bad reply, metric error) counts 0. */
  score: number;
  /** One entry per example, in the order given; `error` set for a failed example. */
  exampleScores: ExampleScore[];
  /** `id: error` of the examples that failed (they are in the mean as 0). */
  failures: string[];
  /** Examples whose score came from the memo: no model or metric call was made for them. */
  reused: number;
  /** Examples run and scored now (`examples.length - reused`): the metric calls this scoring made or tried. */
  ran: number;
}

export interface ScoreOptions {
  /** Called as each example that is run finishes (not for reused ones), with its trace and feedback. */
  onExample?: (outcome: ExampleOutcome) => void;
  /**
   * Reuse and record scores by (configuration, example): an example the memo knows for `config` is
   * not run; every example run is recorded in it. Omit it for a scoring whose traces are needed
   * (GEPA's reflection reads what the program did on each example).
   */
  memo?: { memo: ScoreMemo; config: string };
  /** Told how many examples are about to be run (those not reused), before any is: GEPA spends its budget here. */
  beforeRun?: (count: number) => void;
  /** Seconds per example (program call plus metric) before it counts as failed with a timeout error (default 600). */
  exampleTimeout?: number;
  /** Run the examples' model calls through the provider's batch service (see `Evaluation`'s `batch`). */
  batch?: BatchOption;
}

/**
 * The name a metric's scores go under in the scoring's rows (and GEPA's feedback): its function name,
 * or "metric" when it has none or has one a report refuses (`__proto__`, ...), which is no reason to
 * refuse an optimizer's metric.
 */
export function scoringName(metric: Metric): string {
  const name = metric.name || "metric";
  return RESERVED_NAMES.has(name) ? "metric" : name;
}

/**
 * Scores a program on examples with `Evaluation` (not recorded as an evaluation run of its own: the
 * optimizer records the trial). Each example scores on its own: a program call that fails, a metric
 * that throws, or a metric returning something other than a score in [0, 1] (NaN, 7, "x") makes that
 * example score 0 with its error in `exampleScores`, and so does one that takes longer than
 * `exampleTimeout` (its error says it timed out). Only when MORE than half of the examples failed
 * does the scoring throw a `TrialError` (carrying the per-example scores), so the optimizer records
 * the trial as failed with a null score: a mean made mostly of failures says nothing about the
 * configuration.
 *
 * The fifth argument may also be an `onExample` function (the earlier signature).
 */
export async function scoreOn(
  program: Module, examples: readonly { example: FewShotExample; id: string }[], metric: Metric, concurrency: number,
  options: ScoreOptions | ScoreOptions["onExample"] = {},
): Promise<Scored> {
  const { onExample, memo, beforeRun, exampleTimeout, batch } = typeof options === "function" ? { onExample: options } as ScoreOptions : options;
  const name = scoringName(metric);
  const results: (ExampleScore | undefined)[] = examples.map(({ id }) => {
    const known = memo?.memo.get(memo.config, id);
    return known === undefined ? undefined : { exampleId: id, score: known.score, error: known.error };
  });
  const toRun = examples.flatMap((e, i) => (results[i] === undefined ? [{ ...e, at: i }] : []));
  const reused = examples.length - toRun.length;
  beforeRun?.(toRun.length);
  if (toRun.length > 0) {
    const scorer = {
      // Score and feedback (the feedback reaches `onExample`: GEPA reflects on it). A throw, or a
      // result metricScore refuses, becomes that example's error in the Evaluation's row.
      [name]: async (ex: FewShotExample, p: Record<string, unknown>, trace?: Parameters<Metric>[2]) => metricScore(await metric(ex, p, trace), name),
    }[name]!;
    const report = await new Evaluation({ record: false, lab: null, progress: false, concurrency, exampleTimeout, ...(batch ? { batch } : {}) }).evaluate({
      moduleInstance: program, testExamples: toRun.map((e) => e.example), metrics: [scorer], onExample,
    });
    report.results.forEach((row, k) => {
      const { id, at } = toRun[k]!;
      const entry: ExampleScore = { exampleId: id, score: row.error === null ? row.scores[name] ?? 0 : 0, error: row.error };
      results[at] = entry;
      memo?.memo.set(memo.config, id, { score: entry.score, error: entry.error });
    });
  }
  const exampleScores = results as ExampleScore[];
  const failed = exampleScores.filter((e) => e.error !== null);
  const failures = failed.map((e) => `${e.exampleId}: ${e.error}`);
  const score = exampleScores.reduce((s, e) => s + e.score, 0) / Math.max(1, exampleScores.length);
  if (failed.length * 2 > exampleScores.length) {
    throw new TrialError(
      `${failed.length} of ${exampleScores.length} examples failed (more than half), so the trial has no score; ` +
        `first: example ${failed[0]!.exampleId}: ${failed[0]!.error}`,
      { exampleScores, reused, data: { failures } },
    );
  }
  return { score, exampleScores, failures, reused, ran: toRun.length };
}
