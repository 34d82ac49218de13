import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createBatchService, type FakeBatch, type FakeBatchScript } from "./fake-batches.js";
import {
  errorBody, fakeRequest, lastUserText, parseBody, readBody, refusedRequest, sendJson, successBody,
  type FakeReply, type FakeReplyOptions, type FakeRequest, type FakeWire,
} from "./fake-wire.js";
import { FakePromptCache } from "./fake-prompt-cache.js";
import { FakeToolCalls, toolCallText } from "./fake-tools.js";
import { wantsStream, writeStream, type FakeStream, type FakeStreamError, type FakeStreamOptions } from "./fake-stream.js";

export type { FakeStream, FakeStreamError, FakeStreamOptions } from "./fake-stream.js";
export type { FakeRequest, FakeReply, FakeReplyValue, FakeReplyOptions, FakeUsage, FakeWire } from "./fake-wire.js";
export type { FakeBatch, FakeBatchLineMatch, FakeBatchScript, FakeBatchWire } from "./fake-batches.js";

/** A scripted failure (`fake.fail(...)`): the HTTP status, how many requests get it, its retry headers and body. */
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

/** Options of `startFakeProvider(options)`: the default reply, a rate limit from the start, the default batch script. */
export interface FakeProviderOptions {
  /** Reply used when no scripted reply is queued; default: echoes the last user message. */
  defaultReply?: FakeReply;
  /** Enforce a request rate from the start (see `rateLimit`). */
  rateLimit?: FakeRateLimit;
  /** How batches behave when no script is queued with `batch()` (default `{}`: each ends on its first poll). */
  batch?: FakeBatchScript;
  /** Pacing of streamed replies (a reply's own `stream` option wins); default 8 characters a chunk, no pause. */
  stream?: FakeStreamOptions;
  /**
   * Report prompt-cache reads and writes (see fake-prompt-cache.ts): a request reads the longest of
   * its prefixes an earlier request marked cacheable (Anthropic `cache_control`). Off by default.
   */
  promptCache?: boolean;
}

/** A running fake provider (what `startFakeProvider` resolves with): its URLs, the requests it recorded, and methods that script replies, faults, rate limits and batches. */
export interface FakeProvider {
  /** Base URL (`http://127.0.0.1:<port>`): Anthropic's and Ollama's `baseURL`. */
  readonly url: string;
  /** `url + "/v1"`: OpenAI's `baseURL`. */
  readonly openaiBaseURL: string;
  /**
   * Every live chat request received (faults included), in order. Batch lines are not live requests:
   * they are in `batches[i].requests`.
   */
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
  /**
   * Scripts the next `script.times` batches (default 1) submitted to either batch service: how many
   * polls they run for, which lines fail or expire, whether the whole batch fails or expires.
   * Faults (`fail`, `delay`, ...) and the rate limit apply to live requests only, never to batch calls.
   */
  batch(script: FakeBatchScript): FakeProvider;
  /** Every batch submitted (OpenAI and Anthropic), in order, updated as it is polled. */
  readonly batches: readonly FakeBatch[];
  /** How many files were uploaded to `POST /v1/files`. */
  readonly uploads: number;
  /**
   * Paces the streamed replies that follow (a reply's own `stream` option wins). A request that asks
   * for a stream (`stream: true`, as each SDK sends it when streaming) gets its reply as OpenAI
   * server-sent chunks (with a usage chunk when `stream_options.include_usage` is set), Anthropic
   * message events (text or the forced tool's `input_json_delta`s) or Ollama NDJSON lines.
   * `truncateBody()` cuts a streamed reply off after about half its chunks.
   */
  stream(options: FakeStreamOptions): FakeProvider;
  /**
   * The next `times` streamed replies (default 1) send `afterChunks` chunks of text (default 0), then
   * the wire's error event (Anthropic `event: error`, an OpenAI `error` chunk, an Ollama `error` line).
   * The text before the error is `text` (queued replies are kept for the requests that follow).
   */
  failStream(options?: FakeStreamError): FakeProvider;
  /** Every streamed reply, in order, with how far it got and whether the client closed the connection early. */
  readonly streams: readonly FakeStream[];
  /** How many streamed replies the client closed the connection of before their end (an abort that reached the socket). */
  readonly closedEarly: number;
  /** Resolves once `closedEarly` has reached `count` (default 1): the server has seen the connection close. */
  whenClosedEarly(count?: number): Promise<void>;
  /**
   * Forgets recorded requests, streams and batches, queued replies, faults, stream pacing and batch
   * scripts, and zeroes `uploads`. Submitted batches and files stay retrievable, as they would at a provider.
   */
  reset(): void;
  /** Destroys open connections and stops the server. */
  close(): Promise<void>;
}

type Fault =
  | { kind: "fail"; remaining: number; options: FailOptions }
  | { kind: "delay"; remaining: number; ms: number }
  | { kind: "hang" | "drop" | "truncate"; remaining: number }
  | { kind: "stream-error"; remaining: number; options: FakeStreamError };

const ROUTES: Record<string, FakeWire> = {
  "/v1/chat/completions": "openai",
  "/v1/messages": "anthropic",
  "/api/chat": "ollama",
};

/**
 * Starts a loopback HTTP server speaking the OpenAI chat completions, Anthropic messages and
 * Ollama chat wire formats (streamed too: see fake-stream.ts), so the real SDKs can be tested without a network.
 * It also speaks OpenAI's Files + Batch API and Anthropic's Message Batches (see fake-batches.ts),
 * answering each batch line with the same replies as a live request.
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

  const streams: FakeStream[] = [];
  const promptCache = options.promptCache ? new FakePromptCache() : undefined;
  let pacing: FakeStreamOptions = options.stream ?? {};
  const closeWaiters: { count: number; resolve: () => void }[] = [];
  const closedEarly = (): number => streams.filter((s) => s.closedEarly).length;
  /** The success body for a chat request (the next queued reply, else the default one) and the reply's options. */
  const answerWith = async (request: FakeRequest): Promise<{ body: unknown; options: FakeReplyOptions }> => {
    const scripted = replies.shift() ?? { value: defaultReply, options: {} };
    const value = typeof scripted.value === "function" ? await scripted.value(request) : scripted.value;
    let replyOptions = scripted.options;
    if (promptCache !== undefined && replyOptions.usage === undefined) {
      const text = typeof value === "string" ? value : value instanceof FakeToolCalls ? toolCallText(value) : JSON.stringify(value);
      replyOptions = { ...replyOptions, usage: promptCache.usage(request, text) };
    }
    return { body: successBody(request.wire, request.body, value, request, replyOptions), options: replyOptions };
  };
  const answer = async (request: FakeRequest): Promise<unknown> => (await answerWith(request)).body;
  /** Streams the answer to `request`, records it, and wakes the `whenClosedEarly` waiters once it is over. */
  const stream = async (request: FakeRequest, req: IncomingMessage, res: ServerResponse, truncate: boolean, failure?: FakeStreamError): Promise<void> => {
    // A reply cut off or failed on purpose has its own text: queued replies stay for the next request.
    const own = failure !== undefined ? failure.text ?? "partial reply before an error" : truncate ? "truncated reply, cut off" : undefined;
    const { body, options: replyOptions } = own !== undefined
      ? { body: successBody(request.wire, request.body, own, request, {}), options: {} as FakeReplyOptions }
      : await answerWith(request);
    const record: FakeStream = { wire: request.wire, chunks: 0, sent: 0, ended: false, closedEarly: false, truncated: false };
    streams.push(record);
    const wake = (): void => {
      for (const waiter of closeWaiters.splice(0)) {
        if (closedEarly() >= waiter.count) waiter.resolve();
        else closeWaiters.push(waiter);
      }
    };
    await writeStream(res, req.socket, request.wire, request.body, body, replyOptions.stream ?? pacing, record, truncate, wake, failure);
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
    const raw = await readBody(req);
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const method = req.method ?? "GET";
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
    }
    if (await batches.handle(method, path, headers, raw, res)) return;
    const wire = ROUTES[path];
    if (method !== "POST" || wire === undefined) {
      sendJson(res, 404, { error: `fake provider: no route for ${method} ${path}` });
      return;
    }
    const request = fakeRequest(wire, method, path, headers, parseBody(raw.toString("utf8")));
    const body = request.body;
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
    if (fault?.kind === "truncate" && wantsStream(body)) return stream(request, req, res, true);
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
    const refused = refusedRequest(wire, body);
    if (refused !== undefined) {
      sendJson(res, 400, errorBody(wire, 400, refused));
      return;
    }

    if (wantsStream(body)) return stream(request, req, res, false, fault?.kind === "stream-error" ? fault.options : undefined);
    sendJson(res, 200, await answer(request));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  // Created once the url is known (Anthropic's results_url); no request is handled before listen().
  const batches = createBatchService({ url, answer, defaultScript: options.batch ?? {} });

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
    batch(script) {
      batches.script(script);
      return fake;
    },
    batches: batches.batches,
    get uploads() {
      return batches.uploads;
    },
    failStream(failOptions = {}) {
      faults.push({ kind: "stream-error", remaining: failOptions.times ?? 1, options: failOptions });
      return fake;
    },
    stream(streamOptions) {
      pacing = streamOptions;
      return fake;
    },
    streams,
    get closedEarly() {
      return closedEarly();
    },
    whenClosedEarly(count = 1) {
      if (closedEarly() >= count) return Promise.resolve();
      return new Promise<void>((resolve) => closeWaiters.push({ count, resolve }));
    },
    reset() {
      requests.length = 0;
      streams.length = 0;
      pacing = options.stream ?? {};
      replies.length = 0;
      faults.length = 0;
      promptCache?.clear();
      batches.reset();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
