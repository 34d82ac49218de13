import { setTimeout as sleep } from "node:timers/promises";
import { ConfigurationError, LMError, ValidationError } from "../errors.js";
import { Instrumentation } from "../instrument/bus.js";
import { redactError, shownUrl } from "../instrument/redact.js";
import { LM } from "./lm.js";
import { currentPolicy } from "./policy.js";
import { PROVIDERS, type ProviderDefinition, type ProviderReply } from "./providers/index.js";
import type {
  BatchCall, BatchConnection, BatchLimits, BatchService, BatchStatus, BatchWriter, CallSettings, RawBatchResult, UnreadableResultLine,
} from "./providers/provider.js";
import { withRetry } from "./retry.js";
import { markBatchEnded } from "./batch-ended.js";
export { batchEnded } from "./batch-ended.js";
import type { LMRequest } from "./types.js";

export type { BatchLimits, BatchState, BatchStatus } from "./providers/provider.js";

/** One request of a batch, under an id of the caller's choosing that its result comes back with. */
export interface BatchRequest {
  /** 1 to 64 characters from `a-z A-Z 0-9 _ -` (Anthropic's rule, used for both providers); unique per submission. */
  customId: string;
  request: LMRequest;
}

/** What became of one request: the reply the live call would have returned, or why there is none. */
export type BatchResult =
  | { ok: true; reply: ProviderReply }
  | {
    ok: false;
    /** The provider's reason, with secrets and URL credentials masked. */
    error: string;
    /** The batch's time window ran out before this request ran: sending it again may succeed. */
    expired?: boolean;
    /** The HTTP status the provider gave this request, when it gave one. */
    status?: number;
  };

/** A batch the provider accepted: its id and the custom ids of the requests it holds. */
export interface SubmittedBatch {
  id: string;
  customIds: string[];
}

export interface BatchClientOptions {
  /** As for `LM`: read from `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` when omitted. */
  apiKey?: string;
  baseURL?: string;
  temperature?: number;
  maxTokens?: number;
  /** Seconds between the first status requests (default 5); the wait doubles up to a minute. */
  pollInterval?: number;
  /** Fewer requests per batch than the provider allows; a larger submission is split. */
  maxRequestsPerBatch?: number;
}

const DEFAULT_POLL_INTERVAL_S = 5;
/** While a wait between polls is longer than this (ms), `wait` tells its listener again after each such stretch. */
const HEARTBEAT_MS = 60_000;
/** A wait of `ms` between two polls cut into stretches of at most `heartbeatMs` (a minute), so a listener can be told between them. */
export function sleepSteps(ms: number, heartbeatMs = HEARTBEAT_MS): number[] {
  const steps: number[] = [];
  let rest = ms;
  while (rest > heartbeatMs) {
    steps.push(heartbeatMs);
    rest -= heartbeatMs;
  }
  steps.push(Math.max(0, rest));
  return steps;
}

/** Seconds as a person reads them: "90 s", "3 min", "2.5 h". */
function waited(seconds: number): string {
  if (seconds < 120) return `${Number(seconds.toFixed(3))} s`;
  if (seconds < 7200) return `${Number((seconds / 60).toFixed(1))} min`;
  return `${Number((seconds / 3600).toFixed(1))} h`;
}
/** Polling backs off to this, so a batch that takes hours costs one status request a minute. */
const MAX_POLL_INTERVAL_S = 60;
/** An upload, batch creation or results download moves a whole batch: it gets at least this long. */
const BULK_TIMEOUT_S = 600;
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** States after which a batch changes no more. */
const ENDED = new Set(["completed", "failed", "expired", "cancelled"]);

/** Seconds before the next status request: twice the last wait, up to a minute (or `pollInterval` when that is longer). */
export function nextPollDelay(previous: number, pollInterval: number): number {
  return Math.max(pollInterval, Math.min(previous * 2, MAX_POLL_INTERVAL_S));
}

/**
 * Counts lines into batches: a line that would take the current batch past the limits starts a new
 * one. A batch is never empty, so a line larger than the byte limit on its own must be refused
 * before it gets here.
 */
export class BatchSplitter {
  #requests = 0;
  #bytes = 0;

  constructor(readonly limits: BatchLimits) {}

  /** Counts one line of `bytes` (its newline included); true when it starts a new batch. */
  add(bytes: number): boolean {
    const fresh = this.#requests > 0 && (this.#requests >= this.limits.maxRequests || this.#bytes + bytes > this.limits.maxBytes);
    if (fresh) {
      this.#requests = 0;
      this.#bytes = 0;
    }
    this.#requests += 1;
    this.#bytes += bytes;
    return fresh;
  }
}

/**
 * A model's requests through its provider's batch service (OpenAI Batch API, Anthropic Message
 * Batches), over the official SDKs: half price, separate rate limits, answers within 24 hours.
 * `submit` writes each request as the exact body the live call would send, split at the provider's
 * limits and `maxRequestsPerBatch`; `wait` polls with back-off; `results` reads each reply as the
 * live call reads it. Every provider call runs under the LM's retry policy (`LM.configure`), and
 * no error carries a key or a URL's credentials.
 */
export class BatchClient {
  readonly provider: string;
  readonly model: string;
  readonly temperature: number | undefined;
  readonly maxTokens: number | undefined;
  readonly limits: BatchLimits;
  readonly pollInterval: number;
  readonly #definition: ProviderDefinition;
  readonly #service: BatchService;
  readonly #connection: BatchConnection;
  readonly #endpoint: string;

  constructor(id: string, options: BatchClientOptions = {}) {
    // The LM checks the id and the key as it does for live calls, and registers the key as a secret.
    const lm = new LM(id, { apiKey: options.apiKey, baseURL: options.baseURL });
    const definition = PROVIDERS[lm.provider]!;
    if (definition.batch === undefined) {
      throw new ConfigurationError(lm.provider === "ollama"
        ? `LM "${lm.id}": Ollama has no batch service; run without batch. To serve many requests at once, ` +
          "point several Ollama servers at a load balancer and set OLLAMA_HOST (or the LM's baseURL) to it."
        : `LM "${lm.id}": ${lm.provider} has no batch service; run without batch.`);
    }
    this.provider = lm.provider;
    this.model = lm.model;
    this.temperature = options.temperature;
    this.maxTokens = options.maxTokens;
    this.pollInterval = positive("pollInterval", options.pollInterval ?? DEFAULT_POLL_INTERVAL_S);
    const maxRequests = options.maxRequestsPerBatch === undefined ? definition.batch.limits.maxRequests
      : Math.min(definition.batch.limits.maxRequests, positiveInteger("maxRequestsPerBatch", options.maxRequestsPerBatch));
    this.limits = { maxRequests, maxBytes: definition.batch.limits.maxBytes };
    this.#definition = definition;
    this.#service = definition.batch;
    const baseURL = definition.resolveBaseURL(options.baseURL);
    this.#endpoint = shownUrl(baseURL);
    const apiKey = options.apiKey ?? (definition.apiKeyEnv ? process.env[definition.apiKeyEnv] : undefined);
    this.#connection = definition.batch.connect({ apiKey: apiKey || undefined, baseURL, call: this.#call });
  }

  /**
   * Sends `requests` as one batch, or several when they pass the limits, in order. `onSubmitted`
   * hears of each batch as soon as the provider has accepted it, before the next is uploaded, so the
   * caller can write its id down: if a later upload fails, the batches already running are known.
   */
  async submit(
    requests: Iterable<BatchRequest>,
    options: { onSubmitted?: (batch: SubmittedBatch) => void | Promise<void> } = {},
  ): Promise<SubmittedBatch[]> {
    const splitter = new BatchSplitter(this.limits);
    const seen = new Set<string>();
    const submitted: SubmittedBatch[] = [];
    let writer: BatchWriter | undefined;
    let customIds: string[] = [];
    let bytes = 0;
    const send = async (): Promise<void> => {
      if (writer === undefined) return;
      const open = writer;
      try {
        const batch = { id: await open.submit(), customIds };
        submitted.push(batch);
        Instrumentation.emit("lm.batch.submitted", { provider: this.provider, model: this.model, batchId: batch.id, requests: customIds.length, bytes });
        await options.onSubmitted?.(batch);
      } finally {
        writer = undefined;
        customIds = [];
        bytes = 0;
        await open.close();
      }
    };
    try {
      for (const { customId, request } of requests) {
        checkCustomId(customId, seen);
        // Media the provider cannot take is refused before anything is uploaded (as a live call is).
        if (request.messages.some((m) => m.media !== undefined && m.media.length > 0)) (await import("./media-check.js")).checkRequestMedia(this.provider, this.model, request.messages);
        const { line, text, bytes: size } = this.line({ customId, request });
        if (size > this.limits.maxBytes) {
          throw new ValidationError(
            `Batch request "${customId}": ${size} bytes as a batch line; expected at most ${this.limits.maxBytes} bytes, the ${this.provider} batch limit`,
            { field: "request" },
          );
        }
        if (splitter.add(size)) await send();
        writer ??= this.#connection.open();
        customIds.push(customId);
        bytes += size;
        await writer.add(line, text);
      }
      await send();
    } finally {
      await (writer as BatchWriter | undefined)?.close();
    }
    return submitted;
  }

  /**
   * The batch line `request` becomes: the provider's line object around exactly the body the live
   * call would send, its JSON text, and its size in bytes with the newline (what the limits count).
   */
  line({ customId, request }: BatchRequest): { line: object; text: string; bytes: number } {
    const line = this.#service.line(customId, this.#definition.requestBody(request, this.#settings(request)));
    const text = JSON.stringify(line);
    return { line, text, bytes: Buffer.byteLength(text) + 1 };
  }

  /** The batch's state now, with its counts (one status request). */
  async poll(batchId: string): Promise<BatchStatus> {
    return this.#connection.status(batchId);
  }

  /**
   * Polls until the batch has ended, waiting `pollInterval` seconds at first and twice as long each
   * time after, up to a minute; `onPoll` (and the `lm.batch.poll` event) hears each status, for
   * progress displays, and `onPoll` hears the last one again each minute of a longer wait. Resolves
   * with the final status when results can be read: completed, or expired with some requests
   * answered (the rest are marked `expired` in `results`). Throws an `LMError` with the provider's
   * reason when the batch failed (its input was refused), was cancelled, or expired before
   * answering anything (`batchEnded(error)` is then true); with the batch and its status when it
   * has not ended after `maxWait` seconds, or reports a status the provider does not document.
   */
  async wait(
    batchId: string, options: { signal?: AbortSignal; onPoll?: (status: BatchStatus) => void; maxWait?: number } = {},
  ): Promise<BatchStatus> {
    const maxWait = options.maxWait === undefined ? undefined : positive("maxWait", options.maxWait);
    const deadline = maxWait === undefined ? Infinity : Date.now() + maxWait * 1000;
    const timers = options.signal === undefined ? undefined : { signal: options.signal };
    let delay = this.pollInterval;
    for (;;) {
      const status = await this.poll(batchId);
      Instrumentation.emit("lm.batch.poll", { provider: this.provider, model: this.model, batchId, status: status.status, ...status.counts });
      options.onPoll?.(status);
      if (ENDED.has(status.status)) {
        if (status.status === "completed" || (status.status === "expired" && status.counts.completed > 0)) return status;
        const error = new LMError(
          `${this.provider} batch ${batchId} for model "${this.model}" ended ${status.status}` +
            `${status.reason === undefined ? "" : `: ${redactError(status.reason)}`}; expected a completed batch`,
          { provider: this.provider, retryable: status.status === "expired" },
        );
        markBatchEnded(error);
        throw error;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new LMError(
          `${this.provider} batch ${batchId} for model "${this.model}" has not ended after ${waited(maxWait!)} (maxWait ${maxWait} s): ` +
            `status ${status.status}, ${status.counts.completed} of ${status.counts.total} requests answered. It is still at the provider: ` +
            "resume the run to wait for it again (nothing is paid twice), or cancel it there",
          { provider: this.provider, retryable: false },
        );
      }
      // Waits longer than a minute are told again each minute, so a log shows the wait goes on.
      const steps = sleepSteps(Math.min(delay * 1000, left));
      for (const [i, ms] of steps.entries()) {
        await sleep(ms, undefined, timers);
        if (i < steps.length - 1) options.onPoll?.(status);
      }
      delay = nextPollDelay(delay, this.pollInterval);
    }
  }

  /**
   * The outcome of each of `requests` in an ended batch, by custom id, read as a stream. A reply is
   * read exactly as the live call reads one (an Anthropic reply without the forced tool call is a
   * failure, as it is live). A request the batch has no result for is a failure too, and so is one
   * whose result line could not be read (the error names the line; the other lines are kept) or
   * that has two different results in the batch (neither is used).
   */
  async results(batchId: string, requests: Iterable<BatchRequest>): Promise<Map<string, BatchResult>> {
    const status = await this.poll(batchId);
    if (!ENDED.has(status.status)) {
      throw new LMError(
        `${this.provider} batch ${batchId} has not ended (status ${status.status}); its results can be read once wait(batchId) returns`,
        { provider: this.provider, retryable: true },
      );
    }
    const asked = new Map<string, LMRequest>();
    for (const { customId, request } of requests) asked.set(customId, request);
    const out = new Map<string, BatchResult>();
    // Each asked request's distinct results, as text: a download read again repeats lines unchanged,
    // while two different results for one request leave nothing to trust.
    const seen = new Map<string, Set<string>>();
    const broken = new Map<string, UnreadableResultLine>();
    const unattributed = new Map<string, UnreadableResultLine>();
    await this.#connection.results(batchId, (raw) => {
      const request = asked.get(raw.customId);
      if (request === undefined) return;
      const texts = seen.get(raw.customId) ?? new Set<string>();
      seen.set(raw.customId, texts.add(JSON.stringify(raw)));
      if (texts.size === 1) out.set(raw.customId, this.#result(raw, request));
    }, (line) => {
      if (line.customId !== undefined && asked.has(line.customId)) {
        if (!broken.has(line.customId)) broken.set(line.customId, line);
      } else if (line.customId === undefined) {
        unattributed.set(`${line.file}:${line.line}`, line);
      }
    });
    for (const [customId, texts] of seen) {
      if (texts.size > 1) out.set(customId, { ok: false, error: `batch ${batchId} returned ${texts.size} different results for this request (custom_id "${customId}"); none is used` });
    }
    for (const [customId, line] of broken) {
      out.set(customId, { ok: false, error: redactError(`line ${line.line} of batch ${batchId}'s ${line.file} could not be read: ${line.reason}`) });
    }
    const unread = [...unattributed.values()];
    const why = unread.length === 0 ? ""
      : `; ${unread.length === 1 ? "line" : "lines"} ${unread.map((u) => `${u.line} of its ${u.file}`).join(", ")} could not be read (${redactError(unread[0]!.reason)})`;
    for (const customId of asked.keys()) {
      if (out.has(customId)) continue;
      out.set(customId, {
        ok: false, error: `no result for this request in batch ${batchId} (status ${status.status})${why}`,
        ...(status.status === "expired" ? { expired: true } : {}),
      });
    }
    return out;
  }

  #result(raw: RawBatchResult, request: LMRequest): BatchResult {
    if (!raw.ok) {
      const { ok: _ok, customId: _id, error, ...rest } = raw;
      return { ok: false, error: redactError(error), ...rest };
    }
    try {
      return { ok: true, reply: this.#service.reply(raw.body, request, this.#settings(request)) };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, error: redactError(`unreadable reply: ${message}`) };
    }
  }

  /** The settings the live call would use: the request's own, else the client's. */
  #settings(request: LMRequest): CallSettings {
    return {
      model: this.model,
      temperature: request.temperature ?? this.temperature,
      maxTokens: request.maxTokens ?? this.maxTokens,
      timeoutMs: currentPolicy().httpTimeout * 1000,
    };
  }

  /** Each provider call under the LM's retry policy; an error names what was being done. */
  readonly #call: BatchCall = async (what, attempt, options = {}) => {
    const policy = currentPolicy();
    const inForce = options.bulk ? { ...policy, httpTimeout: Math.max(policy.httpTimeout, BULK_TIMEOUT_S) } : policy;
    try {
      return await withRetry({ provider: this.provider, model: this.model, endpoint: this.#endpoint }, inForce, attempt);
    } catch (error) {
      if (!(error instanceof LMError)) throw error;
      throw new LMError(`${this.provider} ${what}: ${error.message}`, {
        status: error.status, retryable: error.retryable, provider: error.provider, attempts: error.attempts, cause: error,
      });
    }
  };
}

function checkCustomId(customId: unknown, seen: Set<string>): asserts customId is string {
  if (typeof customId !== "string" || !CUSTOM_ID.test(customId)) {
    throw new ValidationError(
      `Batch request customId ${JSON.stringify(redactError(String(customId)))}: expected 1 to 64 characters from a-z, A-Z, 0-9, "_" and "-"`,
      { field: "customId" },
    );
  }
  if (seen.has(customId)) {
    throw new ValidationError(`Batch request customId "${customId}" appears twice; expected each request's id to be unique`, { field: "customId" });
  }
  seen.add(customId);
}

function positive(field: string, value: number): number {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
  throw new ValidationError(`Batch option ${field}: expected a positive number of seconds, received ${String(value)}`, { field });
}

function positiveInteger(field: string, value: number): number {
  if (Number.isInteger(value) && value > 0) return value;
  throw new ValidationError(`Batch option ${field}: expected a positive integer, received ${String(value)}`, { field });
}
