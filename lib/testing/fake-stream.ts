// The fake provider's streamed replies: the same reply a non-streamed request gets (its text, usage
// and stop reason), written in each wire format's streaming form (OpenAI server-sent chunks with a
// usage chunk when asked for, Anthropic's server-sent message events, Ollama's NDJSON lines), paced
// chunk by chunk. Each streamed reply is recorded with how far it got, so a test can see that a
// client closed the connection before the reply ended.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { textChunks } from "../lm/stream-text.js";
import { toolCallFrames } from "./fake-tools.js";
import { anthropicWireUsage, openaiWireUsage, type FakeUsage, type FakeWire } from "./fake-wire.js";

/** How a streamed reply is paced: characters of reply text per chunk, and a pause before each chunk after the first. */
export interface FakeStreamOptions {
  /** Characters of reply text per chunk (default 8). */
  chunkChars?: number;
  /** Milliseconds between two chunks (default 0). */
  delayMs?: number;
}

/** One streamed reply as the fake provider sent it. */
export interface FakeStream {
  wire: FakeWire;
  /** Chunks of reply text the reply has. */
  chunks: number;
  /** Chunks of reply text written before the reply ended or the connection closed. */
  sent: number;
  /** The whole reply was written, to its last event. */
  ended: boolean;
  /** The client closed the connection before the reply ended (an abort that reached the socket). */
  closedEarly: boolean;
  /** The fake cut the reply off on purpose (`truncateBody`, `failStream`): not counted as closed early. */
  truncated: boolean;
}

/** An error event sent inside a streamed reply (`fake.failStream(...)`), after some chunks of text. */
export interface FakeStreamError {
  /** Chunks of reply text sent before the error (default 0: before any text). */
  afterChunks?: number;
  /** The error's type (default "overloaded_error" for Anthropic, "server_error" otherwise). */
  type?: string;
  /** How many streamed requests in a row get it (default 1). */
  times?: number;
  /** The reply text streamed before the error (default "partial reply before an error"); queued replies are not used. */
  text?: string;
}

/** The error event `wire` writes inside a stream, ending it. */
function errorFrame(wire: FakeWire, type: string | undefined): string {
  const message = "fake provider: injected error in the stream";
  if (wire === "anthropic") return sse({ type: "error", error: { type: type ?? "overloaded_error", message } }, "error");
  if (wire === "openai") return sse({ error: { message, type: type ?? "server_error", param: null, code: null } });
  return JSON.stringify({ error: message }) + "\n";
}

/** Whether a chat request asked for a streamed reply (`stream: true` in the body, as each SDK sends it). */
export function wantsStream(body: any): boolean {
  return body?.stream === true;
}

/** The text, usage and stop reason a non-streamed success body carries, read back in any wire format. */
interface ReplyParts {
  model: string;
  text: string;
  /** Anthropic forced tool use: the tool's name (the text is then its input as JSON). */
  tool: string | undefined;
  /** The usage in typelm's meaning (see `FakeReplyOptions.usage`). */
  usage: FakeUsage;
  /** Anthropic extended thinking: the thinking block's text, streamed before the answer's block. */
  thinking?: string;
  finishReason: string;
}

function partsOf(wire: FakeWire, success: any): ReplyParts {
  if (wire === "openai") {
    const choice = success.choices[0];
    return {
      model: success.model, text: choice.message.content ?? "", tool: undefined, finishReason: choice.finish_reason,
      usage: {
        inputTokens: success.usage.prompt_tokens, outputTokens: success.usage.completion_tokens,
        cacheReadTokens: success.usage.prompt_tokens_details.cached_tokens, reasoningTokens: success.usage.completion_tokens_details.reasoning_tokens,
      },
    };
  }
  if (wire === "anthropic") {
    const block = success.content.find((b: { type: string }) => b.type !== "thinking");
    const tool = block?.type === "tool_use" ? String(block.name) : undefined;
    const thinking = success.content.find((b: { type: string }) => b.type === "thinking")?.thinking;
    return {
      ...(thinking === undefined ? {} : { thinking }),
      model: success.model, text: tool === undefined ? block?.text ?? "" : JSON.stringify(block.input), tool, finishReason: success.stop_reason,
      usage: {
        inputTokens: success.usage.input_tokens + success.usage.cache_read_input_tokens + success.usage.cache_creation_input_tokens,
        outputTokens: success.usage.output_tokens,
        cacheReadTokens: success.usage.cache_read_input_tokens, cacheWriteTokens: success.usage.cache_creation_input_tokens,
      },
    };
  }
  return {
    model: success.model, text: success.message.content, tool: undefined, finishReason: success.done_reason,
    usage: { inputTokens: success.prompt_eval_count, outputTokens: success.eval_count },
  };
}

const sse = (data: unknown, event?: string): string => `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

/** The wire's events before, around and after the text chunks. */
function frames(wire: FakeWire, parts: ReplyParts, includeUsage: boolean): { head: string[]; chunk: (text: string) => string; tail: string[] } {
  const created = Math.floor(Date.now() / 1000);
  if (wire === "openai") {
    const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created, model: parts.model, system_fingerprint: null, ...(includeUsage ? { usage: null } : {}) };
    const choice = (delta: object, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    const usage = openaiWireUsage(parts.usage);
    return {
      head: [sse(choice({ role: "assistant", content: "", refusal: null }, null))],
      chunk: (text) => sse(choice({ content: text }, null)),
      tail: [sse(choice({}, parts.finishReason)), ...(includeUsage ? [sse({ ...base, choices: [], usage })] : []), sse("[DONE]")],
    };
  }
  if (wire === "anthropic") {
    const block = parts.tool === undefined ? { type: "text", text: "" } : { type: "tool_use", id: "toolu_fake", name: parts.tool, input: {} };
    const message = {
      id: "msg_fake", type: "message", role: "assistant", model: parts.model, content: [], stop_reason: null, stop_sequence: null,
      usage: { ...anthropicWireUsage(parts.usage), output_tokens: 1 },
    };
    // With thinking, its block comes first (index 0) and the answer's block is index 1.
    const at = parts.thinking === undefined ? 0 : 1;
    const thinking = parts.thinking === undefined ? [] : [
      sse({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }, "content_block_start"),
      sse({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: parts.thinking } }, "content_block_delta"),
      sse({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "fake-signature" } }, "content_block_delta"),
      sse({ type: "content_block_stop", index: 0 }, "content_block_stop"),
    ];
    return {
      head: [
        sse({ type: "message_start", message }, "message_start"),
        ...thinking,
        sse({ type: "content_block_start", index: at, content_block: block }, "content_block_start"),
        sse({ type: "ping" }, "ping"),
      ],
      chunk: (text) => sse({
        type: "content_block_delta", index: at,
        delta: parts.tool === undefined ? { type: "text_delta", text } : { type: "input_json_delta", partial_json: text },
      }, "content_block_delta"),
      tail: [
        sse({ type: "content_block_stop", index: at }, "content_block_stop"),
        // Cumulative usage, cache counts included, as the Messages API sends it in message_delta.
        sse({ type: "message_delta", delta: { stop_reason: parts.finishReason, stop_sequence: null }, usage: anthropicWireUsage(parts.usage) }, "message_delta"),
        sse({ type: "message_stop" }, "message_stop"),
      ],
    };
  }
  const line = (content: string, done: boolean, extra: object = {}) =>
    JSON.stringify({ model: parts.model, created_at: new Date().toISOString(), message: { role: "assistant", content }, done, ...extra }) + "\n";
  return {
    head: [],
    chunk: (text) => line(text, false),
    tail: [line("", true, {
      done_reason: parts.finishReason, total_duration: 1000, load_duration: 10,
      prompt_eval_count: parts.usage.inputTokens, prompt_eval_duration: 100, eval_count: parts.usage.outputTokens, eval_duration: 100,
    })],
  };
}

/**
 * Writes `success` (a non-streamed success body of `wire`) as a streamed reply, paced by `pacing`,
 * and records it in `record` as it goes. Stops writing as soon as the client closes the connection.
 * With `failure`, writes `failure.afterChunks` text chunks, then an error event, and ends the reply.
 * With `truncate`, writes about half the text chunks (at least one) and then ends the connection
 * without the rest. Resolves when the reply is written or the connection has closed; `onClose` is
 * called once the connection has closed (after `record` says whether early).
 */
export async function writeStream(
  res: ServerResponse, socket: Socket, wire: FakeWire, requestBody: any, success: unknown,
  pacing: FakeStreamOptions, record: FakeStream, truncate: boolean, onClose: () => void, failure?: FakeStreamError,
): Promise<void> {
  const toolFrames = toolCallFrames(wire, requestBody, success, requestBody?.stream_options?.include_usage === true, pacing.chunkChars ?? 8);
  if (toolFrames !== undefined) return writeFrames(res, wire, toolFrames, pacing, record, onClose);
  const parts = partsOf(wire, success);
  const { head, chunk, tail } = frames(wire, parts, requestBody?.stream_options?.include_usage === true);
  const chunks = textChunks(parts.text, pacing.chunkChars ?? 8);
  record.chunks = chunks.length;
  const delayMs = pacing.delayMs ?? 0;
  let closed = false;
  res.on("close", () => {
    closed = true;
    if (!record.ended && !record.truncated) record.closedEarly = true;
    onClose();
  });
  res.writeHead(200, {
    "content-type": wire === "ollama" ? "application/x-ndjson" : "text/event-stream",
    "cache-control": "no-cache",
  });
  for (const frame of head) res.write(frame);
  const stopAt = failure !== undefined ? Math.min(chunks.length, failure.afterChunks ?? 0)
    : truncate ? Math.max(1, Math.floor(chunks.length / 2)) : chunks.length;
  for (let i = 0; i < stopAt; i++) {
    if (i > 0 && delayMs > 0) await sleep(delayMs);
    if (closed) return;
    res.write(chunk(chunks[i]!));
    record.sent++;
  }
  if (failure !== undefined) {
    if (closed) return;
    record.truncated = true;
    res.end(errorFrame(wire, failure.type));
    return;
  }
  if (truncate) {
    record.truncated = true;
    // A graceful end of the connection after what was written: the client reads those chunks, then
    // finds the body cut off before its end.
    await new Promise<void>((resolve) => res.write("", () => resolve()));
    socket.end();
    return;
  }
  if (closed) return;
  for (const frame of tail) res.write(frame);
  record.ended = true;
  res.end();
}

/** Writes a tool-call reply's frames (see fake-tools.ts), each one a chunk, paced; stops when the client closes. */
async function writeFrames(res: ServerResponse, wire: FakeWire, all: string[], pacing: FakeStreamOptions, record: FakeStream, onClose: () => void): Promise<void> {
  let closed = false;
  record.chunks = all.length;
  res.on("close", () => {
    closed = true;
    if (!record.ended) record.closedEarly = true;
    onClose();
  });
  res.writeHead(200, { "content-type": wire === "ollama" ? "application/x-ndjson" : "text/event-stream", "cache-control": "no-cache" });
  for (let i = 0; i < all.length; i++) {
    if (i > 0 && (pacing.delayMs ?? 0) > 0) await sleep(pacing.delayMs!);
    if (closed) return;
    res.write(all[i]!);
    record.sent++;
  }
  record.ended = true;
  res.end();
}
