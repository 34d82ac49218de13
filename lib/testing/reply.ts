import { toon } from "../prompt/toon-data.js";
import type { ChatMessage, DataFormat, LMResponse } from "../lm/types.js";

/** Roughly four characters a token, the usual estimate for English text. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Token usage of a call estimated from its messages and reply text (the test doubles and `estimate()` agree on it). */
export function estimatedUsage(messages: readonly { content: string }[], content: string): { inputTokens: number; outputTokens: number } {
  return { inputTokens: messages.reduce((n, m) => n + estimateTokens(m.content), 0), outputTokens: estimateTokens(content) };
}

/**
 * Writes output values as a well-formed reply: bare JSON for native structured output, else a
 * fenced block in the prompt's data format (what a well-behaved model answers to Enhanced Prompting).
 */
export function writeReply(values: Record<string, unknown>, native: boolean, dataFormat: DataFormat): string {
  if (native) return JSON.stringify(values);
  if (dataFormat === "toon") return "```toon\n" + toon().encode(JSON.parse(JSON.stringify(values))) + "\n```";
  return "```json\n" + JSON.stringify(values, null, 2) + "\n```";
}

/** A response with token usage estimated from the messages and the reply text; it costs nothing. */
export function estimatedResponse(messages: readonly ChatMessage[], content: string, provider: string, model: string): LMResponse {
  return {
    content,
    usage: { ...estimatedUsage(messages, content), reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    provider,
    model,
    estimatedCost: 0,
    cached: false,
  };
}
