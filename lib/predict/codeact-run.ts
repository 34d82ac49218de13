/**
 * CodeAct's run, loaded at its first call (not at `import "typelm"`): one sandbox per run (with the
 * agent's tools as functions), then the text protocol's loop (the `step` predictor's thought, code
 * and `finished`; the code run; its output or error added to the trajectory; the `extract` predictor
 * at the end) or, where the model takes tool definitions, the native tool-calling loop
 * (codeact-native.ts, loaded in turn).
 */
import { validateInputs } from "../convert/input.js";
import { OutputError } from "../errors.js";
import { Instrumentation } from "../instrument/bus.js";
import type { LanguageModel } from "../lm/types.js";
import type { CallOptions } from "../module.js";
import { Sandbox } from "../sandbox/sandbox.js";
import { compiled, type CompiledSignature } from "../signature/compile.js";
import { emitStep } from "../stream/context.js";
import { defineInputs, describeCodeTools, runOutput, sandboxTools, stripCodeFence } from "./agent-code.js";
import { agentResult, extractOrFail, nativeModel } from "./agent-loop.js";
import type { AgentTool } from "./agent-options.js";
import { deriveSignature } from "./agent-signature.js";
import { clip } from "./agent-tools.js";
import type { CodeAct, CodeActStep } from "./codeact.js";
import type { Prediction } from "./prediction.js";

/** What one run shares between its loop and the final extraction. */
interface Run {
  agent: CodeAct;
  /** `CodeAct(<signature name>)`, for events and errors. */
  name: string;
  sig: CompiledSignature;
  values: Record<string, unknown>;
  sandbox: Sandbox;
  availableTools: string;
  trajectory(history: readonly CodeActStep[]): string;
  /** The extractor's call on the trajectory so far. */
  extract(history: readonly CodeActStep[]): Promise<Prediction>;
}

/** Runs `agent` on `inputs`: the typed outputs, `solution` and `history` (CodeActResult), or MaxIterationsError. */
export async function runCodeAct(
  agent: CodeAct, tools: Map<string, AgentTool>, inputs: Record<string, unknown>, options: CallOptions,
): Promise<Prediction> {
  const sig = compiled(agent.signature);
  const values = validateInputs(sig, inputs);
  const callOptions: CallOptions = options.lm === undefined ? {} : { lm: options.lm };
  const name = `CodeAct(${sig.name})`;
  const availableTools = describeCodeTools(tools.values());
  const lm = nativeModel(name, agent.toolCalling, options.lm, agent.step.config.lm);
  const sandbox = await Sandbox.create({ ...agent.sandboxOptions, tools: sandboxTools(tools.values()) });
  const trajectory = (history: readonly CodeActStep[]): string => renderTrajectory(history, agent.maxObservationChars);
  const run: Run = {
    agent, name, sig, values, sandbox, availableTools, trajectory,
    extract: (history) => agent.extract.call({ ...values, trajectory: trajectory(history) }, callOptions),
  };
  try {
    return lm !== undefined ? await runNative(run, lm) : await runText(run, callOptions);
  } finally {
    sandbox.dispose();
  }
}

/** The text protocol: one `step` call per turn, its code run, until a finished turn succeeds or the last turn. */
async function runText(run: Run, callOptions: CallOptions): Promise<Prediction> {
  const { agent, name, sig, values, sandbox, availableTools } = run;
  const history: CodeActStep[] = [];
  let finished = false;
  for (let i = 1; i <= agent.maxIterations && !finished; i++) {
    let turn: Prediction & { thought: string; code: string | null; finished: boolean };
    try {
      turn = (await agent.step.call({ ...values, trajectory: run.trajectory(history), availableTools }, callOptions)) as unknown as typeof turn;
    } catch (error) {
      if (!(error instanceof OutputError)) throw error;
      // A malformed reply costs a step, not the run: the model sees why and tries again.
      history.push({
        step: i, thought: "", code: "", output: "",
        error: `your reply could not be read (${error.message}); reply with thought, code and finished`,
      });
      emitStep(agent, history[history.length - 1]);
      Instrumentation.emit("codeact.iteration", { agent: name, step: i, ok: false, finished: false });
      continue;
    }
    const code = stripCodeFence(turn.code ?? "").trim();
    let output = "";
    let error: string | null = null;
    if (code !== "") {
      await defineInputs(sandbox, sig, values, true);
      const ran = await sandbox.run(code);
      output = runOutput(ran);
      error = ran.error;
    } else if (!turn.finished) {
      error = "no code was given: write code to run, or set finished to true";
    }
    finished = turn.finished && error === null;
    history.push({ step: i, thought: turn.thought, code, output, error });
    emitStep(agent, history[history.length - 1]);
    Instrumentation.emit("codeact.iteration", { agent: name, step: i, ok: error === null, finished });
  }
  const extracted = finished ? await run.extract(history) : await extractOrFail(name, agent.maxIterations, history, () => run.extract(history));
  return agentResult(extracted, { history });
}

/** The native tool-calling loop (codeact-native.ts, loaded at its first use). */
async function runNative(run: Run, lm: LanguageModel): Promise<Prediction> {
  const { runNativeCode } = await import("./codeact-native.js");
  const { agent, name, sig, values, sandbox } = run;
  const { prediction, history } = await runNativeCode({
    name, step: agent.step, extract: agent.extract, availableTools: run.availableTools, trajectory: run.trajectory,
    // The native prompt's signature: the task's inputs, and the extractor's outputs (with `solution`).
    signature: deriveSignature(agent.signature, { agent: "CodeAct", suffix: "CodeActNative", description: sig.description, output: compiled(agent.extract.signature).outputShape }),
    maxIterations: agent.maxIterations, maxObservationChars: agent.maxObservationChars,
    runCode: async (code) => {
      await defineInputs(sandbox, sig, values, true);
      const ran = await sandbox.run(code);
      return { output: runOutput(ran), error: ran.error };
    },
    extractAtEnd: (history) => extractOrFail(name, agent.maxIterations, history, () => run.extract(history)),
  }, values, lm);
  return agentResult(prediction, { history });
}

/** The steps so far as the model reads them; long outputs are cut (the history keeps them whole). */
function renderTrajectory(history: readonly CodeActStep[], maxObservationChars: number): string {
  if (history.length === 0) return "(no steps yet)";
  return history
    .map((s) => {
      const lines = [`Step ${s.step}`, `Thought: ${s.thought}`];
      lines.push(s.code === "" ? "Code: (none)" : `Code:\n\`\`\`javascript\n${s.code}\n\`\`\``);
      lines.push(s.output === "" ? "Output: (nothing printed)" : `Output:\n${clip(s.output, maxObservationChars)}`);
      if (s.error !== null) lines.push(`Error: ${s.error}`);
      return lines.join("\n");
    })
    .join("\n\n");
}
