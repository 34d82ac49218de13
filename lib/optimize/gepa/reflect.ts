import { jsonWithMediaLabels } from "../../media/label.js";
import { jsonKeepingMedia } from "../../media/refs.js";
import { metricScore, type Metric, type MetricPredictorArg } from "../../evaluate/metric.js";
import type { ExampleOutcome } from "../../evaluate/run-example.js";
import { DEFAULT_EXAMPLE_TIMEOUT, withExampleTimeout } from "../../evaluate/timeout.js";
import { describeError } from "../../instrument/bus.js";
import type { LanguageModel } from "../../lm/types.js";
import { Predict } from "../../predict/predict.js";
import type { FewShotExample } from "../../prompt/few-shot.js";
import type { Random } from "../../random.js";
import { evidenceText, reflectionSignature } from "./reflection-prompt.js";

/** One example of what a predictor did on a minibatch, with the metric's feedback on the program's answer. */
export interface Evidence {
  exampleId: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
  feedback: string;
  score: number;
  /** Which of the predictor's calls for this example was shown (0-based), and how many it made. */
  call: number;
  calls: number;
  /** Every call of the predictor for this example, for the metric's fourth argument. */
  predictorTrace: MetricPredictorArg["predictorTrace"];
}

const json = jsonWithMediaLabels;

/**
 * The feedback on one example: the metric's own, else (a metric returning a bare score) the expected
 * and the actual outputs, else the program's error.
 */
export function feedbackFor(outcome: ExampleOutcome, metricName: string): string {
  const { row } = outcome;
  if (row.error !== null) return `The program failed on this example: ${row.error}`;
  const given = outcome.feedback[metricName];
  if (given !== undefined && given.trim() !== "") return given;
  const score = row.scores[metricName] ?? 0;
  return `Score ${score}. Expected outputs: ${json(row.expected)}; the program's outputs: ${json(row.prediction)}.`;
}

/** The JSON form of a call's values, media values kept (the metric may look at the picture; the prompt shows its label). */
const plain = (value: unknown) => jsonKeepingMedia(value) as Record<string, unknown>;

/**
 * What `predictor` did on each example of a minibatch: one of the calls it made for that example,
 * drawn with `random` (a predictor called several times per example, in a loop or a refinement, is
 * shown a different call from one example to the next, as DSPy's GEPA draws one); examples where it
 * was never called give no evidence about it. The feedback is the scoring's (see `feedbackFor`);
 * `predictorFeedback` may replace it with what the metric says about this predictor.
 */
export function evidenceFor(predictor: object, outcomes: readonly ExampleOutcome[], ids: readonly string[], metricName: string, random?: Random): Evidence[] {
  return outcomes.flatMap((o, i) => {
    const calls = o.trace.filter((t) => t.predictor === predictor);
    if (calls.length === 0) return [];
    const at = random === undefined || calls.length === 1 ? 0 : random.int(calls.length);
    const predictorTrace = calls.map((c) => ({ inputs: plain(c.inputs), outputs: plain(c.prediction) }));
    return [{
      exampleId: ids[i]!, inputs: predictorTrace[at]!.inputs, outputs: predictorTrace[at]!.outputs, feedback: feedbackFor(o, metricName),
      score: o.row.scores[metricName] ?? 0, call: at, calls: calls.length, predictorTrace,
    }];
  });
}

/**
 * Asks the metric for feedback on one predictor: for each piece of evidence whose example ran (a
 * prediction exists), the metric is called again with a fourth argument, `{ predictor, predictorTrace }`,
 * and its feedback replaces the evidence's. A metric that gives none (a bare score, empty text)
 * leaves the scoring's feedback; one that throws (or returns no score in [0, 1]) is listed in the
 * returned errors and leaves it too, and so does one that takes longer than `exampleTimeout` seconds
 * (default 600; it is abandoned, see `withExampleTimeout`). These calls are not scored runs (the example was run and scored
 * already), so they are not counted as metric calls of the budget.
 */
export async function predictorFeedback(
  metric: Metric, metricName: string, path: string, evidence: readonly Evidence[], byId: ReadonlyMap<string, { example: FewShotExample; outcome: ExampleOutcome }>,
  exampleTimeout = DEFAULT_EXAMPLE_TIMEOUT,
): Promise<{ evidence: Evidence[]; errors: string[]; calls: number }> {
  const errors: string[] = [];
  let calls = 0;
  const out: Evidence[] = [];
  for (const e of evidence) {
    const found = byId.get(e.exampleId);
    const prediction = found?.outcome.prediction ?? null;
    if (found === undefined || prediction === null) {
      out.push(e);
      continue;
    }
    calls++;
    try {
      const r = metricScore(await withExampleTimeout(exampleTimeout, () => `the metric was giving feedback on predictor "${path}"`, async () =>
        metric(found.example, prediction, found.outcome.trace, { predictor: path, predictorTrace: e.predictorTrace })), metricName);
      out.push(r.feedback !== undefined && r.feedback.trim() !== "" ? { ...e, feedback: r.feedback } : e);
    } catch (error) {
      errors.push(`${e.exampleId}: ${describeError(error)}`);
      out.push(e);
    }
  }
  return { evidence: out, errors, calls };
}

/** Asks the reflection LM for a new instruction; a reply that does not parse throws (the caller records it). */
export async function reflect(lm: LanguageModel, step: string, currentInstruction: string, evidence: readonly Evidence[]): Promise<string> {
  const r = await new Predict(reflectionSignature()).call({ step, currentInstruction, examplesWithFeedback: evidenceText(evidence) }, { lm });
  return r.newInstruction.trim();
}
