/**
 * The bodies behind `ProgramOfThought` (lib/predict/program-of-thought.ts): its constructor's option
 * checks and its `generate` and `repair` predictors, and the turning of agent-level demos into
 * programs that hand the demo's outputs to `answer(...)`. Deferred (scripts/deferred-modules.mjs):
 * loaded at the first ProgramOfThought built, so `import "typelm"` parses only the class's facade.
 */
import { z } from "zod";
import type { FewShotExample } from "../prompt/few-shot.js";
import { compiled, type CompiledSignature } from "../signature/compile.js";
import type { SignatureClass } from "../signature/signature.js";
import { valueToWire } from "../signature/wire.js";
import type { AgentSandboxOptions } from "./agent-code.js";
import { positiveInt } from "./agent-options.js";
import { demoFits, deriveSignature, taskInstruction, withOutput } from "./agent-signature.js";
import { Predict } from "./predict.js";
import type { ProgramOfThoughtOptions } from "./program-of-thought.js";

/** What `new ProgramOfThought(signature, options)` sets besides its signature, checked in this order. */
export function programOfThoughtSetup(
  signature: SignatureClass,
  options: ProgramOfThoughtOptions,
): { maxRepairs: number; sandboxOptions: AgentSandboxOptions; generate: Predict; repair: Predict } {
  const sig = compiled(signature);
  const maxRepairs = positiveInt("ProgramOfThought", "maxRepairs", options.maxRepairs, 3, 0);
  const sandboxOptions = { ...(options.sandbox ?? {}) };
  const fields = sig.outputs.map((f) => f.name).join(", ");
  const how =
    `Write a JavaScript program that computes the output fields (${fields}). The program reads the task inputs ` +
    "from the global `inputs` (e.g. `inputs.question`) and ends by calling `answer({ ... })` with every output field. " +
    "Plain JavaScript only: no TypeScript, no imports, no network or files; top-level await works.";
  const { $schema: _drop, ...outputSchema } = sig.outputJsonSchema;
  const code = z
    .string()
    .describe(`The JavaScript program. It must call answer({ ... }) with an object matching this JSON Schema: ${JSON.stringify(outputSchema)}`);
  const generate = new Predict(
    deriveSignature(signature, { agent: "ProgramOfThought", suffix: "ProgramGenerate", description: taskInstruction(sig.description, how), output: { code } }),
  );
  const repair = new Predict(
    deriveSignature(signature, {
      agent: "ProgramOfThought",
      suffix: "ProgramRepair",
      description: taskInstruction(sig.description, `${how} The previous program failed: fix it and give the whole corrected program.`),
      extraInputs: {
        previousCode: z.string().describe("The program that failed"),
        error: z.string().describe("What went wrong when it ran, and what it printed"),
      },
      output: { code },
    }),
  );
  return { maxRepairs, sandboxOptions, generate, repair };
}

/**
 * The generator's demos from agent-level demos: demos of the task's own outputs become programs that
 * hand those outputs to `answer(...)`; demos whose output is `{ code }` are used as they are.
 */
export function programDemos(signature: SignatureClass, generate: Predict, demos: FewShotExample[]): FewShotExample[] {
  const codeShape = generate.compiledSignature.outputShape;
  const sig = compiled(signature);
  return demos.map((d) => (demoFits(d, codeShape) ? d : withOutput(d, { code: answerProgram(sig, d.output) })));
}

/** A program that hands over a demo's outputs: shows the model the exact form of the answer call. */
function answerProgram(sig: CompiledSignature, output: Record<string, unknown>): string {
  const wire: Record<string, unknown> = {};
  for (const f of sig.outputs) {
    if (output[f.name] !== undefined) wire[f.name] = valueToWire(f.schema, output[f.name]);
  }
  return `answer(${JSON.stringify(wire)});`;
}
