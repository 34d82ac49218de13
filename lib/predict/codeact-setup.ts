/**
 * The body of `new CodeAct(signature, options)` (lib/predict/codeact.ts): its options checked, the
 * tools keyed by name, and the `step` and `extract` predictors with their derived signatures.
 * Deferred (scripts/deferred-modules.mjs): loaded at the first CodeAct built, so `import "typelm"`
 * parses only the class's facade.
 */
import { z } from "zod";
import { onFirstUse } from "../load-sync.js";
import { compiled } from "../signature/compile.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import type { AgentSandboxOptions } from "./agent-code.js";
import { toolCallingOption, toolMap, type AgentTool } from "./agent-options.js";
import { deriveSignature, taskInstruction } from "./agent-signature.js";
import type { CodeActOptions } from "./codeact.js";
import { Predict } from "./predict.js";
import type { ToolCalling } from "./react.js";

const stepOutput = onFirstUse(() => ({
  thought: z.string().describe("Your reasoning about what to do next, given the trajectory so far"),
  code: z
    .string()
    .nullish()
    .describe(
      "JavaScript to run next (plain JavaScript, no TypeScript, no imports). Top-level await works; variables " +
        "persist between steps; print what you need to see with console.log. Empty when finishing without code",
    ),
  finished: z
    .boolean()
    .default(false)
    .describe("true when the work is done: code given in this step still runs, and the run finishes if it succeeds"),
}));

const trajectoryField = onFirstUse(() => z.string().describe("The steps so far: each step's thought, code, and its output or error"));
const availableToolsField = onFirstUse(() => z.string().describe("Functions your code can call, with the JSON Schema of their argument"));

/** What `new CodeAct(signature, options)` sets besides the step-loop limits, checked in this order. */
export function codeActSetup(
  signature: SignatureClass,
  options: CodeActOptions,
): { toolCalling: ToolCalling; sandboxOptions: AgentSandboxOptions; toolsByName: Map<string, AgentTool>; step: Predict; extract: Predict } {
  const sig = compiled(signature);
  const toolCalling = toolCallingOption("CodeAct", options.toolCalling);
  const sandboxOptions = { ...(options.sandbox ?? {}) };
  const toolsByName = toolMap("CodeAct", options.tools, [], true);
  const outputs = sig.outputs.map((f) => f.name).join(", ");
  const step = new Predict(
    deriveSignature(signature, {
      agent: "CodeAct",
      suffix: "CodeActStep",
      description: taskInstruction(
        sig.description,
        `You work towards the output fields (${outputs}) by writing JavaScript, step by step. The code can read the ` +
          "task inputs as the global `inputs` (e.g. `inputs.question`). After each step you see what the code " +
          "printed, or its error; fix errors and continue, and set finished once the results suffice.",
      ),
      extraInputs: { trajectory: trajectoryField(), availableTools: availableToolsField() },
      output: stepOutput(),
    }),
  );
  const solution: Shape = "solution" in sig.outputShape ? {} : { solution: z.string().describe("The final answer, in words") };
  const extract = new Predict(
    deriveSignature(signature, {
      agent: "CodeAct",
      suffix: "CodeActExtract",
      description: taskInstruction(
        sig.description,
        "Produce the output fields from the inputs and the trajectory of code runs, using their outputs as evidence.",
      ),
      extraInputs: { trajectory: trajectoryField() },
      output: { ...sig.outputShape, ...solution },
    }),
  );
  return { toolCalling, sandboxOptions, toolsByName, step, extract };
}
