// The viewer's bootstrap intervals, computed off the server's event loop: a worker thread receives
// one metric's scores (a Float64Array, transferred) and answers with their mean's BCa interval, as
// `typelm show` computes it. Loaded only by lib/view/intervals.ts, as a file of its own.
import { parentPort } from "node:worker_threads";
import { bcaInterval, meanStatistic } from "../evaluate/stats.js";

/** One job: the scores of every row of a run for one metric, in index order. */
export interface IntervalJob {
  id: number;
  scores: Float64Array;
}

/** Its answer: the interval, or why it could not be computed. */
export type IntervalAnswer = { id: number; ci: [number, number] } | { id: number; error: string };

parentPort?.on("message", (job: IntervalJob) => {
  let answer: IntervalAnswer;
  try {
    answer = { id: job.id, ci: bcaInterval(job.scores.length, meanStatistic(job.scores)) };
  } catch (error) {
    answer = { id: job.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(answer);
});
