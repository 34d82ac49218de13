/**
 * Native tool calling on the Anthropic Messages wire: tool definitions as `tools` (`input_schema`),
 * earlier tool turns as an assistant message of `tool_use` blocks followed by a user message of
 * `tool_result` blocks (`is_error` on failures), and the reply's `tool_use` blocks (streamed: a
 * `content_block_start` then `input_json_delta` pieces per block) read back. With `promptCache`, the
 * last tool result carries `cache_control`, so each step reads the conversation the previous one wrote.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming, Message, MessageParam } from "@anthropic-ai/sdk/resources/messages/messages";
import { conversationOrder, parseArguments, type ToolCall, type ToolExchange } from "../tool-calls.js";
import type { LMRequest } from "../types.js";
import { schemaName, withoutMeta, type CallSettings } from "./provider.js";

/** Adds `request.tools` and `request.toolExchanges` to a body built from the request's messages. */
export function addAnthropicTools(body: MessageCreateParamsNonStreaming, request: LMRequest, settings: CallSettings): void {
  if (request.tools !== undefined && request.tools.length > 0 && body.tool_choice === undefined) {
    body.tools = request.tools.map((t) => ({
      name: schemaName(t.name), description: t.description, input_schema: withoutMeta(t.parameters) as Anthropic.Messages.Tool.InputSchema,
    }));
  }
  const exchanges = request.toolExchanges ?? [];
  if (exchanges.length === 0) return;
  // Exchanges are placed by the index of a request message; the body's messages leave out the system ones.
  const turnIndex: number[] = [];
  let turns = 0;
  for (let i = 0; i <= request.messages.length; i++) {
    turnIndex.push(turns);
    if (i < request.messages.length && request.messages[i]!.role !== "system") turns++;
  }
  const placed = exchanges.map((e) => ({ ...e, before: turnIndex[Math.min(e.before, request.messages.length)]! }));
  const out: MessageParam[] = [];
  const last = placed.reduce((a, b) => (b.before >= a.before ? b : a));
  for (const item of conversationOrder(body.messages.length, placed)) {
    if (typeof item === "number") {
      const message = body.messages[item]!;
      const previous = out[out.length - 1];
      // A user turn right after tool results joins their message (the API alternates roles).
      if (message.role === "user" && previous?.role === "user" && Array.isArray(previous.content)) {
        const blocks = typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content;
        previous.content = [...previous.content, ...blocks];
      } else out.push(message);
      continue;
    }
    out.push(assistantTurn(item));
    out.push(resultsTurn(item, settings.promptCache === true && item === last));
  }
  body.messages = out;
}

function assistantTurn(exchange: ToolExchange): MessageParam {
  const blocks: Anthropic.Messages.ContentBlockParam[] = exchange.text === "" ? [] : [{ type: "text", text: exchange.text }];
  for (const c of exchange.calls) {
    const input = typeof c.arguments === "object" && c.arguments !== null && !Array.isArray(c.arguments) ? (c.arguments as Record<string, unknown>) : {};
    blocks.push({ type: "tool_use", id: c.id, name: c.name, input });
  }
  return { role: "assistant", content: blocks };
}

function resultsTurn(exchange: ToolExchange, cache: boolean): MessageParam {
  const blocks: Anthropic.Messages.ToolResultBlockParam[] = exchange.results.map((r, i) => ({
    type: "tool_result", tool_use_id: r.callId, content: r.content,
    ...(r.isError ? { is_error: true } : {}),
    ...(cache && i === exchange.results.length - 1 ? { cache_control: { type: "ephemeral" as const } } : {}),
  }));
  return { role: "user", content: blocks };
}

/** The `tool_use` blocks of a reply (none when a tool was forced for structured output). */
export function anthropicToolCalls(message: Message, body: MessageCreateParamsNonStreaming): ToolCall[] | undefined {
  if (body.tool_choice?.type === "tool") return undefined;
  const calls = message.content.flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, name: b.name, arguments: b.input }] : []));
  return calls.length === 0 ? undefined : calls;
}

/** Joins streamed `tool_use` blocks: the block's start gives id and name, `input_json_delta`s its input. */
export class AnthropicToolCallJoiner {
  readonly #blocks = new Map<number, { id: string; name: string; json: string }>();

  start(index: number, block: { type: string; id?: string; name?: string }): void {
    if (block.type === "tool_use") this.#blocks.set(index, { id: block.id ?? "", name: block.name ?? "", json: "" });
  }

  delta(index: number, partialJson: string): void {
    const block = this.#blocks.get(index);
    if (block !== undefined) block.json += partialJson;
  }

  calls(): ToolCall[] | undefined {
    if (this.#blocks.size === 0) return undefined;
    return [...this.#blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => ({ id: b.id, name: b.name, arguments: parseArguments(b.json) }));
  }
}
