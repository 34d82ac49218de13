// Token usage in one shape for every provider: builds a `TokenUsage` with its breakdowns, and reads
// the OpenAI and Anthropic usage objects (streamed or not) into it, so `inputTokens` means every
// prompt token (cached included) whichever provider counted it.
import type { TokenUsage } from "./types.js";

/** A `TokenUsage` of `inputTokens` and `outputTokens`, with the breakdowns given (0 otherwise). */
export function tokenUsage(inputTokens: number, outputTokens: number, extra: Partial<TokenUsage> = {}): TokenUsage {
  return {
    inputTokens, outputTokens,
    reasoningTokens: extra.reasoningTokens ?? 0, cacheReadTokens: extra.cacheReadTokens ?? 0, cacheWriteTokens: extra.cacheWriteTokens ?? 0,
  };
}

/** The OpenAI usage fields typelm reads (chat completions, streamed usage chunk, batch result). */
interface OpenAIUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

/** OpenAI usage: `prompt_tokens` already includes the cached tokens; `completion_tokens` the reasoning ones. */
export function openaiUsage(usage: OpenAIUsage | null | undefined): TokenUsage {
  return tokenUsage(usage?.prompt_tokens ?? 0, usage?.completion_tokens ?? 0, {
    cacheReadTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
  });
}

/** The Anthropic usage fields typelm reads (message, `message_start`, `message_delta`, batch result). */
interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/**
 * Anthropic usage: `input_tokens` excludes cache reads and writes, so they are added to make
 * `inputTokens` the whole prompt. Thinking tokens are part of `output_tokens` and not counted apart.
 */
export function anthropicUsage(usage: AnthropicUsage | null | undefined): TokenUsage {
  const cacheReadTokens = usage?.cache_read_input_tokens ?? 0;
  const cacheWriteTokens = usage?.cache_creation_input_tokens ?? 0;
  return tokenUsage((usage?.input_tokens ?? 0) + cacheReadTokens + cacheWriteTokens, usage?.output_tokens ?? 0, { cacheReadTokens, cacheWriteTokens });
}
