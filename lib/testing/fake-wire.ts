import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChatMessage, JsonSchema } from "../lm/types.js";
import type { FakeStreamOptions } from "./fake-stream.js";
import { mediaOf, type FakeMediaPart } from "./fake-media.js";
import { FakeToolCalls, toolCallBody, toolCallText, toolNamesOf, toolResultsOf, type FakeToolResult } from "./fake-tools.js";

// The three providers' chat wire formats, as the fake provider reads and writes them. Shared by the
// live routes (fake-provider.ts) and the batch services (fake-batches.ts), so a batch line and a live
// request are read and answered by the same code.

/** Which wire format a request used. */
export type FakeWire = "openai" | "anthropic" | "ollama";

/** A request the fake server received, as the provider's SDK sent it. */
export interface FakeRequest {
  wire: FakeWire;
  method: string;
  path: string;
  /** Header names lower-cased. Includes credentials: assert on them, never log them. */
  headers: Record<string, string>;
  /** The parsed JSON body (`undefined` when it was not JSON). */
  body: any;
  /** The chat messages in one shape for every wire format (Anthropic's `system` comes first). */
  messages: ChatMessage[];
  /** The schema asked for in structured mode (OpenAI json_schema, Anthropic forced tool, Ollama format). */
  schema: JsonSchema | undefined;
  /** The media parts that arrived (images, audio, documents), in message order (see fake-media.ts). */
  media: FakeMediaPart[];
  /** Tool results the request carries back (native tool calling), in order. */
  toolResults: FakeToolResult[];
  /** Names of the tools the request offered (native tool calling). */
  toolNames: string[];
  /** Set when the request is a line of a batch: the batch's id and the line's custom id. */
  batch?: { id: string; customId: string };
}

/** A scripted reply: text, a JSON value (written as JSON text, or as the forced tool's input), or a function. */
export type FakeReplyValue = string | Record<string, unknown> | unknown[] | FakeToolCalls;
/** What `fake.reply(...)` and `defaultReply` take: a reply value, or a function of the request that returns one. */
export type FakeReply = FakeReplyValue | ((request: FakeRequest) => FakeReplyValue | Promise<FakeReplyValue>);

/** Token counts a scripted reply reports (see `FakeReplyOptions.usage`). */
export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

/** OpenAI's usage object for `usage`. */
export function openaiWireUsage(usage: FakeUsage): object {
  return {
    prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

/** Anthropic's usage object for `usage` (`input_tokens` without the cache reads and writes). */
export function anthropicWireUsage(usage: FakeUsage): { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number } {
  const read = usage.cacheReadTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  return { input_tokens: usage.inputTokens - read - write, output_tokens: usage.outputTokens, cache_read_input_tokens: read, cache_creation_input_tokens: write };
}

/** Usage and stop reason a scripted reply reports instead of the defaults. */
export interface FakeReplyOptions {
  /**
   * Token counts to report; estimated from the text (4 characters a token) when omitted.
   * `inputTokens` is the whole prompt, cached tokens included (typelm's meaning): the Anthropic wire
   * gets `input_tokens` without the cache reads and writes, as Anthropic counts it. The breakdowns
   * are written in each wire's fields (OpenAI `prompt_tokens_details.cached_tokens` and
   * `completion_tokens_details.reasoning_tokens`; Anthropic `cache_read_input_tokens` and
   * `cache_creation_input_tokens`); Ollama has none and gets only the totals.
   */
  usage?: FakeUsage;
  /** Stop reason to report; each wire format's usual "done" value when omitted. */
  finishReason?: string;
  /** Pacing of this reply when the request asks for a stream (else the fake's own, see `fake.stream()`). */
  stream?: FakeStreamOptions;
}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** Parsed JSON, or undefined when the text is not JSON. */
export function parseBody(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A request record for a JSON body in `wire`'s chat format. */
export function fakeRequest(wire: FakeWire, method: string, path: string, headers: Record<string, string>, body: any): FakeRequest {
  return {
    wire, method, path, headers, body, messages: messagesOf(wire, body), schema: schemaOf(wire, body), media: mediaOf(wire, body),
    toolResults: toolResultsOf(wire, body), toolNames: toolNamesOf(wire, body),
  };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : "")).join("");
  }
  return "";
}

function messagesOf(wire: FakeWire, body: any): ChatMessage[] {
  if (body === undefined || body === null || !Array.isArray(body.messages)) return [];
  const messages: ChatMessage[] = body.messages.map((m: any) => ({ role: m.role, content: textOf(m.content) }));
  if (wire === "anthropic" && body.system !== undefined) messages.unshift({ role: "system", content: textOf(body.system) });
  return messages;
}

function schemaOf(wire: FakeWire, body: any): JsonSchema | undefined {
  if (body === undefined || body === null) return undefined;
  if (wire === "openai") return body.response_format?.json_schema?.schema;
  if (wire === "anthropic") return forcedTool(body)?.input_schema;
  return typeof body.format === "object" && body.format !== null ? body.format : undefined;
}

function forcedTool(body: any): { name: string; input_schema: JsonSchema } | undefined {
  if (body?.tool_choice?.type !== "tool") return undefined;
  return (body.tools ?? []).find((t: any) => t.name === body.tool_choice.name);
}

/**
 * Why the real API would refuse this request with a 400, or undefined. Anthropic: extended thinking
 * combines only with `tool_choice` "auto" or "none"; a forced tool ("tool" or "any") is an error.
 */
export function refusedRequest(wire: FakeWire, body: any): string | undefined {
  if (wire !== "anthropic" || body?.thinking?.type !== "enabled") return undefined;
  const choice = body?.tool_choice?.type;
  if (choice === "tool" || choice === "any") return "Thinking may not be enabled when tool_choice forces tool use.";
  return undefined;
}

export function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return messages[i]!.content;
  return "";
}

/** Rough token count (about 4 characters a token), so usage is non-zero and grows with the text. */
export function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The text of the thinking block an Anthropic reply opens with when the request enabled thinking. */
export const FAKE_THINKING = "The fake provider thinks before it answers.";

/** The 200 body `wire` answers a chat request with, carrying `value` as the reply. */
export function successBody(wire: FakeWire, body: any, value: FakeReplyValue, request: FakeRequest | undefined, options: FakeReplyOptions): unknown {
  const text = typeof value === "string" ? value : value instanceof FakeToolCalls ? toolCallText(value) : JSON.stringify(value);
  const usage = options.usage ?? {
    inputTokens: tokens(JSON.stringify(request?.messages ?? [])),
    outputTokens: tokens(text),
  };
  const model = String(body?.model ?? "fake-model");
  if (value instanceof FakeToolCalls) {
    const wireUsage = wire === "openai" ? openaiWireUsage(usage) : wire === "anthropic" ? anthropicWireUsage(usage) : {
      total_duration: 1000, load_duration: 10, prompt_eval_count: usage.inputTokens, prompt_eval_duration: 100, eval_count: usage.outputTokens, eval_duration: 100,
    };
    return toolCallBody(wire, model, value, wireUsage, options.finishReason);
  }
  if (wire === "openai") {
    return {
      id: "chatcmpl-fake", object: "chat.completion", created: Math.floor(Date.now() / 1000), model,
      choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: options.finishReason ?? "stop", logprobs: null }],
      usage: openaiWireUsage(usage),
    };
  }
  if (wire === "anthropic") {
    const tool = forcedTool(body);
    const input = tool === undefined ? undefined : typeof value === "string" ? parseJsonObject(value) : value;
    const main = input !== undefined && tool !== undefined
      ? { type: "tool_use", id: "toolu_fake", name: tool.name, input }
      : { type: "text", text };
    // With extended thinking on, the reply opens with a thinking block, as Anthropic's does.
    const content = body?.thinking?.type === "enabled" ? [{ type: "thinking", thinking: FAKE_THINKING, signature: "fake-signature" }, main] : [main];
    return {
      id: "msg_fake", type: "message", role: "assistant", model, content,
      stop_reason: options.finishReason ?? (main.type === "tool_use" ? "tool_use" : "end_turn"), stop_sequence: null,
      usage: anthropicWireUsage(usage),
    };
  }
  return {
    model, created_at: new Date().toISOString(), message: { role: "assistant", content: text }, done: true,
    done_reason: options.finishReason ?? "stop", total_duration: 1000, load_duration: 10,
    prompt_eval_count: usage.inputTokens, prompt_eval_duration: 100, eval_count: usage.outputTokens, eval_duration: 100,
  };
}

/** A JSON object from text, or undefined (a reply that is not JSON becomes a text block instead). */
function parseJsonObject(text: string): unknown {
  const parsed: unknown = parseBody(text);
  return typeof parsed === "object" && parsed !== null ? parsed : undefined;
}

/** The error type each wire format names for an HTTP status. */
function errorType(wire: FakeWire, status: number): string {
  if (wire === "anthropic") {
    return ({ 400: "invalid_request_error", 404: "not_found_error", 409: "conflict_error", 429: "rate_limit_error" } as Record<number, string>)[status] ?? "api_error";
  }
  return ({ 400: "invalid_request_error", 404: "invalid_request_error", 409: "invalid_request_error", 429: "rate_limit_exceeded" } as Record<number, string>)[status] ?? "server_error";
}

/**
 * The error body `wire` sends with `status`. Without a message: an injected fault's short message,
 * and (as before batches existed) Anthropic's type is rate_limit_error for 429 and api_error otherwise.
 */
export function errorBody(wire: FakeWire, status: number, message?: string): unknown {
  const text = message ?? `fake provider: injected HTTP ${status}`;
  if (wire === "anthropic") {
    const type = message === undefined ? (status === 429 ? "rate_limit_error" : "api_error") : errorType(wire, status);
    return { type: "error", error: { type, message: text } };
  }
  if (wire === "ollama") return { error: text };
  const type = message === undefined ? (status === 429 ? "rate_limit_exceeded" : "server_error") : errorType(wire, status);
  return { error: { message: text, type, param: null, code: null } };
}
