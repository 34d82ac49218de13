/**
 * Native tool calling on the OpenAI chat completions wire: tool definitions as `tools` (strict
 * function schemas where strict mode can express them), earlier tool turns as an assistant message
 * with `tool_calls` followed by one role "tool" message per result, and the reply's
 * `message.tool_calls` (streamed: `delta.tool_calls` pieces joined by index) read back.
 */
import type OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { strictSchemaProblem, toStrictSchema } from "../strict-schema.js";
import { conversationOrder, parseArguments, type ToolCall, type ToolDefinition, type ToolExchange } from "../tool-calls.js";
import type { LMRequest } from "../types.js";
import { schemaName, withoutMeta } from "./provider.js";

/** Adds `request.tools` and `request.toolExchanges` to a body built from the request's messages. */
export function addOpenAITools(body: ChatCompletionCreateParamsNonStreaming, request: LMRequest): void {
  if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools.map(openaiTool);
  if (request.toolExchanges !== undefined && request.toolExchanges.length > 0) body.messages = withExchanges(body.messages, request.toolExchanges);
}

/** One function definition: strict when strict mode can express its schema, else the schema as it is. */
export function openaiTool(tool: ToolDefinition): OpenAI.Chat.Completions.ChatCompletionTool {
  const strict = toStrictSchema(tool.parameters);
  const fn = strictSchemaProblem(strict) === undefined
    ? { name: schemaName(tool.name), description: tool.description, parameters: strict, strict: true }
    : { name: schemaName(tool.name), description: tool.description, parameters: withoutMeta(tool.parameters) };
  return { type: "function", function: fn };
}

function withExchanges(messages: ChatCompletionMessageParam[], exchanges: readonly ToolExchange[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const item of conversationOrder(messages.length, exchanges)) {
    if (typeof item === "number") {
      out.push(messages[item]!);
      continue;
    }
    out.push({
      role: "assistant",
      content: item.text === "" ? null : item.text,
      tool_calls: item.calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } })),
    });
    for (const r of item.results) out.push({ role: "tool", tool_call_id: r.callId, content: r.content });
  }
  return out;
}

/** The tool calls of a (non-streamed) reply message. */
export function openaiToolCalls(message: OpenAI.Chat.Completions.ChatCompletionMessage | undefined): ToolCall[] | undefined {
  const calls = message?.tool_calls;
  if (calls === undefined || calls === null || calls.length === 0) return undefined;
  return calls.flatMap((c) => (c.type === "function" ? [{ id: c.id, name: c.function.name, arguments: parseArguments(c.function.arguments) }] : []));
}

/** Joins streamed `delta.tool_calls` pieces (by their index) into whole calls. */
export class OpenAIToolCallJoiner {
  readonly #parts = new Map<number, { id: string; name: string; args: string }>();

  add(pieces: readonly OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] | undefined): void {
    for (const p of pieces ?? []) {
      const part = this.#parts.get(p.index) ?? { id: "", name: "", args: "" };
      if (p.id) part.id = p.id;
      if (p.function?.name) part.name += p.function.name;
      if (p.function?.arguments) part.args += p.function.arguments;
      this.#parts.set(p.index, part);
    }
  }

  calls(): ToolCall[] | undefined {
    if (this.#parts.size === 0) return undefined;
    return [...this.#parts.entries()].sort(([a], [b]) => a - b).map(([, p]) => ({ id: p.id, name: p.name, arguments: parseArguments(p.args) }));
  }
}
