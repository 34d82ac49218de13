// The judges' work behind their calls, loaded at the first call (Judge.forward and Judge.judge,
// PairwiseJudge.forward), so `import "typelm"` loads only the judges' constructors and getters.
import { ValidationError } from "../errors.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { withTrace } from "../predict/trace.js";
import { isPlainObject } from "../plain-object.js";
import type { Judge, JudgeInput, JudgeOutput } from "./judge.js";
import type { PairwiseInput, PairwiseJudge } from "./pairwise.js";

/** `Judge.forward`'s input checked and laid out as its predictor's inputs (`inputs`, `answer`, and `reference` when judged against one). */
export function judgeValues(judge: Judge, input: JudgeInput): Record<string, unknown> {
  if (input === null || typeof input !== "object" || !isPlainObject(input.inputs) || !isPlainObject(input.prediction)) {
    throw new ValidationError(
      `Judge "${judge.name}": expected { inputs: {...}, prediction: {...}${judge.reference ? ", expected: {...}" : ""} }, the judged program's inputs and outputs`,
      { field: "input" },
    );
  }
  const values: Record<string, unknown> = { inputs: input.inputs, answer: input.prediction };
  if (judge.reference) {
    if (!isPlainObject(input.expected)) {
      throw new ValidationError(`Judge "${judge.name}" judges against the reference (reference: true) but was given no expected outputs`, { field: "expected" });
    }
    values["reference"] = input.expected;
  }
  return values;
}

/**
 * The judge's answer on one prediction of an example (`Judge.judge`), its inputs and outputs in their
 * JSON form. The judge's own predictor calls stay out of the caller's trace.
 */
export async function judgeUntraced(judge: Judge, example: FewShotExample, prediction: Record<string, unknown>): Promise<JudgeOutput> {
  const input: JudgeInput = { inputs: jsonValue(example.input), prediction: jsonValue(prediction) };
  if (judge.reference) input.expected = jsonValue(example.output);
  const { result } = await withTrace(() => judge.call(input), []);
  return result;
}

/** `PairwiseJudge.forward`'s input checked and laid out as its predictor's inputs. */
export function pairwiseValues(judge: PairwiseJudge, input: PairwiseInput): Record<string, unknown> {
  if (input === null || typeof input !== "object" || !isPlainObject(input.inputs) || !isPlainObject(input.first) || !isPlainObject(input.second)) {
    throw new ValidationError("PairwiseJudge: expected { inputs: {...}, first: {...}, second: {...} }", { field: "input" });
  }
  const values: Record<string, unknown> = { inputs: input.inputs, first: input.first, second: input.second };
  if (judge.reference) {
    if (!isPlainObject(input.expected)) throw new ValidationError("PairwiseJudge with reference: true was given no expected outputs", { field: "expected" });
    values["reference"] = input.expected;
  }
  return values;
}

/** A value in its JSON form (dates as ISO text, a Prediction as its fields). */
function jsonValue(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}
