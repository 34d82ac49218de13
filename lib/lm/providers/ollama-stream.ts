// A streamed Ollama chat: `stream: true` (NDJSON, one message piece a line; `format` carries the
// schema for native structured output), read through the ollama SDK. The last line (`done: true`)
// brings the token counts and the stop reason.
import type { ChatRequest, Ollama } from "ollama";
import { tokenUsage } from "../usage.js";
import type { ProviderReply } from "./provider.js";
import { handOver } from "../stream-text.js";
import { ollamaToolCalls } from "./tools-ollama.js";
import type { ToolCall } from "../tool-calls.js";

/**
 * Sends `body` as a streamed request and reads it to its end. What `onDelta` throws aborts the HTTP
 * request (the SDK iterator's `abort()`) and is thrown; a `signal` that aborts is thrown as its reason.
 */
export async function ollamaStream(client: Ollama, body: ChatRequest, signal: AbortSignal, onDelta: (text: string) => void): Promise<ProviderReply> {
  const parts = await client.chat({ ...body, stream: true });
  let content = "";
  let usage = tokenUsage(0, 0);
  let finishReason: string | undefined;
  const toolCalls: ToolCall[] = [];
  try {
    for await (const part of parts) {
      const piece = part.message?.content ?? "";
      toolCalls.push(...(ollamaToolCalls(part.message?.tool_calls, toolCalls.length) ?? []));
      if (part.done) {
        usage = tokenUsage(part.prompt_eval_count ?? 0, part.eval_count ?? 0);
        finishReason = part.done_reason || undefined;
      }
      if (piece === "") continue;
      content += piece;
      handOver(onDelta, piece, () => parts.abort());
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw error;
  }
  if (signal.aborted) throw signal.reason;
  return { content, usage, finishReason, toolCalls: toolCalls.length === 0 ? undefined : toolCalls };
}
