import { TypelmError } from "../errors.js";
import { Evaluation, type EvaluateArgs } from "../evaluate/evaluation.js";
import { metricScore, type Metric } from "../evaluate/metric.js";
import type { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { describeError } from "../instrument/bus.js";

export interface Scored {
  /** Mean over the examples; a failed example (provider error, bad reply) counts 0. */
  score: number;
  exampleScores: { exampleId: string; score: number }[];
  /** `id: error` of the examples that failed (they are in the mean as 0). */
  failures: string[];
}

/**
 * Scores a program on examples with `Evaluation` (not recorded as an evaluation run of its own: the
 * optimizer records the trial). A metric that throws or returns something other than a score in
 * [0, 1] fails the whole trial with that error, since every score it gives would be suspect.
 */
export async function scoreOn(
  program: Module, examples: readonly { example: FewShotExample; id: string }[], metric: Metric, concurrency: number,
  onExample?: EvaluateArgs<Metric>["onExample"],
): Promise<Scored> {
  const name = metric.name || "metric";
  let metricFailure: { error: unknown; id: string } | undefined;
  const ids = new Map(examples.map(({ example, id }) => [example, id]));
  const scorer = {
    [name]: async (ex: FewShotExample, p: Record<string, unknown>, trace?: Parameters<Metric>[2]) => {
      try {
        // Score and feedback: the feedback reaches `onExample` (GEPA reflects on it).
        return metricScore(await metric(ex, p, trace), name);
      } catch (error) {
        metricFailure ??= { error, id: ids.get(ex) ?? "?" };
        throw error;
      }
    },
  }[name]!;
  const report = await new Evaluation({ record: false, lab: null, progress: false, concurrency }).evaluate({
    moduleInstance: program, testExamples: examples.map((e) => e.example), metrics: [scorer], onExample,
  });
  if (metricFailure !== undefined) {
    const e = metricFailure.error;
    throw new TypelmError(
      `Metric "${name}" failed on example ${metricFailure.id}: ${describeError(e)}; ` +
        "a metric must return a number in [0, 1], a boolean or { score, feedback } for every example",
      { cause: e },
    );
  }
  const exampleScores = report.results.map((row, i) => ({ exampleId: examples[i]!.id, score: row.scores[name] ?? 0 }));
  const failures = report.results.flatMap((row, i) => (row.error === null ? [] : [`${examples[i]!.id}: ${row.error}`]));
  const score = exampleScores.reduce((s, e) => s + e.score, 0) / Math.max(1, exampleScores.length);
  return { score, exampleScores, failures };
}
