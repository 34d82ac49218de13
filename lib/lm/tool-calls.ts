/**
 * Native tool calling at the LM layer: the tool definitions a request offers the model, the tool
 * calls a reply carries back, and the earlier tool turns (assistant calls and their results) a
 * request replays. Each provider writes these in its own wire form (tools-openai.ts,
 * tools-anthropic.ts, tools-ollama.ts); the agents (lib/predict/react-native.ts) speak only these types.
 */
import type { JsonSchema } from "./types.js";

/** One function the model may call: its name, what it does and the JSON Schema of its arguments. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** A call the model asked for: the provider's call id, the tool's name and its arguments (parsed JSON; the raw text when it was not JSON). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** What a tool returned for one call, as text the model reads; `isError` marks a failure. */
export interface ToolResult {
  callId: string;
  name: string;
  content: string;
  isError: boolean;
}

/**
 * One earlier tool turn replayed in a request: the assistant's text and tool calls, then their
 * results. It stands before `messages[before]` (`before === messages.length`: after the last message).
 */
export interface ToolExchange {
  before: number;
  /** Text the assistant wrote with its calls (its thought), or "" for none. */
  text: string;
  calls: ToolCall[];
  results: ToolResult[];
}

/** A tool call's arguments as text from the wire: parsed JSON, else the text itself (the tool's validation then reports it). */
export function parseArguments(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The request's messages and tool turns in conversation order: each item is a message index or a
 * tool exchange. Providers walk this to write their own message lists.
 */
export function conversationOrder(messageCount: number, exchanges: readonly ToolExchange[] | undefined): Array<number | ToolExchange> {
  const sorted = [...(exchanges ?? [])].sort((a, b) => a.before - b.before);
  const order: Array<number | ToolExchange> = [];
  let next = 0;
  for (let i = 0; i < messageCount; i++) {
    while (next < sorted.length && sorted[next]!.before <= i) order.push(sorted[next++]!);
    order.push(i);
  }
  while (next < sorted.length) order.push(sorted[next++]!);
  return order;
}
