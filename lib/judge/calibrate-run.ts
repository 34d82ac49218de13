// The work of `calibrate` (lib/judge/calibrate.ts), loaded at its first call so `import "typelm"` does not load it.
import { ValidationError } from "../errors.js";
import { Evaluation, type EvaluationOptions } from "../evaluate/evaluation.js";
import { FewShotExample } from "../prompt/few-shot.js";
import { isPlainObject } from "../plain-object.js";
import type { Calibration } from "./calibrate.js";
import type { Judge } from "./judge.js";
import { cohenKappa, confusionOf } from "./kappa.js";
import { SemanticF1 } from "./semantic-f1.js";

/** `calibrate`, loaded at its first call (lib/judge/calibrate.ts). */
export async function calibrateRun(judge: Judge, examples: readonly FewShotExample[], options: EvaluationOptions = {}): Promise<Calibration> {
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
    kappa: plain.kappa, kappaCi: plain.ci, kappaCiMethod: "fleiss-cohen-everitt-pseudocounts",
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
