// GEPA's reflection prompt: its signature and how the evidence is shown. Apart from the rest of the
// reflection (reflect.ts, loaded with GEPA's run) because GEPA.estimate renders it too.
import { z } from "zod";
import { jsonWithMediaLabels } from "../../media/label.js";
import { Signature } from "../../signature/signature.js";
import { onFirstUse } from "../../load-sync.js";
import type { Evidence } from "./reflect.js";

/** Values as the prompt shows them: JSON, with each media value as its label (kind, type, size, hash). */
const json = jsonWithMediaLabels;

/** GEPA's reflection signature, defined the first time GEPA reflects (see proposalSignatures). */
export function reflectionSignature(): typeof Signature {
  return reflectionSignatureOnce();
}
const reflectionSignatureOnce = onFirstUse(() => {
  /** GEPA's reflection step as a signature of its own, so it runs on any LM that can run a Predict. */
  class ReflectOnFeedback extends Signature {
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
  return ReflectOnFeedback;
});

/** The evidence as the reflection prompt shows it. */
export function evidenceText(evidence: readonly Pick<Evidence, "inputs" | "outputs" | "feedback">[]): string {
  return evidence
    .map((e, i) => `### Example ${i + 1}\nInputs: ${json(e.inputs)}\nGenerated outputs: ${json(e.outputs)}\nFeedback: ${e.feedback}`)
    .join("\n\n");
}
