/**
 * Scripted tool calls for the fake provider: `toolCalls([...])` queued as a reply is answered in the
 * request's wire format (OpenAI `message.tool_calls`, Anthropic `tool_use` blocks, Ollama
 * `message.tool_calls`), several calls per turn, streamed too (OpenAI `delta.tool_calls` pieces,
 * Anthropic `content_block_start` + `input_json_delta`s, Ollama one line with the calls). Each request
 * records the tool results it carries (`FakeRequest.toolResults`) and the tools it offered (`toolNames`).
 */

/** One scripted call: the tool's name, its arguments, and an id (the wire's own style when omitted). */
export interface FakeToolCallSpec {
  name: string;
  arguments: Record<string, unknown>;
  id?: string;
}

/** A reply made of tool calls (and optional text before them): what `toolCalls(...)` returns. */
export class FakeToolCalls {
  /** @param calls the calls of the turn, in order; @param text assistant text sent with them. */
  constructor(readonly calls: readonly FakeToolCallSpec[], readonly text: string = "") {}
}

/** A reply of one or more tool calls in one turn, for `fake.reply(...)`: `fake.reply(toolCalls([{ name: "add", arguments: { a: 1, b: 2 } }]))`. */
export function toolCalls(calls: readonly FakeToolCallSpec[], options: { text?: string } = {}): FakeToolCalls {
  return new FakeToolCalls(calls, options.text ?? "");
}

/** A tool result a request carried back (OpenAI and Ollama role "tool" messages, Anthropic `tool_result` blocks). */
export interface FakeToolResult {
  /** The call id it answers (OpenAI `tool_call_id`, Anthropic `tool_use_id`); Ollama has none: undefined. */
  callId: string | undefined;
  /** The tool's name where the wire carries it (Ollama `tool_name`). */
  name: string | undefined;
  content: string;
  /** Anthropic `is_error`; false on the other wires, which have no such flag. */
  isError: boolean;
}

let nextId = 0;

function idOf(wire: string, spec: FakeToolCallSpec): string {
  return spec.id ?? `${wire === "anthropic" ? "toolu" : "call"}_fake_${++nextId}`;
}

/** The tool calls with their ids fixed once, so a streamed reply and its record agree. */
export function withIds(wire: string, value: FakeToolCalls): Required<FakeToolCallSpec>[] {
  return value.calls.map((c) => ({ ...c, id: idOf(wire, c) }));
}

/** The text a tool-call reply counts as output (for the estimated usage). */
export function toolCallText(value: FakeToolCalls): string {
  return value.text + JSON.stringify(value.calls.map((c) => ({ name: c.name, arguments: c.arguments })));
}

/** The non-streamed success body of a tool-call reply. `wireUsage` is the usage object already in the wire's form. */
export function toolCallBody(wire: string, model: string, value: FakeToolCalls, wireUsage: object, finishReason: string | undefined): unknown {
  const calls = withIds(wire, value);
  if (wire === "openai") {
    return {
      id: "chatcmpl-fake", object: "chat.completion", created: Math.floor(Date.now() / 1000), model,
      choices: [{
        index: 0, logprobs: null, finish_reason: finishReason ?? "tool_calls",
        message: {
          role: "assistant", content: value.text === "" ? null : value.text, refusal: null,
          tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
        },
      }],
      usage: wireUsage,
    };
  }
  if (wire === "anthropic") {
    const content = [
      ...(value.text === "" ? [] : [{ type: "text", text: value.text }]),
      ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.arguments })),
    ];
    return {
      id: "msg_fake", type: "message", role: "assistant", model, content,
      stop_reason: finishReason ?? "tool_use", stop_sequence: null, usage: wireUsage,
    };
  }
  return {
    model, created_at: new Date().toISOString(),
    message: { role: "assistant", content: value.text, tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) },
    done: true, done_reason: finishReason ?? "stop", ...wireUsage,
  };
}

const sse = (data: unknown, event?: string): string => `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

/** Cuts text in pieces of `size` characters (at least one piece). */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length === 0 ? [""] : out;
}

/**
 * The streamed frames of a tool-call success body (as `toolCallBody` built it), or undefined when
 * the body holds no tool calls. Arguments stream in pieces of `chunkChars` characters.
 */
export function toolCallFrames(wire: string, requestBody: any, success: any, includeUsage: boolean, chunkChars: number): string[] | undefined {
  if (wire === "openai") {
    const message = success?.choices?.[0]?.message;
    if (!Array.isArray(message?.tool_calls)) return undefined;
    const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: success.created, model: success.model, system_fingerprint: null, ...(includeUsage ? { usage: null } : {}) };
    const chunk = (delta: object, finish: string | null = null) => sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    const frames = [chunk({ role: "assistant", content: message.content ?? "", refusal: null })];
    message.tool_calls.forEach((c: any, index: number) => {
      frames.push(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }] }));
      for (const piece of pieces(c.function.arguments, chunkChars)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    frames.push(chunk({}, success.choices[0].finish_reason));
    if (includeUsage) frames.push(sse({ ...base, choices: [], usage: success.usage }));
    frames.push(sse("[DONE]"));
    return frames;
  }
  if (wire === "anthropic") {
    const blocks: any[] = success?.content ?? [];
    // A forced tool (native structured output) is a reply, not a tool call: fake-stream.ts writes it.
    if (requestBody?.tool_choice?.type === "tool" || !blocks.some((b) => b.type === "tool_use")) return undefined;
    const message = { ...success, content: [], stop_reason: null, usage: { ...success.usage, output_tokens: 1 } };
    const frames = [sse({ type: "message_start", message }, "message_start")];
    blocks.forEach((b, index) => {
      if (b.type === "text") {
        frames.push(sse({ type: "content_block_start", index, content_block: { type: "text", text: "" } }, "content_block_start"));
        for (const piece of pieces(b.text, chunkChars)) frames.push(sse({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }, "content_block_delta"));
      } else {
        frames.push(sse({ type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } }, "content_block_start"));
        for (const piece of pieces(JSON.stringify(b.input), chunkChars)) frames.push(sse({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } }, "content_block_delta"));
      }
      frames.push(sse({ type: "content_block_stop", index }, "content_block_stop"));
    });
    frames.push(sse({ type: "message_delta", delta: { stop_reason: success.stop_reason, stop_sequence: null }, usage: { output_tokens: success.usage.output_tokens } }, "message_delta"));
    frames.push(sse({ type: "message_stop" }, "message_stop"));
    return frames;
  }
  if (!Array.isArray(success?.message?.tool_calls)) return undefined;
  const { message, done: _done, done_reason, ...counts } = success;
  return [
    JSON.stringify({ model: success.model, created_at: success.created_at, message: { role: "assistant", content: message.content, tool_calls: message.tool_calls }, done: false }) + "\n",
    JSON.stringify({ ...counts, message: { role: "assistant", content: "" }, done: true, done_reason }) + "\n",
  ];
}

/** The tool results a request body carries back, in the wire's own form. */
export function toolResultsOf(wire: string, body: any): FakeToolResult[] {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  if (wire === "anthropic") {
    return messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []).filter((b: any) => b?.type === "tool_result").map((b: any) => ({
      callId: b.tool_use_id, name: undefined, isError: b.is_error === true,
      content: typeof b.content === "string" ? b.content : (b.content ?? []).map((p: any) => p.text ?? "").join(""),
    })));
  }
  return messages.filter((m) => m.role === "tool").map((m) => ({
    callId: wire === "openai" ? m.tool_call_id : undefined, name: wire === "ollama" ? m.tool_name : undefined,
    content: typeof m.content === "string" ? m.content : "", isError: false,
  }));
}

/** The names of the tools a request offered (each wire's `tools`). */
export function toolNamesOf(wire: string, body: any): string[] {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  return tools.map((t) => (wire === "anthropic" ? t.name : t.function?.name)).filter((n): n is string => typeof n === "string");
}
