/** Small pieces the agent loops share (loaded with their run modules): the final-extraction rule, result assembly. */
import { ConfigurationError, LMError, MaxIterationsError, preview } from "../errors.js";
import { Prediction } from "./prediction.js";

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
