// The `reasoning` setting of an LM: checked once when the LM is built, then written in each
// provider's own terms (OpenAI `reasoning_effort`, Anthropic `thinking` with `budget_tokens`, Ollama
// `think`). An effort is turned into a thinking budget for Anthropic; a budget has no OpenAI
// equivalent and is refused there with a sentence saying what to pass instead.
import { ConfigurationError } from "../errors.js";
import { isProfile } from "./profiles.js";
import type { ReasoningOption } from "./types.js";

const EFFORTS = ["low", "medium", "high"] as const;

/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/** The thinking budget an effort stands for on Anthropic (tokens). */
export const EFFORT_BUDGET: Readonly<Record<(typeof EFFORTS)[number], number>> = { low: 1024, medium: 4096, high: 16384 };

/** `option` checked for `provider`; throws a `ConfigurationError` naming what is wrong and what is allowed. */
export function checkReasoning(id: string, provider: string, option: unknown): ReasoningOption | undefined {
  if (option === undefined) return undefined;
  const allowed = `expected { effort: "low" | "medium" | "high" } or { budgetTokens: <integer >= ${MIN_THINKING_BUDGET}> }`;
  if (typeof option !== "object" || option === null) throw new ConfigurationError(`LM "${id}": reasoning ${allowed}; received ${JSON.stringify(option)}`);
  const keys = Object.keys(option);
  if (keys.length !== 1 || (keys[0] !== "effort" && keys[0] !== "budgetTokens")) {
    throw new ConfigurationError(`LM "${id}": reasoning ${allowed}; received ${JSON.stringify(option)}`);
  }
  if ("effort" in option) {
    if (!EFFORTS.includes(option.effort as never)) throw new ConfigurationError(`LM "${id}": reasoning.effort must be "low", "medium" or "high"; received ${JSON.stringify(option.effort)}`);
    return { effort: option.effort as (typeof EFFORTS)[number] };
  }
  const budget = (option as { budgetTokens: unknown }).budgetTokens;
  if (typeof budget !== "number" || !Number.isInteger(budget) || budget < MIN_THINKING_BUDGET) {
    throw new ConfigurationError(`LM "${id}": reasoning.budgetTokens must be an integer of at least ${MIN_THINKING_BUDGET}; received ${JSON.stringify(budget)}`);
  }
  if (provider === "openai" || isProfile(provider)) {
    const who = provider === "openai" ? "OpenAI" : `${provider} (the OpenAI wire)`;
    throw new ConfigurationError(`LM "${id}": ${who} takes a reasoning effort, not a token budget; pass reasoning: { effort: "low" | "medium" | "high" }`);
  }
  return { budgetTokens: budget };
}

/** The thinking budget of a reasoning setting (Anthropic). */
export function thinkingBudget(reasoning: ReasoningOption): number {
  return "budgetTokens" in reasoning ? reasoning.budgetTokens : EFFORT_BUDGET[reasoning.effort];
}
