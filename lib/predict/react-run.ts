/**
 * ReAct's run, loaded at its first call (not at `import "typelm"`): the text protocol's loop (the
 * `step` predictor's thought, action and tool input; the chosen tool run; its observation added to
 * the trajectory; the `extract` predictor at "finish" or when the turns run out), or, where the
 * model takes tool definitions, the native tool-calling loop (react-native.ts, loaded in turn).
 */
import { validateInputs } from "../convert/input.js";
import { OutputError } from "../errors.js";
import { Instrumentation } from "../instrument/bus.js";
import type { LanguageModel } from "../lm/types.js";
import type { CallOptions } from "../module.js";
import { compiled } from "../signature/compile.js";
import { emitStep } from "../stream/context.js";
import { agentResult, extractOrFail, nativeModel } from "./agent-loop.js";
import type { AgentTool } from "./agent-options.js";
import { deriveSignature } from "./agent-signature.js";
import { clip, describeTools, invokeSafely, renderValue } from "./agent-tools.js";
import type { Prediction } from "./prediction.js";
import { FINISH, type ReAct, type ReActStep } from "./react.js";

/** What one run shares between its loop and the final extraction. */
interface Run {
  agent: ReAct;
  /** `ReAct(<signature name>)`, for events and errors. */
  name: string;
  values: Record<string, unknown>;
  callOptions: CallOptions;
  trajectory(history: readonly ReActStep[]): string;
  /** The extractor's call on the trajectory so far. */
  extract(history: readonly ReActStep[]): Promise<Prediction>;
}

/** Runs `agent` on `inputs`: the typed outputs plus `history` (ReActResult), or MaxIterationsError. */
export async function runReAct(
  agent: ReAct, tools: Map<string, AgentTool>, inputs: Record<string, unknown>, options: CallOptions,
): Promise<Prediction> {
  const sig = compiled(agent.signature);
  const values = validateInputs(sig, inputs);
  const callOptions: CallOptions = options.lm === undefined ? {} : { lm: options.lm };
  const availableTools = describeAvailable(tools);
  const trajectory = (history: readonly ReActStep[]): string => renderTrajectory(history, agent.maxObservationChars);
  const run: Run = {
    agent, name: `ReAct(${sig.name})`, values, callOptions, trajectory,
    extract: (history) => agent.extract.call({ ...values, trajectory: trajectory(history) }, callOptions),
  };
  const lm = nativeModel(run.name, agent.toolCalling, options.lm, agent.step.config.lm);
  if (lm !== undefined) return runNative(run, tools, lm, availableTools);
  return runText(run, tools, availableTools);
}

/** The text protocol: one `step` call per turn, the chosen tool run, until "finish" or the last turn. */
async function runText(run: Run, tools: Map<string, AgentTool>, availableTools: string): Promise<Prediction> {
  const { agent, name, values, callOptions } = run;
  const history: ReActStep[] = [];
  for (let i = 1; i <= agent.maxIterations; i++) {
    let turn: Prediction & { thought: string; action: string; toolInput: Record<string, unknown> | null };
    try {
      turn = (await agent.step.call({ ...values, trajectory: run.trajectory(history), availableTools }, callOptions)) as unknown as typeof turn;
    } catch (error) {
      if (!(error instanceof OutputError)) throw error;
      // A malformed turn costs an iteration but not the run: the model sees why and tries again.
      history.push({
        step: i, thought: "", action: "", toolInput: {},
        observation: `Error: your reply could not be read (${error.message}); reply with thought, action and toolInput`,
      });
      emitStep(agent, history[history.length - 1]);
      Instrumentation.emit("react.iteration", { agent: name, step: i, action: "", ok: false });
      continue;
    }
    const action = turn.action.trim();
    const toolInput = turn.toolInput ?? {};
    if (action.toLowerCase() === FINISH) {
      history.push({ step: i, thought: turn.thought, action: FINISH, toolInput, observation: null });
      emitStep(agent, history[history.length - 1]);
      Instrumentation.emit("react.iteration", { agent: name, step: i, action: FINISH, ok: true });
      return agentResult(await run.extract(history), { history });
    }
    const { observation, ok } = await act(tools, action, toolInput);
    history.push({ step: i, thought: turn.thought, action, toolInput, observation });
    emitStep(agent, history[history.length - 1]);
    Instrumentation.emit("react.iteration", { agent: name, step: i, action, ok });
  }
  const extracted = await extractOrFail(name, agent.maxIterations, history, () => run.extract(history));
  return agentResult(extracted, { history });
}

/** The native tool-calling loop (react-native.ts, loaded at its first use). */
async function runNative(run: Run, tools: Map<string, AgentTool>, lm: LanguageModel, availableTools: string): Promise<Prediction> {
  const { runNative: loop } = await import("./react-native.js");
  const { agent, name } = run;
  const sig = compiled(agent.signature);
  const { prediction, history } = await loop({
    name, step: agent.step, extract: agent.extract, tools,
    // The native prompt's signature: the task's inputs and outputs (the instruction is the step predictor's).
    signature: deriveSignature(agent.signature, { agent: "ReAct", suffix: "ReActNative", description: sig.description, output: sig.outputShape }),
    maxIterations: agent.maxIterations, maxObservationChars: agent.maxObservationChars, maxParallelCalls: agent.maxParallelCalls,
    trajectory: run.trajectory, availableTools,
    extractAtEnd: (history) => extractOrFail(name, agent.maxIterations, history, () => run.extract(history)),
  }, run.values, lm);
  return agentResult(prediction, { history });
}

/** Runs the chosen tool; every failure becomes an observation the model can react to. */
async function act(tools: Map<string, AgentTool>, action: string, toolInput: Record<string, unknown>): Promise<{ observation: unknown; ok: boolean }> {
  const chosen = tools.get(action);
  if (chosen === undefined) {
    const valid = [...tools.keys(), FINISH].map((n) => `"${n}"`).join(", ");
    return { observation: `Error: unknown action "${action}"; valid actions are ${valid}`, ok: false };
  }
  const outcome = await invokeSafely(chosen, toolInput);
  return outcome.ok
    ? { observation: outcome.value, ok: true }
    : { observation: `Error: ${outcome.error}`, ok: false };
}

/** The tools as the step predictor reads them, "finish" last. */
function describeAvailable(tools: Map<string, AgentTool>): string {
  const described = describeTools(tools.values());
  const finish = `- ${FINISH}: Call when the trajectory holds enough to produce the output fields. Arguments: {}`;
  return described === "" ? finish : `${described}\n${finish}`;
}

/** The steps so far as the model reads them; long observations are cut (the history keeps them whole). */
function renderTrajectory(history: readonly ReActStep[], maxObservationChars: number): string {
  if (history.length === 0) return "(no steps yet)";
  return history
    .map((s) => {
      const lines = [`Step ${s.step}`, `Thought: ${s.thought}`, `Action: ${s.action}`, `Tool input: ${renderValue(s.toolInput)}`];
      if (s.action !== FINISH) lines.push(`Observation: ${clip(renderValue(s.observation), maxObservationChars)}`);
      return lines.join("\n");
    })
    .join("\n\n");
}
