/**
 * CodeAct: the model acts by writing JavaScript. Each step's code runs in one QuickJS sandbox per
 * agent run (so variables persist from step to step), the model sees the output or the error and
 * continues or finishes; then an extractor turns the trajectory into the typed outputs and a
 * `solution` text.
 *
 * Model-written code runs only in the sandbox (lib/sandbox), never in the host. The inner
 * predictors (`step`, `extract`) are ordinary properties, so optimizers see and tune them.
 */
import { z } from "zod";
import { onFirstUse } from "../load-sync.js";
import { validateInputs } from "../convert/input.js";
import { OutputError } from "../errors.js";
import { Instrumentation } from "../instrument/bus.js";
import type { CallOptions } from "../module.js";
import { Sandbox } from "../sandbox/sandbox.js";
import { compiled } from "../signature/compile.js";
import type { InputOf, OutputOf } from "../signature/infer.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import { defineInputs, describeCodeTools, runOutput, sandboxTools, stripCodeFence, type AgentSandboxOptions } from "./agent-code.js";
import { agentResult, extractOrFail } from "./agent-loop.js";
import { deriveSignature, taskInstruction } from "./agent-signature.js";
import { clip, toolMap, type AgentTool } from "./agent-tools.js";
import { StepExtractAgent } from "./agent-base.js";
import { Predict } from "./predict.js";
import { emitStep } from "../stream/context.js";
import type { Prediction, Typed } from "./prediction.js";
import { nativeModel, toolCallingOption } from "./agent-tool-calling.js";
import type { ToolCalling } from "./react.js";
import type { LanguageModel } from "../lm/types.js";

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
    const values = validateInputs(compiled(this.signature), inputs);
    const callOptions: CallOptions = options.lm === undefined ? {} : { lm: options.lm };
    const agent = `CodeAct(${compiled(this.signature).name})`;
    const history: CodeActStep[] = [];
    const availableTools = describeCodeTools(this.toolsByName.values());
    const lm = nativeModel(agent, this.toolCalling, options.lm, this.step.config.lm);
    const sandbox = await Sandbox.create({ ...this.sandboxOptions, tools: sandboxTools(this.toolsByName.values()) });
    try {
      if (lm !== undefined) return await this.runNative(values, lm, agent, availableTools, sandbox, callOptions);
      let finished = false;
      for (let i = 1; i <= this.maxIterations && !finished; i++) {
        let turn: Prediction & { thought: string; code: string | null; finished: boolean };
        try {
          turn = (await this.step.call({ ...values, trajectory: this.trajectory(history), availableTools }, callOptions)) as unknown as typeof turn;
        } catch (error) {
          if (!(error instanceof OutputError)) throw error;
          // A malformed reply costs a step, not the run: the model sees why and tries again.
          history.push({
            step: i, thought: "", code: "", output: "",
            error: `your reply could not be read (${error.message}); reply with thought, code and finished`,
          });
          emitStep(this, history[history.length - 1]);
          Instrumentation.emit("codeact.iteration", { agent, step: i, ok: false, finished: false });
          continue;
        }
        const code = stripCodeFence(turn.code ?? "").trim();
        let output = "";
        let error: string | null = null;
        if (code !== "") {
          await defineInputs(sandbox, compiled(this.signature), values, true);
          const ran = await sandbox.run(code);
          output = runOutput(ran);
          error = ran.error;
        } else if (!turn.finished) {
          error = "no code was given: write code to run, or set finished to true";
        }
        finished = turn.finished && error === null;
        history.push({ step: i, thought: turn.thought, code, output, error });
        emitStep(this, history[history.length - 1]);
        Instrumentation.emit("codeact.iteration", { agent, step: i, ok: error === null, finished });
      }
      const extract = () => this.extract.call({ ...values, trajectory: this.trajectory(history) }, callOptions);
      const extracted = finished ? await extract() : await extractOrFail(agent, this.maxIterations, history, extract);
      return agentResult(extracted, { history }) as CodeActResult<O>;
    } finally {
      sandbox.dispose();
    }
  }

  /** The native tool-calling loop (codeact-native.ts, loaded at its first use). */
  private async runNative(
    values: Record<string, unknown>, lm: LanguageModel, agent: string, availableTools: string, sandbox: Sandbox, callOptions: CallOptions,
  ): Promise<CodeActResult<O>> {
    const { runNativeCode } = await import("./codeact-native.js");
    const sig = compiled(this.signature);
    const trajectory = (h: readonly CodeActStep[]): string => this.trajectory(h);
    const { prediction, history } = await runNativeCode({
      name: agent, step: this.step, extract: this.extract, availableTools, trajectory,
      signature: deriveSignature(this.signature, { agent: "CodeAct", suffix: "CodeActNative", description: sig.description, output: compiled(this.extract.signature).outputShape }),
      maxIterations: this.maxIterations, maxObservationChars: this.maxObservationChars,
      runCode: async (code) => {
        await defineInputs(sandbox, sig, values, true);
        const ran = await sandbox.run(code);
        return { output: runOutput(ran), error: ran.error };
      },
      extractAtEnd: (history) => extractOrFail(agent, this.maxIterations, history, () =>
        this.extract.call({ ...values, trajectory: trajectory(history) }, callOptions)),
    }, values, lm);
    return agentResult(prediction, { history }) as CodeActResult<O>;
  }

  /** The steps so far as the model reads them; long outputs are cut (the history keeps them whole). */
  private trajectory(history: readonly CodeActStep[]): string {
    if (history.length === 0) return "(no steps yet)";
    return history
      .map((s) => {
        const lines = [`Step ${s.step}`, `Thought: ${s.thought}`];
        lines.push(s.code === "" ? "Code: (none)" : `Code:\n\`\`\`javascript\n${s.code}\n\`\`\``);
        lines.push(s.output === "" ? "Output: (nothing printed)" : `Output:\n${clip(s.output, this.maxObservationChars)}`);
        if (s.error !== null) lines.push(`Error: ${s.error}`);
        return lines.join("\n");
      })
      .join("\n\n");
  }
}
