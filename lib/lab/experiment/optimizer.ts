// The optimizer an experiment names (mipro, gepa, simple, or a function of its own), made for one model
// and seed, and the metric it maximizes: the experiment's first, scored per example.
import { ValidationError } from "../../errors.js";
import { describeFields } from "../../evaluate/fields.js";
import { isMetricObject, type Metric } from "../../evaluate/metric.js";
import { type MetricSpec, resolveMetrics } from "../../evaluate/scoring.js";
import type { Module } from "../../module.js";
import { GEPA } from "../../optimize/gepa/gepa.js";
import { MIPROv2 } from "../../optimize/mipro.js";
import { SimpleOptimizer } from "../../optimize/simple.js";
import { FewShotExample } from "../../prompt/few-shot.js";
import type { SignatureClass } from "../../signature/signature.js";
import type { ExperimentDefinition, ExperimentOptimizer } from "./define.js";
import type { ModelChoice } from "./model-choice.js";
import { inUserCode } from "./user-code.js";

export function makeOptimizer(
  def: ExperimentDefinition, name: string,
  c: { choice: ModelChoice; seed: number; metric: Metric; signature: SignatureClass; trainSize: number },
): ExperimentOptimizer {
  const metric = c.metric;
  if (typeof def.optimizer === "function") {
    const optimizer = def.optimizer;
    const made = inUserCode("the experiment's optimizer function", () => optimizer({ signature: c.signature, lm: c.choice.lm, seed: c.seed, metric }));
    if (made === null || typeof made !== "object" || typeof (made as ExperimentOptimizer).compile !== "function") {
      throw new ValidationError(`experiment "${def.name}": the optimizer function must return an optimizer (an object with compile()); it returned ${typeof made}`, { field: "optimizer" });
    }
    return made;
  }
  const given = (def.optimizerOptions ?? {}) as Record<string, unknown>;
  const common = { seed: c.seed, metric, ...given };
  switch (name) {
    case "mipro":
      return new MIPROv2({ promptModel: c.choice.lm, ...common, kDemos: demos(given.kDemos, c.trainSize) });
    case "gepa":
      return new GEPA({ reflectionLM: c.choice.lm, ...common }) as unknown as ExperimentOptimizer;
    case "simple":
      return new SimpleOptimizer({ ...common, kDemos: demos(given.kDemos, c.trainSize) }) as unknown as ExperimentOptimizer;
    default:
      throw new ValidationError(`experiment "${def.name}": unknown optimizer "${name}"; the known ones are "mipro", "gepa", "simple", "none"`, { field: "optimizer" });
  }
}

/**
 * What the optimizer maximizes: the experiment's first metric, scored per example as the evaluation
 * scores a row. A function or a judge (its `metric`) is used as it is; a built-in name becomes a function of that name (the
 * optimization run's `config.metric`): accuracy 1 when every expected field equals the prediction's,
 * exact_match after SQuAD normalisation, token_f1 the mean token F1 over the fields, and f1_score,
 * whose macro-F1 exists only over a whole set, 1/0 for a label field's correctness and token F1 for
 * free text. Fields are told label or free text from the program and the examples the optimizer sees.
 */
export function optimizerMetric(spec: MetricSpec, program: Module, examples: readonly FewShotExample[]): Metric {
  if (typeof spec === "function") return spec;
  // A judge as it is: its rationale is the feedback GEPA reflects on.
  if (isMetricObject(spec)) return spec.metric;
  const resolved = resolveMetrics([spec], describeFields(program, examples))[0]!;
  const metric: Metric = async (example, prediction) => (await resolved.score(example, prediction, [])).score;
  Object.defineProperty(metric, "name", { value: resolved.name });
  return metric;
}

/**
 * A small --limit leaves fewer training examples than the demos asked for: use them all rather than
 * stop after the baseline. A kDemos that is no count goes to the constructor as given, which refuses it.
 */
export function demos(given: unknown, trainSize: number): number {
  if (given === undefined) return Math.min(4, trainSize);
  return typeof given === "number" && Number.isInteger(given) && given >= 0 ? Math.min(given, trainSize) : given as number;
}

export function optimizerLabel(name: string): string {
  return ({ mipro: "MIPROv2", gepa: "GEPA", simple: "SimpleOptimizer" } as Record<string, string>)[name] ?? name;
}
