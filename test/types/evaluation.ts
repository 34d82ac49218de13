// Type-level tests of the evaluation report: compiled by `tsc --noEmit`, never executed.
// Each `@ts-expect-error` line must fail to compile, or tsc reports an unused directive.
import { z } from "zod";
import { Evaluation, FewShotExample, Predict, Signature } from "../../lib/index.js";

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function assertType<T extends true>(_: T): void {}

export async function evaluationReport(): Promise<void> {
  const moduleInstance = new Predict(Classify);
  const testExamples = [new FewShotExample({ input: { sentence: "good" }, output: { sentiment: "positive" } })];
  const evaluation = new Evaluation({ record: false });

  // Built-in names asked for are numbers on the report, next to an inline metric function whose
  // parameters are typed from the Metric type.
  const r = await evaluation.evaluate({
    moduleInstance, testExamples,
    metrics: ["accuracy", "f1_score", (example, prediction) => example.output["sentiment"] === prediction["sentiment"]],
  });
  assertType<Equal<typeof r.accuracy, number>>(true);
  assertType<Equal<typeof r.f1_score, number>>(true);
  // @ts-expect-error token_f1 was not asked for
  const notAsked: number = r.token_f1;

  // With no metrics the default metric is reported as accuracy.
  const d = await evaluation.evaluate({ moduleInstance, testExamples });
  assertType<Equal<typeof d.accuracy, number>>(true);

  // @ts-expect-error an unknown metric name is a type error too
  await evaluation.evaluate({ moduleInstance, testExamples, metrics: ["precision"] });

  const stats = r.perLabel()["positive"];
  assertType<Equal<typeof stats, { precision: number; recall: number; f1: number; support: number } | undefined>>(true);
  void notAsked;
}
