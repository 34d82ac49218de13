/**
 * What the native tool-calling loops of ReAct and CodeAct (react-native.ts, codeact-native.ts) share,
 * loaded with them at the first native run: the agent's own prompt (the `step` predictor's
 * instruction, the extractor's demos that fit in the system message, the step demos replayed as
 * earlier tool turns), one model turn with the call's sampling and the stream's signal, and the
 * answer (a `finish` call's arguments or a plain final reply) read as the typed outputs and recorded
 * as the extractor's trace.
 */
import { currentSampling, resolveStrategy } from "../config.js";
import { convertOutputs } from "../convert/output.js";
import { OutputError } from "../errors.js";
import type { ToolCall, ToolDefinition, ToolExchange, ToolResult } from "../lm/tool-calls.js";
import type { ChatMessage, LanguageModel, LMResponse } from "../lm/types.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { Prompt } from "../prompt/prompt.js";
import { compiled } from "../signature/compile.js";
import type { SignatureClass } from "../signature/signature.js";
import { currentSink } from "../stream/context.js";
import { replyTap } from "../stream/reply-tap.js";
import { demoFits } from "./agent-signature.js";
import { sameDemos, type Predict } from "./predict.js";
import { Prediction } from "./prediction.js";
import { recordTrace } from "./trace.js";

/** A step demo as the native prompt replays it. */
export interface StepDemo {
  input: Record<string, unknown>;
  output: Record<string, unknown>;
}

/** What a native loop's answer needs from its agent: the native signature, the two predictors, the text trajectory. */
export interface AnsweringAgent<Step> {
  /** The derived signature of the native prompt: the task's inputs and outputs. */
  signature: SignatureClass;
  step: Predict;
  extract: Predict;
  /** The text trajectory of steps so far (what `extract` and the step traces read). */
  trajectory(history: readonly Step[]): string;
}

/** How one agent sets up its native prompt. */
export interface NativeSetup {
  /** The note on tool use appended to the system message. */
  note: string;
  /** The function definitions sent, given the output fields' JSON Schema (the `finish` function's parameters). */
  tools(outputSchema: Record<string, unknown>): ToolDefinition[];
  /** A step demo as an earlier tool turn: the call it made and the result shown; undefined leaves the demo out. */
  demoTurn(demo: StepDemo, callId: string): { call: ToolCall; content: string } | undefined;
}

/** The model conversation of one native run. */
export interface NativeChat {
  /** One model turn: the prompt, the tools, the demo turns and the run's tool turns so far. */
  turn(): Promise<LMResponse>;
  /** Adds a turn's calls (with the text written along) and their results; later turns send them. */
  record(text: string, calls: ToolCall[], results: ToolResult[]): void;
}

/**
 * The conversation of one native run: the prompt is built once, with the sampling options of the
 * call (temperature, rollout id) and the stream's abort signal read here, at the start of the run.
 */
export function nativeChat(agent: Omit<AnsweringAgent<unknown>, "trajectory">, setup: NativeSetup, values: Record<string, unknown>, lm: LanguageModel): NativeChat {
  const sig = compiled(agent.signature);
  const prompt = nativePrompt(agent, lm.schemaFormat);
  const { messages, exchanges: demoTurns } = promptWithDemoTurns(prompt, values, agent.step.demos, setup);
  const tools = setup.tools(sig.outputJsonSchema);
  const exchanges: ToolExchange[] = [];
  const { temperature, rolloutId } = currentSampling();
  const signal = currentSink()?.signal;
  return {
    turn: () => lm.chat({
      messages, signature: agent.signature, inputs: values, tools, toolExchanges: [...demoTurns, ...exchanges],
      ...(temperature === undefined ? {} : { temperature }), ...(rolloutId === undefined ? {} : { rolloutId }),
    }, { signal }),
    record: (text, calls, results) => {
      exchanges.push({ before: messages.length, text, calls, results });
    },
  };
}

interface CachedPrompt {
  signature: SignatureClass;
  schemaFormat: string;
  instruction: string;
  /** The fitting demos the prompt was built from, copied (optimizers change demos in place). */
  demos: readonly FewShotExample[];
  prompt: Prompt;
}

// Per agent, keyed on its step predictor (outside it, so a clone starts without one; each run passes the
// loop a new view of the agent): its native prompt, rebuilt only when the step's instruction, the fitting
// demos or the model's schema format change, as Predict keeps its prompt.
const nativePrompts = new WeakMap<object, CachedPrompt>();

/** The agent's native prompt: the step's instruction with the extractor's demos that fit the outputs. */
function nativePrompt(agent: Omit<AnsweringAgent<unknown>, "trajectory">, schemaFormat: LanguageModel["schemaFormat"]): Prompt {
  const sig = compiled(agent.signature);
  const demos = agent.extract.demos.filter((d) => demoFits(d, sig.outputShape));
  const cached = nativePrompts.get(agent.step);
  if (
    cached !== undefined && cached.signature === agent.signature && cached.schemaFormat === schemaFormat &&
    cached.instruction === agent.step.instruction && sameDemos(cached.demos, demos)
  ) {
    return cached.prompt;
  }
  const prompt = new Prompt(sig, { schemaFormat, dataFormat: "json", instruction: agent.step.instruction, demos });
  nativePrompts.set(agent.step, { signature: agent.signature, schemaFormat, instruction: agent.step.instruction, demos, prompt });
  return prompt;
}

/**
 * The native prompt's messages: the system message (with the note on tool use), one user message
 * per step demo the agent replays followed by its tool turn, then the call's own user message.
 */
function promptWithDemoTurns(
  prompt: Prompt, values: Record<string, unknown>, stepDemos: readonly StepDemo[], setup: NativeSetup,
): { messages: ChatMessage[]; exchanges: ToolExchange[] } {
  const [system, ...rest] = prompt.messages(values);
  const messages: ChatMessage[] = [{ role: "system", content: `${system!.content}\n\n${setup.note}` }];
  const exchanges: ToolExchange[] = [];
  stepDemos.forEach((demo, k) => {
    const callId = `demo_call_${k + 1}`;
    const turn = setup.demoTurn(demo, callId);
    if (turn === undefined) return;
    const user = prompt.messages(demo.input).find((m) => m.role === "user");
    if (user === undefined) return;
    messages.push(user);
    exchanges.push({
      before: messages.length,
      text: typeof demo.output["thought"] === "string" ? demo.output["thought"] : "",
      calls: [turn.call],
      results: [{ callId, name: turn.call.name, content: turn.content, isError: false }],
    });
  });
  messages.push(...rest);
  return { messages, exchanges };
}

/** A prediction's meta from a provider reply. */
export function meta(response: LMResponse): { raw: string; usage: LMResponse["usage"]; model: string; cached: boolean } {
  return { raw: response.content, usage: response.usage, model: `${response.provider}/${response.model}`, cached: response.cached };
}

/** A `finish` call's arguments converted as the output fields (with their JSON text), or the sentence the model is shown instead. */
export function finishOutputs(signature: SignatureClass, call: ToolCall): { outputs: Record<string, unknown>; raw: string } | { error: string } {
  const raw = JSON.stringify(call.arguments ?? {});
  try {
    return { outputs: convertOutputs(compiled(signature), withoutNulls(call.arguments), raw), raw };
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    return { error: `Error: the finish arguments are not valid output fields (${error.message}); call finish again with every output field` };
  }
}

/** Strict schemas send null for optional output fields: null is "not given". */
export function withoutNulls(args: unknown): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
}

/** A reply without tool calls read as the output fields (with the step's strategy), or undefined when it does not hold them. */
export function finalReply<Step>(agent: AnsweringAgent<Step>, response: LMResponse, history: readonly Step[], values: Record<string, unknown>): Prediction | undefined {
  let outputs: Record<string, unknown>;
  try {
    const json = resolveStrategy(agent.step.config.strategy).extractJson(agent.signature, response);
    outputs = convertOutputs(compiled(agent.signature), json, response.content);
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    return undefined;
  }
  return answer(agent, outputs, meta(response), history, values);
}

/** The typed answer: its field events (in a stream) and its trace as the extractor's. */
export function answer<Step>(
  agent: AnsweringAgent<Step>, outputs: Record<string, unknown>, m: ReturnType<typeof meta>, history: readonly Step[], values: Record<string, unknown>,
): Prediction {
  replyTap(agent.extract, compiled(agent.signature), "json")?.finish(outputs);
  const prediction = new Prediction(outputs, m);
  recordTrace({ predictor: agent.extract, inputs: { ...values, trajectory: agent.trajectory(history) }, prediction });
  return prediction;
}
