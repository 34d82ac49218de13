/**
 * The `toolCalling` option of the agents that can use a provider's native function calling
 * (CodeAct): the option checked, and the choice between the native loop and the text protocol for
 * one run ("native" needs a model that declares tool support; "auto" uses it where declared).
 */
import { resolveLM } from "../config.js";
import { ConfigurationError, ValidationError, preview } from "../errors.js";
import type { LanguageModel } from "../lm/types.js";
import type { ToolCalling } from "./react.js";

/** The `toolCalling` option checked: "auto" when omitted. */
export function toolCallingOption(agent: string, value: unknown): ToolCalling {
  if (value === undefined) return "auto";
  if (value === "native" || value === "text" || value === "auto") return value;
  throw new ValidationError(`${agent} option toolCalling: expected "native", "text" or "auto", received ${preview(value)}`, { field: "toolCalling" });
}

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
