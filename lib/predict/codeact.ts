/**
 * CodeAct: the model acts by writing JavaScript. Each step's code runs in one QuickJS sandbox per
 * agent run (so variables persist from step to step), the model sees the output or the error and
 * continues or finishes; then an extractor turns the trajectory into the typed outputs and a
 * `solution` text.
 *
 * Model-written code runs only in the sandbox (lib/sandbox), never in the host. The inner
 * predictors (`step`, `extract`) are ordinary properties, so optimizers see and tune them. This
 * module is the class's face (options, predictors, demos); its run loads at the first call
 * (codeact-run.ts, and codeact-native.ts for native tool calls).
 */
import { z } from "zod";
import { onFirstUse } from "../load-sync.js";
import type { CallOptions } from "../module.js";
import { compiled } from "../signature/compile.js";
import type { InputOf, OutputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import type { AgentSandboxOptions } from "./agent-code.js";
import { StepExtractAgent } from "./agent-base.js";
import { toolCallingOption, toolMap, type AgentTool } from "./agent-options.js";
import { deriveSignature, taskInstruction } from "./agent-signature.js";
import { Predict } from "./predict.js";
import type { Typed } from "./prediction.js";
import type { ToolCalling } from "./react.js";

/** One step of a CodeAct run: the JavaScript the model wrote and what running it gave. */
export interface CodeActStep {
  step: number;
  thought: string;
  code: string;
  /** Captured console output, then `=> value` when the code's last statement has a value. */
  output: string;
  /** What went wrong (a code error, a limit, an unreadable reply), or null. */
  error: string | null;
  /** Native tool calling: the provider's id of the `run_code` call this step ran (absent in text mode). */
  callId?: string;
}

/** Options of `new CodeAct(signature, options)`: the step limit, the tools the code can call, sandbox limits and how much of each output the model sees. */
export interface CodeActOptions {
  /** Model steps before the agent stops and extracts what it has. Default 8. */
  maxIterations?: number;
  /** Tools the code can call as `await name({ ...args })`; names must be JavaScript identifiers. */
  tools?: readonly AgentTool[];
  /** Limits of the sandbox each run gets (time per step, memory, stack, output size). */
  sandbox?: AgentSandboxOptions;
  /** Characters of each step's output shown in the trajectory (the history keeps it whole). Default 4000. */
  maxObservationChars?: number;
  /**
   * "native": the code-writing step uses the provider's function calling (a `run_code` function
   * taking the code, and `finish` taking the output fields); "text": the prompt protocol (thought,
   * code, finished as output fields); "auto" (default): native where the model declares tool support.
   */
  toolCalling?: ToolCalling;
}

/** A CodeAct result: the signature's outputs plus `solution` and the steps taken. */
export type CodeActResult<O extends Shape> = Typed<OutputOf<O>> &
  ("solution" extends keyof O ? {} : { solution: string }) & { history: CodeActStep[] };

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

/** Acting by writing JavaScript that runs in a sandbox, until the model says it is finished. */
export class CodeAct<I extends Shape = Shape, O extends Shape = Shape> extends StepExtractAgent<I, O, CodeActResult<O>> {
  /** Chooses the next thought and code from the task inputs and the trajectory. */
  step: Predict;
  /** Turns the task inputs and the trajectory into the signature's outputs and `solution`. */
  extract: Predict;
  readonly sandboxOptions: AgentSandboxOptions;
  protected readonly toolsByName: Map<string, AgentTool>;
  /** How the code-writing step reaches the model: "native", "text" or "auto" (see `CodeActOptions.toolCalling`). */
  readonly toolCalling: ToolCalling;

  constructor(signature: SignatureClass<I, O>, options: CodeActOptions = {}) {
    super("CodeAct", signature, options, 8);
    const sig = compiled(signature);
    this.toolCalling = toolCallingOption("CodeAct", options.toolCalling);
    this.sandboxOptions = { ...(options.sandbox ?? {}) };
    this.toolsByName = toolMap("CodeAct", options.tools, [], true);
    const outputs = sig.outputs.map((f) => f.name).join(", ");
    this.step = new Predict(
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
    this.extract = new Predict(
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
  }

  protected async run(inputs: InputOf<I>, options: CallOptions): Promise<CodeActResult<O>> {
    // The sandbox, the loops (the text protocol, native tool calls) and the trajectory load at the first call: codeact-run.ts.
    const { runCodeAct } = await import("./codeact-run.js");
    return (await runCodeAct(this, this.toolsByName, inputs as Record<string, unknown>, options)) as CodeActResult<O>;
  }
}
