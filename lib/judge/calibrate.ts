import { ValidationError } from "../errors.js";
import { Evaluation, type EvaluationOptions } from "../evaluate/evaluation.js";
import type { EvaluationReport } from "../evaluate/report.js";
import type { Interval } from "../evaluate/stats.js";
import { FewShotExample } from "../prompt/few-shot.js";
import { isPlainObject } from "../plain-object.js";
import type { Judge } from "./judge.js";
import { cohenKappa, confusionOf } from "./kappa.js";
import { SemanticF1 } from "./semantic-f1.js";

/** How far a judge agrees with people: what `calibrate` returns. */
export interface Calibration {
  /** Examples compared: those the judge answered. */
  n: number;
  /** Examples the judge could not answer (provider error, unusable reply): left out of every figure below. */
  failures: number;
  /** Share of examples where the judge's verdict (or score) equals the human one. */
  accuracy: number;
  /** Cohen's κ: agreement beyond chance (1 perfect, 0 what chance gives, < 0 worse). NaN when undefined (one category only). */
  kappa: number;
  /** 95% interval of κ: κ ± 1.96·SE with the large-sample SE of Fleiss, Cohen & Everitt (1969); see `kappaCiMethod`. */
  kappaCi: Interval;
  /** How `kappaCi` (and `weightedKappaCi`) were computed. */
  kappaCiMethod: "fleiss-cohen-everitt";
  /** Human label (row) against the judge's (column), in the scale's order. */
  confusion: { labels: string[]; matrix: number[][] };
  /** Numeric scales only: κ with quadratic weights (a 4 where people said 5 counts as near agreement). */
  weightedKappa?: number;
  weightedKappaCi?: Interval;
  /** The evaluation of the judge over the examples (rows hold its verdicts and rationales). */
  report: EvaluationReport;
}

/**
 * Measures a judge against human labels. Each example holds what was judged as its input,
 * `{ inputs, prediction, expected? }` (`expected` for a judge with `reference: true`), and the human
 * verdict as its expected output: `{ verdict: "pass" | "fail" }`, or `{ score }` on the judge's scale.
 * These are the judge program's own inputs and outputs, so the same examples can train it (an
 * optimizer's `trainset` with agreement as the metric).
 *
 * The judge runs as an evaluation (`options` as for `new Evaluation`, named "calibrate:<judge>"),
 * metric `agreement`. Returns agreement, Cohen's κ with its 95% interval (Fleiss–Cohen–Everitt
 * large-sample standard error), the confusion, and for numeric scales quadratic-weighted κ.
 */
export async function calibrate(judge: Judge, examples: readonly FewShotExample[], options: EvaluationOptions = {}): Promise<Calibration> {
  if (judge instanceof SemanticF1) {
    throw new ValidationError(
      `calibrate: judge "${judge.name}" is a SemanticF1, which gives recall and precision, not a verdict; calibrate a Judge with scale "pass-fail" or { min, max }`,
      { field: "judge" },
    );
  }
  const field = judge.verdictField;
  const labels = judge.labels;
  if (!Array.isArray(examples) || examples.length === 0) {
    throw new ValidationError(`calibrate: expected a non-empty array of human-labelled examples; received ${Array.isArray(examples) ? "[]" : typeof examples}`, { field: "examples" });
  }
  const checked = examples.map((e, i) => {
    const example = e instanceof FewShotExample ? e : FewShotExample.fromJSON(e);
    const human = example.output[field];
    if (!labels.includes(String(human))) {
      throw new ValidationError(
        `calibrate: examples[${i}]${example.id === undefined ? "" : ` (id "${example.id}")`} has human ${field} ${JSON.stringify(human)}; ` +
          `judge "${judge.name}" gives one of ${labels.map((l) => JSON.stringify(l)).join(", ")}. Put the human label in output.${field}`,
        { field: `examples[${i}].output.${field}` },
      );
    }
    if (!isPlainObject(example.input["inputs"]) || !isPlainObject(example.input["prediction"]) || (judge.reference && !isPlainObject(example.input["expected"]))) {
      throw new ValidationError(
        `calibrate: examples[${i}].input must be { inputs: {...}, prediction: {...}${judge.reference ? ", expected: {...}" : ""} }, what the judge is shown`,
        { field: `examples[${i}].input` },
      );
    }
    return example;
  });
  const agreement = (example: FewShotExample, prediction: Record<string, unknown>): boolean => String(prediction[field]) === String(example.output[field]);
  const report = await new Evaluation({ name: `calibrate:${judge.name}`, ...options })
    .evaluate({ moduleInstance: judge, testExamples: checked, metrics: [agreement] });
  const answered = report.results.filter((r) => r.error === null && r.prediction !== null);
  const human = answered.map((r) => String(r.expected[field]));
  const judged = answered.map((r) => String(r.prediction![field]));
  const matrix = confusionOf(labels, human, judged);
  const plain = cohenKappa(matrix);
  const n = answered.length;
  const result: Calibration = {
    n, failures: report.results.length - n,
    accuracy: n === 0 ? 0 : human.filter((h, i) => h === judged[i]).length / n,
    kappa: plain.kappa, kappaCi: plain.ci, kappaCiMethod: "fleiss-cohen-everitt",
    confusion: { labels, matrix },
    report,
  };
  if (judge.scale !== "pass-fail") {
    const weighted = cohenKappa(matrix, "quadratic");
    result.weightedKappa = weighted.kappa;
    result.weightedKappaCi = weighted.ci;
  }
  return result;
}
