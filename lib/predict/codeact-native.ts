/**
 * CodeAct with native tool calling: the code-writing step goes to the provider as two function
 * definitions, `run_code` ({ code }) and `finish` (whose arguments are the output fields and
 * `solution`). Each `run_code` call runs in the agent's sandbox as in text mode (calls of one turn run
 * in order: they share the sandbox's variables), becomes a `CodeActStep` with its `callId`, and its
 * output or error goes back as the provider's tool result. A `finish` call (or a reply with no tool
 * call that holds the output fields) ends the run; otherwise the `extract` predictor reads the
 * trajectory, as in text mode.
 *
 * The prompt is the agent's own: the `step` predictor's instruction, the extractor's demos in the
 * system message, and step demos with code replayed as earlier `run_code` turns. Each run is recorded
 * as a trace of `step` (and the answer as one of `extract`), so optimizers tune it as any other agent.
 * Loaded at the first native run (`await import`), never by `import "typelm"`.
 */
import { Instrumentation } from "../instrument/bus.js";
import type { ToolCall, ToolResult } from "../lm/tool-calls.js";
import type { LanguageModel, LMResponse } from "../lm/types.js";
import type { SignatureClass } from "../signature/signature.js";
import { emitStep } from "../stream/context.js";
import { stripCodeFence } from "./agent-code.js";
import { answer, finalReply, finishOutputs, meta, nativeChat, type NativeSetup } from "./agent-native.js";
import { clip } from "./agent-tools.js";
import type { CodeActStep } from "./codeact.js";
import type { Predict } from "./predict.js";
import { Prediction } from "./prediction.js";
import { recordTrace } from "./trace.js";

/** What the native loop needs from its CodeAct agent. */
export interface NativeCodeAgent {
  /** `CodeAct(<signature name>)`, for events and errors. */
  name: string;
  /** The derived signature of the native prompt: the task's inputs, outputs and `solution`. */
  signature: SignatureClass;
  step: Predict;
  extract: Predict;
  maxIterations: number;
  maxObservationChars: number;
  /** The functions the code can call, as the text protocol lists them. */
  availableTools: string;
  /** The text trajectory of steps so far (what `extract` and the step traces read). */
  trajectory(history: readonly CodeActStep[]): string;
  /** Runs code in the agent's sandbox: what it printed (with `=> value`) and its error, or null. */
  runCode(code: string): Promise<{ output: string; error: string | null }>;
  /** The extraction after the last iteration (`extractOrFail` in text mode). */
  extractAtEnd(history: CodeActStep[]): Promise<Prediction>;
}

const RUN_CODE = "run_code";
const FINISH = "finish";

const NATIVE_NOTE =
  `Run JavaScript by calling "${RUN_CODE}" with the code; you get back what it printed, or its error. ` +
  `When the results suffice, call "${FINISH}" with the output fields as its arguments ` +
  "(or reply with the output fields in the format above, without a tool call).";

/** Runs the native loop to a typed result (`{ ...outputs, history }` is assembled by the caller). */
export async function runNativeCode(agent: NativeCodeAgent, values: Record<string, unknown>, lm: LanguageModel): Promise<{ prediction: Prediction; history: CodeActStep[] }> {
  const chat = nativeChat(agent, setup(agent), values, lm);
  const history: CodeActStep[] = [];

  for (let i = 1; i <= agent.maxIterations; i++) {
    const response = await chat.turn();
    const calls = response.toolCalls ?? [];
    if (calls.length === 0) {
      const answered = finalReply(agent, response, history, values);
      return { prediction: answered ?? (await agent.extractAtEnd(history)), history };
    }
    const finish = calls.find((c) => c.name === FINISH);
    if (finish !== undefined) {
      const outcome = finishCall(agent, finish, response, history, values);
      if (outcome.prediction !== undefined) return { prediction: outcome.prediction, history };
      // Arguments that do not convert: the model sees why, as the finish call's error result.
      chat.record(response.content, [finish], [{ callId: finish.id, name: FINISH, content: outcome.error, isError: true }]);
      continue;
    }
    const trajectory = agent.trajectory(history);
    const results: ToolResult[] = [];
    for (const call of calls) {
      const step = await runCall(agent, call, response.content, history.length + 1);
      history.push(step);
      emitStep(agent.step, step);
      Instrumentation.emit("codeact.iteration", { agent: agent.name, step: step.step, ok: step.error === null, finished: false });
      recordTrace({
        predictor: agent.step,
        inputs: { ...values, trajectory, availableTools: agent.availableTools },
        prediction: new Prediction({ thought: step.thought, code: step.code, finished: false }, meta(response)),
      });
      results.push({ callId: call.id, name: call.name, content: resultText(step, agent.maxObservationChars), isError: step.error !== null });
    }
    chat.record(response.content, calls, results);
  }
  return { prediction: await agent.extractAtEnd(history), history };
}

/** One call of a turn as a step: `run_code` runs its code; any other name is an error the model reads. */
async function runCall(agent: NativeCodeAgent, call: ToolCall, thought: string, step: number): Promise<CodeActStep> {
  if (call.name !== RUN_CODE) {
    const error = `unknown function "${call.name}"; call "${RUN_CODE}" with { code } (your code can call the tools), or "${FINISH}"`;
    return { step, thought, code: "", output: "", error, callId: call.id };
  }
  const args = call.arguments;
  const given = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>)["code"] : undefined;
  const code = typeof given === "string" ? stripCodeFence(given).trim() : "";
  if (code === "") {
    return { step, thought, code: "", output: "", error: `no code was given: call "${RUN_CODE}" with { "code": "..." }`, callId: call.id };
  }
  const ran = await agent.runCode(code);
  return { step, thought, code, output: ran.output, error: ran.error, callId: call.id };
}

/** A step's tool result as the model reads it: the output (cut to the limit), then the error. */
function resultText(step: CodeActStep, maxChars: number): string {
  const shown = step.output === "" ? "" : clip(step.output, maxChars);
  if (step.error !== null) return `${shown}${shown === "" || shown.endsWith("\n") ? "" : "\n"}Error: ${step.error}`;
  return shown === "" ? "(nothing printed)" : shown;
}

/**
 * The native prompt's set-up: the note on tool use; the function definitions, `run_code` (its
 * description lists the functions the code can call) and `finish`; each step demo with code replayed
 * as an earlier `run_code` turn.
 */
function setup(agent: NativeCodeAgent): NativeSetup {
  return {
    note: NATIVE_NOTE,
    tools: (outputSchema) => [
      {
        name: RUN_CODE,
        description:
          "Runs JavaScript (no TypeScript, no imports) in a sandbox and returns what it printed (console.log) and the value of " +
          "its last statement, or its error. Top-level await works; variables persist between calls; the task inputs are the " +
          `global \`inputs\`. Functions the code can call:\n${agent.availableTools}`,
        parameters: {
          type: "object",
          properties: { code: { type: "string", description: "The JavaScript to run" } },
          required: ["code"],
          additionalProperties: false,
        },
      },
      { name: FINISH, description: "Call once the results suffice; the arguments are the output fields.", parameters: outputSchema },
    ],
    demoTurn: (demo, callId) => {
      const code = demo.output["code"];
      if (typeof code !== "string" || code.trim() === "") return undefined;
      return { call: { id: callId, name: RUN_CODE, arguments: { code } }, content: "(output not recorded)" };
    },
  };
}

/** The answer of a `finish` call, converted as any prediction; or the error the model is shown. */
function finishCall(agent: NativeCodeAgent, call: ToolCall, response: LMResponse, history: CodeActStep[], values: Record<string, unknown>): { prediction?: Prediction; error: string } {
  const read = finishOutputs(agent.signature, call);
  if ("error" in read) return read;
  Instrumentation.emit("codeact.iteration", { agent: agent.name, step: history.length, ok: true, finished: true });
  return { prediction: answer(agent, read.outputs, { ...meta(response), raw: read.raw }, history, values), error: "" };
}
