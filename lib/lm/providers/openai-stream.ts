// A streamed OpenAI chat completion: `stream: true` with `stream_options: { include_usage: true }`,
// read chunk by chunk through the openai SDK. Reply text (and a refusal's text) goes to `onDelta` as
// it arrives; the usage comes from the last chunk.
import type OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import type { ProviderReply } from "./provider.js";
import { openaiUsage, tokenUsage } from "../usage.js";
import { handOver } from "../stream-text.js";
import { OpenAIToolCallJoiner } from "./tools-openai.js";

/**
 * Sends `body` as a streamed request and reads the stream to its end. What `onDelta` throws aborts
 * the HTTP request (`stream.controller.abort()`) and is thrown; a `signal` that aborts mid-stream
 * ends the SDK's iteration quietly, so it is checked after the loop and its reason thrown.
 */
export async function openaiStream(
  openai: OpenAI, body: ChatCompletionCreateParamsNonStreaming, signal: AbortSignal, timeoutMs: number, onDelta: (text: string) => void,
): Promise<ProviderReply> {
  const stream = await openai.chat.completions.create(
    { ...body, stream: true, stream_options: { include_usage: true } },
    { signal, timeout: timeoutMs, maxRetries: 0 },
  );
  let content = "";
  let refused = false;
  let finishReason: string | undefined;
  let usage = tokenUsage(0, 0);
  const tools = new OpenAIToolCallJoiner();
  for await (const chunk of stream) {
    if (chunk.usage) usage = openaiUsage(chunk.usage);
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    tools.add(choice.delta?.tool_calls);
    // A refusal streams as `delta.refusal`: its text is part of the reply, so the OutputError that
    // follows shows why (as unstreamed, where a refusal's text stands for the missing content).
    const refusal = choice.delta?.refusal ?? "";
    if (refusal !== "") refused = true;
    const piece = (choice.delta?.content ?? "") + refusal;
    if (piece === "") continue;
    content += piece;
    handOver(onDelta, piece, () => stream.controller.abort());
  }
  if (signal.aborted) throw signal.reason;
  return { content, usage, finishReason: refused ? "refusal" : finishReason, toolCalls: tools.calls() };
}
