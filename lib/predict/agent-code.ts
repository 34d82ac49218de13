/** Pieces shared by the agents that run model-written JavaScript in the sandbox (CodeAct, ProgramOfThought). */
import { inputsToWire } from "../signature/wire.js";
import { TypelmError } from "../errors.js";
import type { Sandbox, SandboxOptions, SandboxResult, SandboxTool } from "../sandbox/sandbox.js";
import type { CompiledSignature } from "../signature/compile.js";
import { invokeSafely, renderValue, schemaText, type AgentTool } from "./agent-tools.js";

/** Sandbox limits an agent passes through (its tools come from the agent's own `tools` option). */
export type AgentSandboxOptions = Omit<SandboxOptions, "tools">;

const FENCE = /^\s*```[A-Za-z0-9_-]*[^\S\n]*\n([\s\S]*?)\n?```\s*$/;

/** Models often wrap code in a markdown fence even inside a JSON field; the sandbox wants the code alone. */
export function stripCodeFence(code: string): string {
  const match = FENCE.exec(code);
  return match ? match[1]! : code;
}

/**
 * The agent's tools as sandbox functions: `await name({ ...args })` in the guest. Invalid arguments
 * and tool failures reject the guest promise with the tool's message, so the code can catch them or
 * the model sees them as the run's error.
 */
export function sandboxTools(tools: Iterable<AgentTool>): Record<string, SandboxTool> {
  const out: Record<string, SandboxTool> = {};
  for (const t of tools) {
    out[t.name] = async (args: unknown) => {
      const outcome = await invokeSafely(t, args ?? {});
      if (outcome.ok) return outcome.value;
      throw new Error(outcome.error);
    };
  }
  return out;
}

/** The tools as the model reads them when it writes code: how to call each one. */
export function describeCodeTools(tools: Iterable<AgentTool>): string {
  const lines = [...tools].map((t) => `- await ${t.name}(args): ${t.description} args (JSON Schema): ${schemaText(t)}`);
  return lines.length === 0 ? "(none)" : lines.join("\n");
}

/** What a run printed, plus its completion value when it has one (`=> value`), as the model reads it. */
export function runOutput(run: SandboxResult): string {
  if (run.error !== null || run.result === undefined) return run.output;
  return `${run.output}=> ${renderValue(run.result)}`;
}

/**
 * Makes the task's input values readable by the code as the global `inputs` (JSON wire form).
 * With `ifMissing`, only when the global is gone: the sandbox rebuilds its guest after an
 * out-of-memory error or a runaway job, and the next step still needs its inputs.
 */
export async function defineInputs(
  sandbox: Sandbox, sig: CompiledSignature, values: Record<string, unknown>, ifMissing = false,
): Promise<void> {
  // A JSON text is a valid JavaScript expression, so the values go in as data, never as code.
  const assign = `globalThis.inputs = ${JSON.stringify(inputsToWire(sig, values))};`;
  const run = await sandbox.run(ifMissing ? `if (typeof globalThis.inputs === "undefined") { ${assign} }` : assign);
  if (run.error !== null) {
    throw new TypelmError(`Sandbox setup for ${sig.name}: defining \`inputs\` failed: ${run.error}`);
  }
}
