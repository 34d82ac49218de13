import { TypelmError } from "../errors.js";
import { BaseLM } from "../lm/base.js";
import { replayText, type ChunkPacing } from "../lm/stream-text.js";
import type { ChatMessage, ChatOptions, DataFormat, LMRequest, LMResponse, SchemaFormat } from "../lm/types.js";
import type { SignatureClass } from "../signature/signature.js";
import { estimatedResponse, writeReply } from "./reply.js";

/** What a scripted reply function receives. */
export interface ScriptedRequest {
  messages: ChatMessage[];
  signature: SignatureClass | undefined;
  inputs: Record<string, unknown> | undefined;
  /** Set when the predictor asked for native structured output. */
  responseSchema: LMRequest["responseSchema"];
  /** The temperature in force: the call's `temperature` option, else the LM's own; undefined when neither is set. */
  temperature: number | undefined;
  /** The call's `rolloutId` option; undefined when not given. */
  rolloutId: string | number | undefined;
}

/** A string is the model's raw text; an object is written as a well-formed reply in the prompt's data format. */
export type ScriptedReply = string | Record<string, unknown>;
/** The script: replies used one per call in order, or a function that answers each request. */
export type ScriptedReplies = ScriptedReply[] | ((request: ScriptedRequest) => ScriptedReply | Promise<ScriptedReply>);

/** Options of `new ScriptedLM(replies, options)`: prompt formats, temperature, model name and latency. */
export interface ScriptedLMOptions {
  schemaFormat?: SchemaFormat;
  dataFormat?: DataFormat;
  structuredOutputs?: boolean;
  /** The LM's own temperature: what `ScriptedRequest.temperature` shows when a call sets none. */
  temperature?: number;
  /** The model name reported in events and results (default "scripted"). */
  model?: string;
  /** Artificial latency per call, in milliseconds. */
  latencyMs?: number;
  /**
   * How a streamed call (`chat(request, { onDelta })`) hands out the reply: characters per chunk
   * (default 8) and milliseconds between chunks (default 0).
   */
  stream?: ChunkPacing;
}

/** A language model that answers from a script: for tests, notebooks and benchmarks. */
export class ScriptedLM extends BaseLM {
  readonly provider = "scripted";
  readonly model: string;
  /** Every request received, in order. */
  readonly requests: ScriptedRequest[] = [];
  private readonly replies: ScriptedReplies;
  private next = 0;
  private readonly latencyMs: number;
  private readonly pacing: ChunkPacing;

  constructor(replies: ScriptedReplies, options: ScriptedLMOptions = {}) {
    super(options);
    this.replies = replies;
    this.model = options.model ?? "scripted";
    this.latencyMs = options.latencyMs ?? 0;
    this.pacing = { chunkChars: 8, ...options.stream };
  }

  supportsStructuredOutputs(): boolean {
    return this.structuredOutputs;
  }

  /** How many scripted replies are left (Infinity for a reply function). */
  get remaining(): number {
    return Array.isArray(this.replies) ? this.replies.length - this.next : Infinity;
  }

  /** Records the request and answers with the next scripted reply (an error when the list has run out), with usage estimated at four characters a token. */
  protected async complete(request: LMRequest, options: ChatOptions = {}): Promise<LMResponse> {
    const req: ScriptedRequest = {
      messages: request.messages,
      signature: request.signature,
      inputs: request.inputs,
      responseSchema: request.responseSchema,
      temperature: request.temperature ?? this.temperature,
      rolloutId: request.rolloutId,
    };
    this.requests.push(req);
    let reply: ScriptedReply;
    if (Array.isArray(this.replies)) {
      if (this.next >= this.replies.length) {
        throw new TypelmError(
          `ScriptedLM ran out of replies: ${this.replies.length} scripted, call ${this.next + 1} asked for one more`,
        );
      }
      reply = this.replies[this.next++]!;
    } else {
      reply = await this.replies(req);
    }
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    const content = typeof reply === "string" ? reply : writeReply(reply, request.responseSchema !== undefined, this.dataFormat);
    if (options.onDelta !== undefined) await replayText(content, options.onDelta, this.pacing, options.signal);
    return estimatedResponse(request.messages, content, this.provider, this.model);
  }
}
