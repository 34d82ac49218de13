/**
 * ReAct with native tool calling: the tools go to the provider as function definitions (plus a
 * `finish` function whose arguments are the task's output fields), the model's tool calls come back
 * as the provider's own calls, several calls of one turn run at once (bounded), each becomes a
 * `ReActStep` with its `callId`, and the results go back in the provider's tool-result form. The
 * turn ends the run when the model calls `finish` (its arguments are converted as any prediction) or
 * replies with no tool call (its text is read as the output fields in the prompt's reply format;
 * when that fails, the `extract` predictor reads the trajectory, as in text mode).
 *
 * The prompt is the agent's own: the `step` predictor's instruction, the extractor's demos in the
 * system message, and the step demos replayed as earlier tool-call turns. Each call is recorded as a
 * trace of `step` (and the answer as one of `extract`), so optimizers bootstrap and tune a native
 * agent as any other. Loaded at the first native run (`await import`), never by `import "typelm"`.
 */
import pLimit from "p-limit";
import { Instrumentation } from "../instrument/bus.js";
import type { ToolCall, ToolDefinition, ToolResult } from "../lm/tool-calls.js";
import type { LanguageModel, LMResponse } from "../lm/types.js";
import type { SignatureClass } from "../signature/signature.js";
import { emitStep } from "../stream/context.js";
import { answer, finalReply, finishOutputs, meta, nativeChat, type NativeSetup } from "./agent-native.js";
import { clip, invokeSafely, renderValue, schemaText, type AgentTool } from "./agent-tools.js";
import type { Predict } from "./predict.js";
import { Prediction } from "./prediction.js";
import type { ReActStep } from "./react.js";
import { recordTrace } from "./trace.js";

/** What the native loop needs from its ReAct agent. */
export interface NativeAgent {
  /** `ReAct(<signature name>)`, for events and errors. */
  name: string;
  /** The derived signature of the native prompt: the task's inputs and outputs. */
  signature: SignatureClass;
  step: Predict;
  extract: Predict;
  tools: Map<string, AgentTool>;
  maxIterations: number;
  maxObservationChars: number;
  /** Tool calls of one turn run at once, at most this many together. */
  maxParallelCalls: number;
  /** The text trajectory of steps so far (what the text protocol and `extract` read). */
  trajectory(history: readonly ReActStep[]): string;
  /** The tools described as the text protocol lists them (the `availableTools` input of step traces). */
  availableTools: string;
  /** The extraction after the last iteration (`extractOrFail` in text mode). */
  extractAtEnd(history: ReActStep[]): Promise<Prediction>;
}

const FINISH = "finish";

const NATIVE_NOTE =
  "Call the tools you are given as you need them; call several at once when they do not depend on each other. " +
  `When you have what the output fields need, call "${FINISH}" with the output fields as its arguments ` +
  "(or reply with the output fields in the format above, without a tool call).";

/** Runs the native loop to a typed result (`{ ...outputs, history }` is assembled by the caller). */
export async function runNative(agent: NativeAgent, values: Record<string, unknown>, lm: LanguageModel): Promise<{ prediction: Prediction; history: ReActStep[] }> {
  const chat = nativeChat(agent, setup(agent), values, lm);
  const history: ReActStep[] = [];
  const limit = pLimit(agent.maxParallelCalls);

  for (let i = 1; i <= agent.maxIterations; i++) {
    const response = await chat.turn();
    const calls = response.toolCalls ?? [];
    if (calls.length === 0) {
      const answered = finalReply(agent, response, history, values);
      if (answered !== undefined) return { prediction: answered, history };
      return { prediction: await agent.extractAtEnd(history), history };
    }
    const finish = calls.find((c) => c.name === FINISH);
    if (finish !== undefined) {
      const outcome = finishCall(agent, finish, response, history, values);
      if (outcome.prediction !== undefined) return { prediction: outcome.prediction, history };
      // Arguments that do not convert: the model sees why, as the finish call's error result.
      const step: ReActStep = { step: history.length + 1, thought: response.content, action: FINISH, toolInput: asInput(finish.arguments), observation: outcome.error, callId: finish.id };
      history.push(step);
      emitStep(agent.step, step);
      chat.record(response.content, [finish], [{ callId: finish.id, name: FINISH, content: outcome.error, isError: true }]);
      continue;
    }
    const before = history.length;
    const trajectory = agent.trajectory(history);
    const steps = calls.map((call, k): ReActStep => ({
      step: before + k + 1, thought: response.content, action: call.name, toolInput: asInput(call.arguments), observation: null, callId: call.id,
    }));
    const results = await Promise.all(calls.map((call, k) => limit(async (): Promise<ToolResult> => {
      const { observation, ok } = await act(agent.tools, call);
      const step = steps[k]!;
      step.observation = observation;
      emitStep(agent.step, step);
      Instrumentation.emit("react.iteration", { agent: agent.name, step: step.step, action: call.name, ok });
      return { callId: call.id, name: call.name, content: clip(renderValue(observation), agent.maxObservationChars), isError: !ok };
    })));
    history.push(...steps);
    for (const step of steps) {
      recordTrace({
        predictor: agent.step,
        inputs: { ...values, trajectory, availableTools: agent.availableTools, observation: clip(renderValue(step.observation), agent.maxObservationChars) },
        prediction: new Prediction({ thought: step.thought, action: step.action, toolInput: step.toolInput }, meta(response)),
      });
    }
    chat.record(response.content, calls, results);
  }
  return { prediction: await agent.extractAtEnd(history), history };
}

/**
 * The native prompt's set-up: the note on tool use; the function definitions (each tool's argument
 * schema, and `finish` taking the output fields); each step demo with a tool action replayed as that
 * tool's call, with its observation when recorded.
 */
function setup(agent: NativeAgent): NativeSetup {
  return {
    note: NATIVE_NOTE,
    tools: (outputSchema) => {
      const defs: ToolDefinition[] = [...agent.tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: parameters(t) }));
      defs.push({ name: FINISH, description: "Call once you have what the output fields need; the arguments are the output fields.", parameters: outputSchema });
      return defs;
    },
    demoTurn: (demo, callId) => {
      const action = demo.output["action"];
      if (typeof action !== "string" || action === "" || action === FINISH) return undefined;
      const observation = demo.input["observation"];
      return {
        call: { id: callId, name: action, arguments: demo.output["toolInput"] ?? {} },
        content: observation === undefined ? "(observation not recorded)" : renderValue(observation),
      };
    },
  };
}

function parameters(t: AgentTool): Record<string, unknown> {
  try {
    return JSON.parse(schemaText(t)) as Record<string, unknown>;
  } catch {
    return { type: "object", properties: {} };
  }
}

/** Runs one call's tool; unknown tools and failures become error observations. */
async function act(tools: Map<string, AgentTool>, call: ToolCall): Promise<{ observation: unknown; ok: boolean }> {
  const chosen = tools.get(call.name);
  if (chosen === undefined) {
    const valid = [...tools.keys(), FINISH].map((n) => `"${n}"`).join(", ");
    return { observation: `Error: unknown tool "${call.name}"; valid tools are ${valid}`, ok: false };
  }
  const outcome = await invokeSafely(chosen, withoutNullOptionals(call.arguments, chosen));
  return outcome.ok ? { observation: outcome.value, ok: true } : { observation: `Error: ${outcome.error}`, ok: false };
}

/**
 * Strict function schemas (OpenAI) make every argument required and nullable: a null for an
 * argument the tool does not require means "not given", so it is dropped before validation.
 */
function withoutNullOptionals(args: unknown, t: AgentTool): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  let required: unknown;
  try {
    required = t.jsonSchema()["required"];
  } catch {
    return args;
  }
  const must = new Set(Array.isArray(required) ? required : []);
  return Object.fromEntries(Object.entries(args).filter(([k, v]) => v !== null || must.has(k)));
}

function asInput(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : { arguments: args };
}

/** The answer of a `finish` call, converted as any prediction; or the error the model is shown. */
function finishCall(agent: NativeAgent, call: ToolCall, response: LMResponse, history: ReActStep[], values: Record<string, unknown>): { prediction?: Prediction; error: string } {
  const read = finishOutputs(agent.signature, call);
  if ("error" in read) return read;
  const step: ReActStep = { step: history.length + 1, thought: response.content, action: FINISH, toolInput: asInput(call.arguments), observation: null, callId: call.id };
  history.push(step);
  emitStep(agent.step, step);
  Instrumentation.emit("react.iteration", { agent: agent.name, step: step.step, action: FINISH, ok: true });
  return { prediction: answer(agent, read.outputs, { ...meta(response), raw: read.raw }, history, values), error: "" };
}

