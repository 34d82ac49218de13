// The viewer's statistics that take seconds on a large run, computed off the server's event loop: a
// worker thread receives one metric's scores (a Float64Array, transferred) and answers with their
// mean's BCa interval, as `typelm show` computes it; or two runs' scores and answers with their
// comparisons, as `typelm compare` computes them. Loaded only by lib/view/intervals.ts, as a file of its own.
import { parentPort } from "node:worker_threads";
import { ValidationError } from "../errors.js";
import { adjustComparisons, compare, type Comparison } from "../evaluate/compare.js";
import { bcaInterval, meanStatistic } from "../evaluate/stats.js";
import type { EvaluationRow } from "../store/records.js";

/** One run as a comparison of mean metrics reads it: each row's pairing id and each metric's scores, in row order. */
export interface PackedRun {
  ids: string[];
  metrics: Record<string, number>;
  scores: Record<string, Float64Array>;
}

/** One job: a mean's interval over the scores of every row of a run, or two runs compared on `metrics`. */
export type IntervalJob =
  | { id: number; kind: "mean"; scores: Float64Array }
  | { id: number; kind: "compare"; a: PackedRun; b: PackedRun; metrics: string[] };

/** Its answer, or why it could not be computed (`validation` when the input was at fault: a `ValidationError`). */
export type IntervalAnswer =
  | { id: number; ci: [number, number] }
  | { id: number; comparisons: (Comparison & { pAdjusted: number })[] }
  | { id: number; error: string; validation: boolean; field?: string };

/**
 * The rows `compare` reads of a comparison of mean metrics: pairing id, index and scores (a missing
 * score was packed as 0, which is what `compare` counts it as); nothing else, so that a large run's
 * rows cost little memory here.
 */
function rows(run: PackedRun): EvaluationRow[] {
  const metrics = Object.entries(run.scores);
  return run.ids.map((id, i) => {
    const scores: Record<string, number> = {};
    for (const [m, s] of metrics) scores[m] = s[i]!;
    return { index: i, exampleId: id, scores } as unknown as EvaluationRow;
  });
}

parentPort?.on("message", (job: IntervalJob) => {
  let answer: IntervalAnswer;
  try {
    if (job.kind === "mean") {
      answer = { id: job.id, ci: bcaInterval(job.scores.length, meanStatistic(job.scores)) };
    } else {
      const a = { results: rows(job.a), metrics: job.a.metrics };
      const b = { results: rows(job.b), metrics: job.b.metrics };
      answer = { id: job.id, comparisons: adjustComparisons(job.metrics.map((metric) => compare(a, b, { metric }))) };
    }
  } catch (error) {
    const validation = error instanceof ValidationError;
    answer = { id: job.id, error: error instanceof Error ? error.message : String(error), validation, field: validation ? error.field : undefined };
  }
  parentPort!.postMessage(answer);
});
