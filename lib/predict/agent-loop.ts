/**
 * Small pieces the agent loops share (loaded with their run modules): the choice of the native
 * tool-calling loop, the final-extraction rule, result assembly.
 */
import { resolveLM } from "../config.js";
import { ConfigurationError, LMError, MaxIterationsError, preview } from "../errors.js";
import type { LanguageModel } from "../lm/types.js";
import { Prediction } from "./prediction.js";
import type { ToolCalling } from "./react.js";

/**
 * The model a run of ReAct or CodeAct uses natively, or undefined for the text protocol: "native"
 * needs a model that declares tool support (else a ConfigurationError naming `agent`), "auto" uses
 * it where declared, "text" never.
 */
export function nativeModel(agent: string, mode: ToolCalling, callLM: LanguageModel | undefined, configLM: LanguageModel | undefined): LanguageModel | undefined {
  if (mode === "text") return undefined;
  const lm = resolveLM(callLM, configLM);
  const supported = lm.supportsToolCalling?.() === true;
  if (mode === "native" && !supported) {
    throw new ConfigurationError(
      `${agent}: toolCalling "native" needs a model that takes tool definitions; ${lm.id} does not declare tool support (use "auto" or "text")`,
    );
  }
  return supported ? lm : undefined;
}

/**
 * Errors an agent should let through unchanged rather than fold into its own failure: the model
 * provider being down or unconfigured is not the agent running out of steps.
 */
function isInfrastructure(error: unknown): boolean {
  return error instanceof LMError || error instanceof ConfigurationError;
}

/** The one extraction allowed after the iterations run out; only its failure is a MaxIterationsError. */
export async function extractOrFail<Step, T>(
  agent: string, maxIterations: number, history: Step[], extract: () => Promise<T>,
): Promise<T> {
  try {
    return await extract();
  } catch (error) {
    if (isInfrastructure(error)) throw error;
    const why = error instanceof Error ? error.message : preview(error);
    throw new MaxIterationsError<Step>(
      `${agent} used all ${maxIterations} iterations without finishing, and the final extraction from its trajectory failed: ${why}`,
      { history, maxIterations, cause: error },
    );
  }
}

/** The agent's result: the extracted prediction's fields plus the agent's own, keeping the extraction's meta. */
export function agentResult(extracted: Prediction, extra: Record<string, unknown>): Prediction {
  const meta = Prediction.meta(extracted);
  return new Prediction({ ...(extracted as object), ...extra }, meta);
}
