import type { ChatOptions, LMRequest, LMResponse } from "../../lib/lm/types.js";
import { ScriptedLM, type ScriptedLMOptions, type ScriptedReplies } from "../../lib/testing/index.js";

/** What one streamed call of a `ChunkedLM` did. */
export interface ChunkedCall {
  total: number;
  /** Chunks handed to onDelta without it throwing. */
  sent: number;
  /** What onDelta threw (the request then stops), if it did. */
  threw: unknown;
  /** True when the call saw its signal aborted before its last chunk. */
  aborted: boolean;
  /** Settles when the call has stopped (its last chunk sent, or stopped early). */
  ended: Promise<void>;
}

/**
 * A ScriptedLM that streams: it hands each reply to onDelta in chunks of `chunkSize` characters,
 * yielding to the event loop (setImmediate) between chunks, so a consumer sees each event before
 * the next chunk is sent. It stops at once when onDelta throws or the signal aborts, as a provider does.
 */
export class ChunkedLM extends ScriptedLM {
  readonly calls: ChunkedCall[] = [];
  private readonly chunkSize: number;
  /** Called after each chunk was handed over (tests abort from here). */
  afterChunk: ((call: ChunkedCall) => void) | undefined;

  constructor(replies: ScriptedReplies, options: ScriptedLMOptions & { chunkSize?: number } = {}) {
    super(replies, options);
    this.chunkSize = options.chunkSize ?? 4;
  }

  /** The call in progress or last made. */
  get last(): ChunkedCall {
    return this.calls[this.calls.length - 1]!;
  }

  protected override async complete(request: LMRequest, options?: ChatOptions): Promise<LMResponse> {
    const response = await super.complete(request);
    const onDelta = options?.onDelta;
    if (onDelta === undefined) return response;
    const text = response.content;
    let ended!: () => void;
    const call: ChunkedCall = {
      total: Math.ceil(text.length / this.chunkSize), sent: 0, threw: undefined, aborted: false, ended: new Promise<void>((r) => (ended = r)),
    };
    this.calls.push(call);
    try {
      return await this.send(text, call, response, options!);
    } finally {
      ended();
    }
  }

  private async send(text: string, call: ChunkedCall, response: LMResponse, options: ChatOptions): Promise<LMResponse> {
    const onDelta = options.onDelta!;
    for (let at = 0; at < text.length; at += this.chunkSize) {
      if (options?.signal?.aborted) {
        call.aborted = true;
        throw options.signal.reason;
      }
      try {
        onDelta(text.slice(at, at + this.chunkSize));
      } catch (error) {
        call.threw = error;
        throw error;
      }
      call.sent++;
      this.afterChunk?.(call);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return response;
  }
}
