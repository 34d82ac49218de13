/**
 * The choice between the native tool-calling loop and the text protocol for one run of ReAct or
 * CodeAct ("native" needs a model that declares tool support; "auto" uses it where declared). Loaded
 * with the agents' run modules; the option itself is checked in agent-options.ts.
 */
import { resolveLM } from "../config.js";
import { ConfigurationError } from "../errors.js";
import type { LanguageModel } from "../lm/types.js";
import type { ToolCalling } from "./react.js";

/**
 * The model a run uses natively, or undefined for the text protocol. `agent` names the agent in the
 * error "native" raises when the model declares no tool support.
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
