// A streamed Anthropic message: `stream: true` on the Messages API, read event by event through the
// @anthropic-ai/sdk. The reply text is the text deltas; with native structured output (forced tool
// use) it is the forced tool's input JSON as it streams (`input_json_delta`). The raw event stream is
// read rather than the SDK's `messages.stream()` helper, which parses the whole partial tool input
// again at every delta (a cost that grows with the reply).
import type Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages/messages";
import { OutputError } from "../../errors.js";
import type { ProviderReply } from "./provider.js";
import { anthropicUsage } from "../usage.js";
import { handOver } from "../stream-text.js";
import { AnthropicToolCallJoiner } from "./tools-anthropic.js";

/**
 * Sends `body` as a streamed request and reads the stream to its end. What `onDelta` throws aborts
 * the HTTP request (`stream.controller.abort()`) and is thrown; a `signal` that aborts mid-stream is
 * checked after the loop (the SDK ends its iteration quietly then) and its reason thrown.
 */
export async function anthropicStream(
  anthropic: Anthropic, body: MessageCreateParamsNonStreaming, signal: AbortSignal, timeoutMs: number, onDelta: (text: string) => void,
): Promise<ProviderReply> {
  const stream = await anthropic.messages.create({ ...body, stream: true }, { signal, timeout: timeoutMs, maxRetries: 0 });
  const toolName = body.tool_choice?.type === "tool" ? body.tool_choice.name : undefined;
  let content = "";
  let text = "";
  const blockTypes: string[] = [];
  /** Index of the forced tool's block, once it has started, and whether its input sent any text. */
  let toolBlock: number | undefined;
  let toolText = false;
  /** The usage fields as reported so far: `message_start`'s, overwritten by each `message_delta`'s (cumulative). */
  const wireUsage: Record<string, number | null | undefined> = {};
  let finishReason: string | undefined;
  const calls = new AnthropicToolCallJoiner();
  const deliver = (piece: string): void => {
    content += piece;
    handOver(onDelta, piece, () => stream.controller.abort());
  };
  for await (const event of stream) {
    switch (event.type) {
      case "message_start":
        Object.assign(wireUsage, event.message.usage ?? {});
        break;
      case "content_block_start":
        blockTypes.push(event.content_block.type);
        if (toolName === undefined) calls.start(event.index, event.content_block);
        if (toolName !== undefined && toolBlock === undefined && event.content_block.type === "tool_use" && event.content_block.name === toolName) {
          toolBlock = event.index;
        }
        break;
      case "content_block_delta":
        if (event.delta.type === "text_delta") {
          text += event.delta.text;
          if (toolName === undefined && event.delta.text !== "") deliver(event.delta.text);
        } else if (event.delta.type === "input_json_delta" && toolName === undefined) {
          calls.delta(event.index, event.delta.partial_json);
        } else if (event.delta.type === "input_json_delta" && event.index === toolBlock && event.delta.partial_json !== "") {
          toolText = true;
          deliver(event.delta.partial_json);
        }
        break;
      case "content_block_stop":
        // A tool called with no input streams no JSON at all: its input is `{}` (as unstreamed).
        if (event.index === toolBlock && !toolText) {
          toolText = true;
          deliver("{}");
        }
        break;
      case "message_delta":
        finishReason = event.delta.stop_reason ?? finishReason;
        // Cumulative counts: the last message_delta has the totals.
        for (const [name, value] of Object.entries(event.usage)) if (typeof value === "number") wireUsage[name] = value;
        break;
      default:
        break;
    }
  }
  if (signal.aborted) throw signal.reason;
  const usage = anthropicUsage(wireUsage);
  if (toolName !== undefined && toolBlock === undefined) {
    throw new OutputError(
      `anthropic reply for model "${body.model}" has no call of the forced tool "${toolName}"; ` +
        `expected a tool_use block, received ${blockTypes.join(", ") || "no content"} (stop_reason ${finishReason})`,
      { raw: text, expected: `a tool_use block named ${toolName}`, received: blockTypes },
    );
  }
  return { content, usage, finishReason, toolCalls: calls.calls() };
}
