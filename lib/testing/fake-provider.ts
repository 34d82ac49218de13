import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { ChatMessage, JsonSchema } from "../lm/types.js";

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
}

/** A scripted reply: text, a JSON value (written as JSON text, or as the forced tool's input), or a function. */
export type FakeReplyValue = string | Record<string, unknown> | unknown[];
export type FakeReply = FakeReplyValue | ((request: FakeRequest) => FakeReplyValue | Promise<FakeReplyValue>);

export interface FakeReplyOptions {
  /** Token counts to report; estimated from the text (4 characters a token) when omitted. */
  usage?: { inputTokens: number; outputTokens: number };
  /** Stop reason to report; each wire format's usual "done" value when omitted. */
  finishReason?: string;
}

export interface FailOptions {
  status: number;
  /** How many requests in a row get this failure (default 1). */
  times?: number;
  /** `retry-after` header (seconds, or an HTTP date string). */
  retryAfter?: number | string;
  /** `retry-after-ms` header. */
  retryAfterMs?: number;
  /** Error body; defaults to the wire format's error shape with a short message. */
  body?: unknown;
}

/** A request rate the server enforces, as a token bucket: over it, a request gets 429 with retry-after. */
export interface FakeRateLimit {
  requestsPerSecond: number;
  /** Requests allowed at once after a quiet spell (bucket size; default 1). */
  burst?: number;
}

export interface FakeProviderOptions {
  /** Reply used when no scripted reply is queued; default: echoes the last user message. */
  defaultReply?: FakeReply;
  /** Enforce a request rate from the start (see `rateLimit`). */
  rateLimit?: FakeRateLimit;
}

export interface FakeProvider {
  /** Base URL (`http://127.0.0.1:<port>`): Anthropic's and Ollama's `baseURL`. */
  readonly url: string;
  /** `url + "/v1"`: OpenAI's `baseURL`. */
  readonly openaiBaseURL: string;
  /** Every request received, faults included, in order. */
  readonly requests: FakeRequest[];
  /** Queues replies, used one per successful request, in order. */
  reply(value: FakeReply, options?: FakeReplyOptions): FakeProvider;
  /** The next `times` requests (default 1) fail with `status`. */
  fail(options: FailOptions): FakeProvider;
  /** The next `times` requests (default 1) are answered after `ms`. */
  delay(ms: number, options?: { times?: number }): FakeProvider;
  /** The next `times` requests (default 1) never get an answer (until the client gives up or `close()`). */
  hang(options?: { times?: number }): FakeProvider;
  /** The next `times` requests (default 1) have their connection destroyed without a reply. */
  dropConnection(options?: { times?: number }): FakeProvider;
  /** The next `times` requests (default 1) get a 200 whose body stops half-way. */
  truncateBody(options?: { times?: number }): FakeProvider;
  /**
   * Enforces a request rate (null lifts it): a request over it gets 429 with `retry-after-ms` (when
   * the next one is allowed) and `retry-after` (the same, in whole seconds). Checked before faults.
   */
  rateLimit(limit: FakeRateLimit | null): FakeProvider;
  /** How many requests got a 429 from the rate limit. */
  readonly rateLimited: number;
  /** Forgets recorded requests, queued replies and faults. */
  reset(): void;
  close(): Promise<void>;
}

type Fault =
  | { kind: "fail"; remaining: number; options: FailOptions }
  | { kind: "delay"; remaining: number; ms: number }
  | { kind: "hang" | "drop" | "truncate"; remaining: number };

const ROUTES: Record<string, FakeWire> = {
  "/v1/chat/completions": "openai",
  "/v1/messages": "anthropic",
  "/api/chat": "ollama",
};

/**
 * Starts a loopback HTTP server speaking the OpenAI chat completions, Anthropic messages and
 * Ollama chat wire formats (non-streaming), so the real SDKs can be tested without a network.
 */
export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const requests: FakeRequest[] = [];
  const replies: { value: FakeReply; options: FakeReplyOptions }[] = [];
  const faults: Fault[] = [];
  const sockets = new Set<Socket>();
  const defaultReply: FakeReply = options.defaultReply ?? ((req) => `echo: ${lastUserText(req.messages)}`);
  let bucket: { limit: FakeRateLimit; tokens: number; at: number } | undefined;
  let rateLimited = 0;
  const setRateLimit = (limit: FakeRateLimit | null | undefined): void => {
    bucket = limit ? { limit, tokens: limit.burst ?? 1, at: performance.now() } : undefined;
  };
  setRateLimit(options.rateLimit);
  /** Takes a token, or returns how many ms until one is free. */
  const overRate = (): number | undefined => {
    if (bucket === undefined) return undefined;
    const now = performance.now();
    const { requestsPerSecond, burst = 1 } = bucket.limit;
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * requestsPerSecond);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    return Math.ceil(((1 - bucket.tokens) / requestsPerSecond) * 1000);
  };

  const takeFault = (): Fault | undefined => {
    const fault = faults[0];
    if (fault === undefined) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) faults.shift();
    return fault;
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake provider error: ${String(error)}` } });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const wire = ROUTES[path];
    if (req.method !== "POST" || wire === undefined) {
      sendJson(res, 404, { error: `fake provider: no route for ${req.method} ${path}` });
      return;
    }
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
    }
    const request: FakeRequest = { wire, method: req.method, path, headers, body, messages: messagesOf(wire, body), schema: schemaOf(wire, body) };
    requests.push(request);

    const waitMs = overRate();
    if (waitMs !== undefined) {
      rateLimited++;
      sendJson(res, 429, errorBody(wire, 429), { "retry-after-ms": String(waitMs), "retry-after": String(Math.ceil(waitMs / 1000)) });
      return;
    }
    const fault = takeFault();
    if (fault?.kind === "drop") {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === "hang") return; // keep the socket open; close() or the client ends it
    if (fault?.kind === "fail") {
      const extra: Record<string, string> = {};
      if (fault.options.retryAfter !== undefined) extra["retry-after"] = String(fault.options.retryAfter);
      if (fault.options.retryAfterMs !== undefined) extra["retry-after-ms"] = String(fault.options.retryAfterMs);
      sendJson(res, fault.options.status, fault.options.body ?? errorBody(wire, fault.options.status), extra);
      return;
    }
    if (fault?.kind === "truncate") {
      const full = JSON.stringify(successBody(wire, body, "truncated reply", undefined, { usage: { inputTokens: 1, outputTokens: 1 } }));
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(full)) });
      res.write(full.slice(0, Math.floor(full.length / 2)));
      // Destroy after the partial write is flushed, so the client sees a body cut off mid-way.
      setTimeout(() => req.socket.destroy(), 10);
      return;
    }
    if (fault?.kind === "delay") await new Promise((resolve) => setTimeout(resolve, fault.ms));
    if (res.destroyed || req.socket.destroyed) return;

    const scripted = replies.shift() ?? { value: defaultReply, options: {} };
    const value = typeof scripted.value === "function" ? await scripted.value(request) : scripted.value;
    sendJson(res, 200, successBody(wire, body, value, request, scripted.options));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const fake: FakeProvider = {
    url,
    openaiBaseURL: `${url}/v1`,
    requests,
    reply(value, replyOptions = {}) {
      replies.push({ value, options: replyOptions });
      return fake;
    },
    fail(failOptions) {
      faults.push({ kind: "fail", remaining: failOptions.times ?? 1, options: failOptions });
      return fake;
    },
    delay(ms, delayOptions = {}) {
      faults.push({ kind: "delay", remaining: delayOptions.times ?? 1, ms });
      return fake;
    },
    hang(hangOptions = {}) {
      faults.push({ kind: "hang", remaining: hangOptions.times ?? 1 });
      return fake;
    },
    dropConnection(dropOptions = {}) {
      faults.push({ kind: "drop", remaining: dropOptions.times ?? 1 });
      return fake;
    },
    truncateBody(truncateOptions = {}) {
      faults.push({ kind: "truncate", remaining: truncateOptions.times ?? 1 });
      return fake;
    },
    rateLimit(limit) {
      setRateLimit(limit);
      return fake;
    },
    get rateLimited() {
      return rateLimited;
    },
    reset() {
      requests.length = 0;
      replies.length = 0;
      faults.length = 0;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : "")).join("");
  }
  return "";
}

function messagesOf(wire: FakeWire, body: any): ChatMessage[] {
  if (body === undefined || !Array.isArray(body.messages)) return [];
  const messages: ChatMessage[] = body.messages.map((m: any) => ({ role: m.role, content: textOf(m.content) }));
  if (wire === "anthropic" && body.system !== undefined) messages.unshift({ role: "system", content: textOf(body.system) });
  return messages;
}

function schemaOf(wire: FakeWire, body: any): JsonSchema | undefined {
  if (body === undefined) return undefined;
  if (wire === "openai") return body.response_format?.json_schema?.schema;
  if (wire === "anthropic") return forcedTool(body)?.input_schema;
  return typeof body.format === "object" && body.format !== null ? body.format : undefined;
}

function forcedTool(body: any): { name: string; input_schema: JsonSchema } | undefined {
  if (body?.tool_choice?.type !== "tool") return undefined;
  return (body.tools ?? []).find((t: any) => t.name === body.tool_choice.name);
}

function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return messages[i]!.content;
  return "";
}

/** Rough token count (about 4 characters a token), so usage is non-zero and grows with the text. */
function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function successBody(wire: FakeWire, body: any, value: FakeReplyValue, request: FakeRequest | undefined, options: FakeReplyOptions): unknown {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const usage = options.usage ?? {
    inputTokens: tokens(JSON.stringify(request?.messages ?? [])),
    outputTokens: tokens(text),
  };
  const model = String(body?.model ?? "fake-model");
  if (wire === "openai") {
    return {
      id: "chatcmpl-fake", object: "chat.completion", created: Math.floor(Date.now() / 1000), model,
      choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: options.finishReason ?? "stop", logprobs: null }],
      usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens },
    };
  }
  if (wire === "anthropic") {
    const tool = forcedTool(body);
    const input = tool === undefined ? undefined : typeof value === "string" ? parseJson(value) : value;
    const content = input !== undefined && tool !== undefined
      ? [{ type: "tool_use", id: "toolu_fake", name: tool.name, input }]
      : [{ type: "text", text }];
    return {
      id: "msg_fake", type: "message", role: "assistant", model, content,
      stop_reason: options.finishReason ?? (content[0]?.type === "tool_use" ? "tool_use" : "end_turn"), stop_sequence: null,
      usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
    };
  }
  return {
    model, created_at: new Date().toISOString(), message: { role: "assistant", content: text }, done: true,
    done_reason: options.finishReason ?? "stop", total_duration: 1000, load_duration: 10,
    prompt_eval_count: usage.inputTokens, prompt_eval_duration: 100, eval_count: usage.outputTokens, eval_duration: 100,
  };
}

/** A JSON object from text, or undefined (a reply that is not JSON becomes a text block instead). */
function parseJson(text: string): unknown {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function errorBody(wire: FakeWire, status: number): unknown {
  const message = `fake provider: injected HTTP ${status}`;
  if (wire === "anthropic") return { type: "error", error: { type: status === 429 ? "rate_limit_error" : "api_error", message } };
  if (wire === "ollama") return { error: message };
  return { error: { message, type: status === 429 ? "rate_limit_exceeded" : "server_error", code: null } };
}
