/**
 * CodeAct: the model acts by writing JavaScript. Each step's code runs in one QuickJS sandbox per
 * agent run (so variables persist from step to step), the model sees the output or the error and
 * continues or finishes; then an extractor turns the trajectory into the typed outputs and a
 * `solution` text.
 *
 * Model-written code runs only in the sandbox (lib/sandbox), never in the host. The inner
 * predictors (`step`, `extract`) are ordinary properties, so optimizers see and tune them. This
 * module is the class's face: its constructor's body (options, predictors) loads at the first
 * CodeAct built (codeact-setup.ts), its run at the first call (codeact-run.ts, and
 * codeact-native.ts for native tool calls).
 */
import type { CallOptions } from "../module.js";
import type { InputOf, OutputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import type { AgentSandboxOptions } from "./agent-code.js";
import { StepExtractAgent } from "./agent-base.js";
import type { AgentTool } from "./agent-options.js";
import { codeActSetup } from "./codeact-setup.js";
import type { Predict } from "./predict.js";
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
    // The options' checks and the predictors are built by codeact-setup.ts, loaded at the first CodeAct.
    const parts = codeActSetup(signature, options);
    this.toolCalling = parts.toolCalling;
    this.sandboxOptions = parts.sandboxOptions;
    this.toolsByName = parts.toolsByName;
    this.step = parts.step;
    this.extract = parts.extract;
  }

  protected async run(inputs: InputOf<I>, options: CallOptions): Promise<CodeActResult<O>> {
    // The sandbox, the loops (the text protocol, native tool calls) and the trajectory load at the first call: codeact-run.ts.
    const { runCodeAct } = await import("./codeact-run.js");
    return (await runCodeAct(this, this.toolsByName, inputs as Record<string, unknown>, options)) as CodeActResult<O>;
  }
}
