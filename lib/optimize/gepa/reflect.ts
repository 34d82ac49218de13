import { z } from "zod";
import type { ExampleOutcome } from "../../evaluate/run-example.js";
import type { LanguageModel } from "../../lm/types.js";
import { Predict } from "../../predict/predict.js";
import { Signature } from "../../signature/signature.js";

/** GEPA's reflection step as a signature of its own, so it runs on any LM that can run a Predict. */
export class ReflectOnFeedback extends Signature {
  static override description =
    "I gave an assistant the instruction below for one step of a program. Then come examples of the inputs that step received, " +
    "the outputs it generated, and feedback on how the program's answer could be better. Write a new instruction for the assistant. " +
    "Read the inputs to infer the task and the input format. Read every response and its feedback, and put into the instruction " +
    "all task-specific facts and rules the feedback reveals, since the assistant will not see this feedback later. " +
    "Keep what already works in the current instruction.";
  static override input = {
    step: z.string().describe("the step being improved: its path in the program and its output fields"),
    currentInstruction: z.string(),
    examplesWithFeedback: z.string().describe("for each example: the step's inputs, its generated outputs, and feedback"),
  };
  static override output = { newInstruction: z.string().describe("the complete new instruction, ready to use as is") };
}

/** One example of what a predictor did on a minibatch, with the metric's feedback on the program's answer. */
export interface Evidence {
  exampleId: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
  feedback: string;
  score: number;
}

const json = (value: unknown) => JSON.stringify(value);

/**
 * The feedback on one example: the metric's own, else (a metric returning a bare score) the expected
 * and the actual outputs, else the program's error.
 */
function feedbackFor(outcome: ExampleOutcome, metricName: string): string {
  const { row } = outcome;
  if (row.error !== null) return `The program failed on this example: ${row.error}`;
  const given = outcome.feedback[metricName];
  if (given !== undefined && given.trim() !== "") return given;
  const score = row.scores[metricName] ?? 0;
  return `Score ${score}. Expected outputs: ${json(row.expected)}; the program's outputs: ${json(row.prediction)}.`;
}

/**
 * What `predictor` did on each example of a minibatch: the first call it made for that example
 * (examples where it was never called give no evidence about it).
 */
export function evidenceFor(predictor: object, outcomes: readonly ExampleOutcome[], ids: readonly string[], metricName: string): Evidence[] {
  return outcomes.flatMap((o, i) => {
    const call = o.trace.find((t) => t.predictor === predictor);
    if (call === undefined) return [];
    const outputs = JSON.parse(JSON.stringify(call.prediction)) as Record<string, unknown>;
    const inputs = JSON.parse(JSON.stringify(call.inputs)) as Record<string, unknown>;
    return [{ exampleId: ids[i]!, inputs, outputs, feedback: feedbackFor(o, metricName), score: o.row.scores[metricName] ?? 0 }];
  });
}

function evidenceText(evidence: readonly Evidence[]): string {
  return evidence
    .map((e, i) => `### Example ${i + 1}\nInputs: ${json(e.inputs)}\nGenerated outputs: ${json(e.outputs)}\nFeedback: ${e.feedback}`)
    .join("\n\n");
}

/** Asks the reflection LM for a new instruction; a reply that does not parse throws (the caller records it). */
export async function reflect(lm: LanguageModel, step: string, currentInstruction: string, evidence: readonly Evidence[]): Promise<string> {
  const r = await new Predict(ReflectOnFeedback).call({ step, currentInstruction, examplesWithFeedback: evidenceText(evidence) }, { lm });
  return r.newInstruction.trim();
}
