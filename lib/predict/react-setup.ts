/**
 * The body of `new ReAct(signature, options)` (lib/predict/react.ts): its options checked, the tools
 * keyed by name, and the `step` and `extract` predictors with their derived signatures. Deferred
 * (scripts/deferred-modules.mjs): loaded at the first ReAct built, so `import "typelm"` parses only
 * the class's facade.
 */
import { z } from "zod";
import { onFirstUse } from "../load-sync.js";
import { compiled } from "../signature/compile.js";
import type { SignatureClass } from "../signature/signature.js";
import { positiveInt, toolCallingOption, toolMap, type AgentTool } from "./agent-options.js";
import { deriveSignature, taskInstruction } from "./agent-signature.js";
import { Predict } from "./predict.js";
import { FINISH, type ReActOptions, type ToolCalling } from "./react.js";

const stepOutput = onFirstUse(() => ({
  thought: z.string().describe("Your reasoning about what to do next, given the trajectory so far"),
  action: z
    .string()
    .describe(`The name of one tool from availableTools to call next, or "${FINISH}" once the trajectory holds enough to produce the final answer`),
  toolInput: z
    .record(z.string(), z.unknown())
    .nullish()
    .describe(`The arguments for the tool, as a JSON object matching its schema ({} for "${FINISH}")`),
}));

const trajectoryField = onFirstUse(() => z.string().describe("What has been done so far: each step's thought, action, tool input and observation"));
const availableToolsField = onFirstUse(() => z.string().describe("The tools you can call, with the JSON Schema of their arguments"));

/** What `new ReAct(signature, options)` sets besides the step-loop limits, checked in this order. */
export function reactSetup(
  signature: SignatureClass,
  options: ReActOptions,
): { toolCalling: ToolCalling; maxParallelCalls: number; toolsByName: Map<string, AgentTool>; step: Predict; extract: Predict } {
  const sig = compiled(signature);
  const toolCalling = toolCallingOption("ReAct", options.toolCalling);
  const maxParallelCalls = positiveInt("ReAct", "maxParallelCalls", options.maxParallelCalls, 4);
  const toolsByName = toolMap("ReAct", options.tools, [FINISH]);
  const outputs = sig.outputs.map((f) => f.name).join(", ");
  const step = new Predict(
    deriveSignature(signature, {
      agent: "ReAct",
      suffix: "ReActStep",
      description: taskInstruction(
        sig.description,
        `You work towards the output fields (${outputs}) step by step. In each step, think, then either call one ` +
          `of the available tools or choose "${FINISH}". Each tool's observation is added to the trajectory.`,
      ),
      extraInputs: { trajectory: trajectoryField(), availableTools: availableToolsField() },
      output: stepOutput(),
    }),
  );
  const extract = new Predict(
    deriveSignature(signature, {
      agent: "ReAct",
      suffix: "ReActExtract",
      description: taskInstruction(
        sig.description,
        "Produce the output fields from the inputs and the trajectory of tool calls, using its observations as evidence.",
      ),
      extraInputs: { trajectory: trajectoryField() },
      output: sig.outputShape,
    }),
  );
  return { toolCalling, maxParallelCalls, toolsByName, step, extract };
}
