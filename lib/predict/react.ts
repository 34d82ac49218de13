/**
 * ReAct: the model alternates thought → action → tool input, sees each tool's observation, and
 * finishes when it has enough; then an extractor turns the trajectory into the typed outputs.
 *
 * Both model calls are ordinary predictors held in properties (`step`, `extract`), so
 * `namedPredictors()`, `dumpState()` and optimizers see and tune them like any other predictor.
 * This module is the class's face: its constructor's body (options, predictors) loads at the first
 * ReAct built (react-setup.ts), its run at the first call (react-run.ts, and react-native.ts for
 * native tool calls).
 */
import type { CallOptions } from "../module.js";
import type { InputOf, OutputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import { StepExtractAgent } from "./agent-base.js";
import type { AgentTool } from "./agent-options.js";
import type { Predict } from "./predict.js";
import { reactSetup } from "./react-setup.js";
import type { Typed } from "./prediction.js";

/** One turn of a ReAct run. `observation` is the tool's value, or an error message the model was shown. */
export interface ReActStep {
  step: number;
  thought: string;
  /** The tool name the model chose, or "finish". */
  action: string;
  toolInput: Record<string, unknown>;
  /** The tool's result on success; a string starting with "Error:" otherwise; null for "finish". */
  observation: unknown;
  /** Native tool calling: the provider's id of the call this step ran (absent in text mode). */
  callId?: string;
}

/** How ReAct reaches its tools: the provider's native function calling, the text protocol, or native where the model supports it. */
export type ToolCalling = "native" | "text" | "auto";

/** Options of `new ReAct(signature, options)`: the tools, the turn limit and how much of each observation the model sees. */
export interface ReActOptions {
  tools?: readonly AgentTool[];
  /** Model turns before the agent stops and extracts what it has. Default 10. */
  maxIterations?: number;
  /** Characters of each observation shown in the trajectory (the history keeps it whole). Default 4000. */
  maxObservationChars?: number;
  /**
   * "native": the tools go to the provider as function definitions and its tool calls are read
   * back (several in one turn run at once); "text": the prompt protocol (thought, action, tool
   * input as output fields); "auto" (default): native where the model declares tool support.
   */
  toolCalling?: ToolCalling;
  /** Native tool calling: how many tool calls of one turn run at once. Default 4. */
  maxParallelCalls?: number;
}

/** A ReAct result: the signature's outputs plus the steps taken. */
export type ReActResult<O extends Shape> = Typed<OutputOf<O>> & { history: ReActStep[] };

export const FINISH = "finish";

/** Reasoning and acting with tools until the model finishes; then extraction of the typed outputs. */
export class ReAct<I extends Shape = Shape, O extends Shape = Shape> extends StepExtractAgent<I, O, ReActResult<O>> {
  /** Chooses the next thought, action and tool input from the task inputs and the trajectory. */
  step: Predict;
  /** Turns the task inputs and the trajectory into the signature's outputs. */
  extract: Predict;
  protected readonly toolsByName: Map<string, AgentTool>;
  /** How the tools are reached: "native", "text" or "auto" (see `ReActOptions.toolCalling`). */
  readonly toolCalling: ToolCalling;
  /** Native tool calling: tool calls of one turn run at once, at most this many together. */
  readonly maxParallelCalls: number;

  constructor(signature: SignatureClass<I, O>, options: ReActOptions = {}) {
    super("ReAct", signature, options, 10);
    // The options' checks and the predictors are built by react-setup.ts, loaded at the first ReAct.
    const parts = reactSetup(signature, options);
    this.toolCalling = parts.toolCalling;
    this.maxParallelCalls = parts.maxParallelCalls;
    this.toolsByName = parts.toolsByName;
    this.step = parts.step;
    this.extract = parts.extract;
  }

  protected async run(inputs: InputOf<I>, options: CallOptions): Promise<ReActResult<O>> {
    // The loops (the text protocol, native tool calls) and the trajectory load at the first call: react-run.ts.
    const { runReAct } = await import("./react-run.js");
    return (await runReAct(this, this.toolsByName, inputs as Record<string, unknown>, options)) as ReActResult<O>;
  }
}
