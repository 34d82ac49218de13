import type { ProviderInfo } from "./info.js";
import type { LMRequest, ReasoningOption, TokenUsage } from "../types.js";
import type { ToolCall } from "../tool-calls.js";

/** The settings of one call, after per-call overrides and defaults are applied. */
export interface CallSettings {
  model: string;
  temperature: number | undefined;
  maxTokens: number | undefined;
  /** The LM's reasoning setting, checked when the LM was built (absent: the provider's default). */
  reasoning?: ReasoningOption | undefined;
  /** Mark the static prefix of the prompt as cacheable where the provider needs it (Anthropic). */
  promptCache?: boolean | undefined;
  /** Time allowed for this attempt, in ms (the signal aborts when it runs out). */
  timeoutMs: number;
}

/** What a provider answered, before the LM adds cost, cache and event bookkeeping. */
export interface ProviderReply {
  content: string;
  usage: TokenUsage;
  finishReason: string | undefined;
  /** Native tool calling: the calls the reply asked for. */
  toolCalls?: ToolCall[] | undefined;
}

/**
 * One provider behind its official SDK. `complete` makes exactly one HTTP request (the SDK's own
 * retries are off) and lets SDK errors propagate: the LM's retry policy classifies them.
 * With `onDelta` the request streams (the SDK's own streaming): each piece of reply text goes to
 * `onDelta` as it arrives, and what `onDelta` throws aborts the request at once and is thrown. When
 * `signal` aborts, the request is aborted and `complete` rejects (never resolves with part of a reply).
 */
export interface Provider {
  /** Loads the SDK and builds the client; called before the first attempt's timer starts. */
  ready(): Promise<void>;
  complete(request: LMRequest, settings: CallSettings, signal: AbortSignal, onDelta?: (text: string) => void): Promise<ProviderReply>;
}

/** How the LM finds, configures and builds a provider. Adding a provider means one file and one line in `index.ts`. */
export interface ProviderDefinition extends ProviderInfo {
  /**
   * The body the live call sends for `request`, built without the SDK or the network. A batch line
   * carries exactly this body, so a request asks the same either way.
   */
  requestBody(request: LMRequest, settings: CallSettings): object;
  /** The provider's batch service; undefined when it has none (Ollama). */
  batch: BatchService | undefined;
  /** Builds the provider; the SDK itself is loaded lazily on the first `complete`. */
  create(config: { apiKey: string | undefined; baseURL: string }): Provider;
}

/** The documented size limits of one batch. */
export interface BatchLimits {
  maxRequests: number;
  /** Bytes of the batch's input: the uploaded JSONL file (OpenAI) or the request body (Anthropic). */
  maxBytes: number;
}

/** Where a batch is: the provider's states in one vocabulary. */
export type BatchState = "validating" | "in_progress" | "completed" | "failed" | "expired" | "cancelled";

export interface BatchStatus {
  id: string;
  status: BatchState;
  /** Requests in the batch, those answered, and those that errored, expired or were cancelled. */
  counts: { total: number; completed: number; failed: number };
  /** Why the batch failed, expired or was cancelled, in the provider's words when it gave some. */
  reason?: string;
}

/** One request's outcome as the batch service reports it, before the reply body is read. */
export type RawBatchResult =
  | { customId: string; ok: true; body: unknown }
  | { customId: string; ok: false; error: string; expired?: boolean; status?: number };

/** A line of a batch's results that could not be read: where it is, why, and whose it is when that shows. */
export interface UnreadableResultLine {
  /** Which results it is in ("output file", "error file", "results"). */
  file: string;
  /** 1-based line number in that file. */
  line: number;
  reason: string;
  /** The custom id, when the line's start still names it. */
  customId?: string;
}

/**
 * Runs one provider call (an upload, a batch creation, a status or results request) under the
 * LM's retry policy; `attempt` receives the attempt's signal and time limit. `bulk` marks a call
 * that moves a whole batch's input or results, which gets more time than a chat reply.
 */
export type BatchCall = <T>(
  what: string,
  attempt: (signal: AbortSignal, timeoutMs: number) => Promise<T>,
  options?: { bulk?: boolean },
) => Promise<T>;

/** The input of one batch, written line by line as the batch client builds it. */
export interface BatchWriter {
  /** Adds one line: the object, and its JSON text (which the split limits were counted on). */
  add(line: object, text: string): Promise<void>;
  /** Sends what was added as one batch and returns the batch's id. */
  submit(): Promise<string>;
  /** Frees what the writer holds (a temporary file); called whether or not `submit` ran. */
  close(): Promise<void>;
}

/** A provider's batch service behind its official SDK. */
export interface BatchConnection {
  open(): BatchWriter;
  status(batchId: string): Promise<BatchStatus>;
  /**
   * Reads every request's outcome of a batch that has ended, as a stream, handing each to `each`.
   * A download cut short is read again from the start, so `each` may see a custom id twice. A line
   * that is not a readable result goes to `unreadable` and the reading goes on.
   */
  results(batchId: string, each: (result: RawBatchResult) => void, unreadable: (line: UnreadableResultLine) => void): Promise<void>;
}

/** What a provider's batch service needs from typelm: the line format, the reply reader and the SDK side. */
export interface BatchService {
  limits: BatchLimits;
  /** The batch line of one request, carrying `body` (from `requestBody`) unchanged. */
  line(customId: string, body: object): object;
  /** A succeeded request's result body read exactly as the live call reads its reply. */
  reply(resultBody: unknown, request: LMRequest, settings: CallSettings): ProviderReply;
  /** Builds the SDK side; every provider call it makes goes through `call`. */
  connect(config: { apiKey: string | undefined; baseURL: string; call: BatchCall }): BatchConnection;
}

/** A name the providers accept for a schema/tool: `^[a-zA-Z0-9_-]{1,64}$`. */
export function schemaName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return cleaned.length > 0 ? cleaned : "response";
}

/** The schema without its `$schema` marker, which tool and format parameters do not want. */
export function withoutMeta(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}
