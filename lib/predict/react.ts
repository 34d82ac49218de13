/**
 * ReAct: the model alternates thought → action → tool input, sees each tool's observation, and
 * finishes when it has enough; then an extractor turns the trajectory into the typed outputs.
 *
 * Both model calls are ordinary predictors held in properties (`step`, `extract`), so
 * `namedPredictors()`, `dumpState()` and optimizers see and tune them like any other predictor.
 */
import { z } from "zod";
import { onFirstUse } from "../load-sync.js";
import { validateInputs } from "../convert/input.js";
import { resolveLM } from "../config.js";
import { ConfigurationError, OutputError, ValidationError, preview } from "../errors.js";
import { Instrumentation } from "../instrument/bus.js";
import type { CallOptions } from "../module.js";
import { compiled } from "../signature/compile.js";
import type { InputOf, OutputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import { agentResult, extractOrFail } from "./agent-loop.js";
import { deriveSignature, taskInstruction } from "./agent-signature.js";
import { clip, describeTools, invokeSafely, renderValue, toolMap, type AgentTool } from "./agent-tools.js";
import { StepExtractAgent } from "./agent-base.js";
import { Predict } from "./predict.js";
import { emitStep } from "../stream/context.js";
import type { Prediction, Typed } from "./prediction.js";
import { positiveInt } from "./agent-loop.js";
import type { LanguageModel } from "../lm/types.js";

/** The `toolCalling` option checked: "auto" when omitted. */
function toolCallingOption(value: unknown): ToolCalling {
  if (value === undefined) return "auto";
  if (value === "native" || value === "text" || value === "auto") return value;
  throw new ValidationError(`ReAct option toolCalling: expected "native", "text" or "auto", received ${preview(value)}`, { field: "toolCalling" });
}

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
    const sig = compiled(signature);
    this.toolCalling = toolCallingOption(options.toolCalling);
    this.maxParallelCalls = positiveInt("ReAct", "maxParallelCalls", options.maxParallelCalls, 4);
    this.toolsByName = toolMap("ReAct", options.tools, [FINISH]);
    const outputs = sig.outputs.map((f) => f.name).join(", ");
    this.step = new Predict(
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
    this.extract = new Predict(
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
  }

  protected async run(inputs: InputOf<I>, options: CallOptions): Promise<ReActResult<O>> {
    const values = validateInputs(compiled(this.signature), inputs);
    const callOptions: CallOptions = options.lm === undefined ? {} : { lm: options.lm };
    const history: ReActStep[] = [];
    const availableTools = this.availableTools();
    const agent = `ReAct(${compiled(this.signature).name})`;
    if (this.toolCalling !== "text") {
      const lm = resolveLM(options.lm, this.step.config.lm);
      const supported = lm.supportsToolCalling?.() === true;
      if (this.toolCalling === "native" && !supported) {
        throw new ConfigurationError(
          `${agent}: toolCalling "native" needs a model that takes tool definitions; ${lm.id} does not declare tool support (use "auto" or "text")`,
        );
      }
      if (supported) return this.runNative(values, lm, agent, availableTools, callOptions);
    }

    for (let i = 1; i <= this.maxIterations; i++) {
      let turn: Prediction & { thought: string; action: string; toolInput: Record<string, unknown> | null };
      try {
        turn = (await this.step.call({ ...values, trajectory: this.trajectory(history), availableTools }, callOptions)) as unknown as typeof turn;
      } catch (error) {
        if (!(error instanceof OutputError)) throw error;
        // A malformed turn costs an iteration but not the run: the model sees why and tries again.
        history.push({
          step: i, thought: "", action: "", toolInput: {},
          observation: `Error: your reply could not be read (${error.message}); reply with thought, action and toolInput`,
        });
        emitStep(this, history[history.length - 1]);
        Instrumentation.emit("react.iteration", { agent, step: i, action: "", ok: false });
        continue;
      }
      const action = turn.action.trim();
      const toolInput = turn.toolInput ?? {};
      if (action.toLowerCase() === FINISH) {
        history.push({ step: i, thought: turn.thought, action: FINISH, toolInput, observation: null });
        emitStep(this, history[history.length - 1]);
        Instrumentation.emit("react.iteration", { agent, step: i, action: FINISH, ok: true });
        const extracted = await this.extract.call({ ...values, trajectory: this.trajectory(history) }, callOptions);
        return agentResult(extracted, { history }) as ReActResult<O>;
      }
      const { observation, ok } = await this.act(action, toolInput);
      history.push({ step: i, thought: turn.thought, action, toolInput, observation });
      emitStep(this, history[history.length - 1]);
      Instrumentation.emit("react.iteration", { agent, step: i, action, ok });
    }

    const extracted = await extractOrFail(agent, this.maxIterations, history, () =>
      this.extract.call({ ...values, trajectory: this.trajectory(history) }, callOptions),
    );
    return agentResult(extracted, { history }) as ReActResult<O>;
  }

  /** The native tool-calling loop (react-native.ts, loaded at its first use). */
  private async runNative(
    values: Record<string, unknown>, lm: LanguageModel, agent: string, availableTools: string, callOptions: CallOptions,
  ): Promise<ReActResult<O>> {
    const { runNative } = await import("./react-native.js");
    const trajectory = (h: readonly ReActStep[]): string => this.trajectory(h);
    const { prediction, history } = await runNative({
      name: agent, signature: this.nativeSignature(), step: this.step, extract: this.extract, tools: this.toolsByName,
      maxIterations: this.maxIterations, maxObservationChars: this.maxObservationChars, maxParallelCalls: this.maxParallelCalls,
      trajectory, availableTools,
      extractAtEnd: (history) => extractOrFail(agent, this.maxIterations, history, () =>
        this.extract.call({ ...values, trajectory: trajectory(history) }, callOptions)),
    }, values, lm);
    return agentResult(prediction, { history }) as ReActResult<O>;
  }

  /** The native prompt's signature: the task's inputs and outputs (the instruction is the step predictor's). */
  private nativeSignature(): SignatureClass {
    const sig = compiled(this.signature);
    return deriveSignature(this.signature, { agent: "ReAct", suffix: "ReActNative", description: sig.description, output: sig.outputShape });
  }

  /** Runs the chosen tool; every failure becomes an observation the model can react to. */
  private async act(action: string, toolInput: Record<string, unknown>): Promise<{ observation: unknown; ok: boolean }> {
    const chosen = this.toolsByName.get(action);
    if (chosen === undefined) {
      const valid = [...this.toolsByName.keys(), FINISH].map((n) => `"${n}"`).join(", ");
      return { observation: `Error: unknown action "${action}"; valid actions are ${valid}`, ok: false };
    }
    const outcome = await invokeSafely(chosen, toolInput);
    return outcome.ok
      ? { observation: outcome.value, ok: true }
      : { observation: `Error: ${outcome.error}`, ok: false };
  }

  private availableTools(): string {
    const tools = describeTools(this.toolsByName.values());
    const finish = `- ${FINISH}: Call when the trajectory holds enough to produce the output fields. Arguments: {}`;
    return tools === "" ? finish : `${tools}\n${finish}`;
  }

  /** The steps so far as the model reads them; long observations are cut (the history keeps them whole). */
  private trajectory(history: readonly ReActStep[]): string {
    if (history.length === 0) return "(no steps yet)";
    return history
      .map((s) => {
        const lines = [`Step ${s.step}`, `Thought: ${s.thought}`, `Action: ${s.action}`, `Tool input: ${renderValue(s.toolInput)}`];
        if (s.action !== FINISH) lines.push(`Observation: ${clip(renderValue(s.observation), this.maxObservationChars)}`);
        return lines.join("\n");
      })
      .join("\n\n");
  }
}
