/**
 * Native tool calling on the Ollama chat wire: tool definitions as `tools`, earlier tool turns as an
 * assistant message with `tool_calls` followed by one role "tool" message per result (with
 * `tool_name`), and the reply's `message.tool_calls` read back. Ollama gives its calls no ids, so
 * typelm numbers them in the turn (`ollama_call_<turn-local index>`) and returns the results in the calls' order.
 */
import type { ChatRequest, Message, ToolCall as OllamaToolCall } from "ollama";
import { conversationOrder, type ToolCall } from "../tool-calls.js";
import type { LMRequest } from "../types.js";
import { withoutMeta } from "./provider.js";

/** Adds `request.tools` and `request.toolExchanges` to a body built from the request's messages. */
export function addOllamaTools(body: ChatRequest, request: LMRequest): void {
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: withoutMeta(t.parameters) as NonNullable<NonNullable<ChatRequest["tools"]>[number]["function"]["parameters"]> },
    }));
  }
  const exchanges = request.toolExchanges ?? [];
  if (exchanges.length === 0 || body.messages === undefined) return;
  const messages = body.messages;
  const out: Message[] = [];
  for (const item of conversationOrder(messages.length, exchanges)) {
    if (typeof item === "number") {
      out.push(messages[item]!);
      continue;
    }
    out.push({
      role: "assistant", content: item.text,
      tool_calls: item.calls.map((c) => ({ function: { name: c.name, arguments: (typeof c.arguments === "object" && c.arguments !== null ? c.arguments : {}) as Record<string, unknown> } })),
    });
    for (const r of item.results) out.push({ role: "tool", content: r.content, tool_name: r.name });
  }
  body.messages = out;
}

/** The tool calls of a reply message (whole, streamed or not: Ollama sends them in one piece). */
export function ollamaToolCalls(calls: readonly OllamaToolCall[] | undefined, offset = 0): ToolCall[] | undefined {
  if (calls === undefined || calls.length === 0) return undefined;
  return calls.map((c, i) => ({ id: `ollama_call_${offset + i}`, name: c.function.name, arguments: c.function.arguments ?? {} }));
}
