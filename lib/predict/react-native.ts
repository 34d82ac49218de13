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
import { resolveStrategy } from "../config.js";
import { convertOutputs } from "../convert/output.js";
import { OutputError } from "../errors.js";
import { Instrumentation } from "../instrument/bus.js";
import type { ToolCall, ToolDefinition, ToolExchange, ToolResult } from "../lm/tool-calls.js";
import type { ChatMessage, LanguageModel, LMResponse } from "../lm/types.js";
import { currentSampling } from "../config.js";
import { Prompt } from "../prompt/prompt.js";
import { compiled } from "../signature/compile.js";
import type { SignatureClass } from "../signature/signature.js";
import { currentSink, emitStep } from "../stream/context.js";
import { replyTap } from "../stream/reply-tap.js";
import { demoFits } from "./agent-signature.js";
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
  const sig = compiled(agent.signature);
  const prompt = new Prompt(sig, {
    schemaFormat: lm.schemaFormat, dataFormat: "json", instruction: agent.step.instruction,
    demos: agent.extract.demos.filter((d) => demoFits(d, sig.outputShape)),
  });
  const { messages, exchanges: demoTurns } = promptWithDemoTurns(prompt, values, agent.step.demos);
  const tools = toolDefinitions(agent, sig.outputJsonSchema);
  const history: ReActStep[] = [];
  const exchanges: ToolExchange[] = [];
  const limit = pLimit(agent.maxParallelCalls);
  const { temperature, rolloutId } = currentSampling();
  const signal = currentSink()?.signal;

  for (let i = 1; i <= agent.maxIterations; i++) {
    const response = await lm.chat({
      messages, signature: agent.signature, inputs: values, tools, toolExchanges: [...demoTurns, ...exchanges],
      ...(temperature === undefined ? {} : { temperature }), ...(rolloutId === undefined ? {} : { rolloutId }),
    }, { signal });
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
      exchanges.push({ before: messages.length, text: response.content, calls: [finish], results: [{ callId: finish.id, name: FINISH, content: outcome.error, isError: true }] });
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
    exchanges.push({ before: messages.length, text: response.content, calls, results });
  }
  return { prediction: await agent.extractAtEnd(history), history };
}

/** The function definitions sent: each tool's argument schema, and `finish` taking the output fields. */
function toolDefinitions(agent: NativeAgent, outputSchema: Record<string, unknown>): ToolDefinition[] {
  const defs: ToolDefinition[] = [...agent.tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: parameters(t) }));
  defs.push({ name: FINISH, description: "Call once you have what the output fields need; the arguments are the output fields.", parameters: outputSchema });
  return defs;
}

function parameters(t: AgentTool): Record<string, unknown> {
  try {
    return JSON.parse(schemaText(t)) as Record<string, unknown>;
  } catch {
    return { type: "object", properties: {} };
  }
}

/**
 * The native prompt's messages: the system message (with the note on tool use), one user message
 * per step demo followed by its tool turn (the demo's call and, when recorded, its observation), then
 * the call's own user message.
 */
function promptWithDemoTurns(prompt: Prompt, values: Record<string, unknown>, stepDemos: readonly { input: Record<string, unknown>; output: Record<string, unknown> }[]): { messages: ChatMessage[]; exchanges: ToolExchange[] } {
  const [system, ...rest] = prompt.messages(values);
  const messages: ChatMessage[] = [{ role: "system", content: `${system!.content}\n\n${NATIVE_NOTE}` }];
  const exchanges: ToolExchange[] = [];
  stepDemos.forEach((demo, k) => {
    const action = demo.output["action"];
    if (typeof action !== "string" || action === "" || action === FINISH) return;
    const user = prompt.messages(demo.input).find((m) => m.role === "user");
    if (user === undefined) return;
    messages.push(user);
    const callId = `demo_call_${k + 1}`;
    const observation = demo.input["observation"];
    exchanges.push({
      before: messages.length,
      text: typeof demo.output["thought"] === "string" ? demo.output["thought"] : "",
      calls: [{ id: callId, name: action, arguments: demo.output["toolInput"] ?? {} }],
      results: [{ callId, name: action, content: observation === undefined ? "(observation not recorded)" : renderValue(observation), isError: false }],
    });
  });
  messages.push(...rest);
  return { messages, exchanges };
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

/** A prediction's meta from a provider reply (shared with the native CodeAct loop). */
export function meta(response: LMResponse): { raw: string; usage: LMResponse["usage"]; model: string; cached: boolean } {
  return { raw: response.content, usage: response.usage, model: `${response.provider}/${response.model}`, cached: response.cached };
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

/** A `finish` call's arguments converted as the output fields (with their JSON text), or the sentence the model is shown instead. Shared with native CodeAct. */
export function finishOutputs(signature: SignatureClass, call: ToolCall): { outputs: Record<string, unknown>; raw: string } | { error: string } {
  const raw = JSON.stringify(call.arguments ?? {});
  try {
    return { outputs: convertOutputs(compiled(signature), withoutNulls(call.arguments), raw), raw };
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    return { error: `Error: the finish arguments are not valid output fields (${error.message}); call finish again with every output field` };
  }
}

/** A reply without tool calls read as the output fields, or undefined when it does not hold them. */
function finalReply(agent: NativeAgent, response: LMResponse, history: ReActStep[], values: Record<string, unknown>): Prediction | undefined {
  const outputs = replyOutputs(agent.signature, agent.step, response);
  return outputs === undefined ? undefined : answer(agent, outputs, meta(response), history, values);
}

/** The output fields a reply without tool calls holds, read with the step's strategy; undefined when it does not hold them. Shared with native CodeAct. */
export function replyOutputs(signature: SignatureClass, step: Predict, response: LMResponse): Record<string, unknown> | undefined {
  try {
    const json = resolveStrategy(step.config.strategy).extractJson(signature, response);
    return convertOutputs(compiled(signature), json, response.content);
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    return undefined;
  }
}

/** Strict schemas send null for optional output fields: null is "not given". */
export function withoutNulls(args: unknown): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
}

/** The typed answer: its field events (in a stream) and its trace as the extractor's. */
function answer(agent: NativeAgent, outputs: Record<string, unknown>, m: ReturnType<typeof meta>, history: ReActStep[], values: Record<string, unknown>): Prediction {
  replyTap(agent.extract, compiled(agent.signature), "json")?.finish(outputs);
  const prediction = new Prediction(outputs, m);
  recordTrace({ predictor: agent.extract, inputs: { ...values, trajectory: agent.trajectory(history) }, prediction });
  return prediction;
}
