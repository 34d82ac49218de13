// Type-level tests: how a metric function's score is read from the report. Compiled by
// `tsc --noEmit` (strict), never executed. A function's name is not part of its type, so the report
// cannot carry `report.myMetric` as a typed property; an index signature would have to admit every
// report field's type and would let a typo like `report.resutls` through. The score is typed in
// `report.metrics` (a Record<string, number>), as the README's Evaluation section says.
import { z } from "zod";
import { Evaluation, FewShotExample, Predict, Signature, type EvaluationRow, type Metric } from "../../lib/index.js";

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function assertType<T extends true>(_: T): void {}

const myMetric: Metric = (example, prediction) => example.output["sentiment"] === prediction["sentiment"];

export async function metricFunctionScores(): Promise<void> {
  const r = await new Evaluation({ record: false }).evaluate({
    moduleInstance: new Predict(Classify),
    testExamples: [new FewShotExample({ input: { sentence: "good" }, output: { sentiment: "positive" } })],
    metrics: ["accuracy", myMetric],
  });
  // Every metric, built-in or function, by name (number | undefined here: noUncheckedIndexedAccess).
  assertType<Equal<typeof r.metrics, Record<string, number>>>(true);
  const mine: number | undefined = r.metrics.myMetric;
  const byKey: number | undefined = r.metrics["myMetric"];
  // @ts-expect-error a metric's score is a number
  const asText: string | undefined = r.metrics.myMetric;
  // A built-in name asked for is still a typed property, and the report's fields keep their types.
  assertType<Equal<typeof r.accuracy, number>>(true);
  assertType<Equal<typeof r.results, EvaluationRow[]>>(true);
  assertType<Equal<typeof r.cost, number>>(true);
  // @ts-expect-error a function's name is not known to the type checker: read report.metrics.myMetric
  const untyped = r.myMetric;
  // @ts-expect-error and a misspelt report field is still an error
  const typo = r.resutls;
  void [mine, byKey, asText, untyped, typo];
}
