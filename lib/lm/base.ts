import { Instrumentation, inSpan } from "../instrument/bus.js";
import { throwIfAborted } from "./stream-text.js";
import { recordUsage } from "./usage-scope.js";
import type { ChatOptions, DataFormat, LanguageModel, LMRequest, LMResponse, SchemaFormat } from "./types.js";

export interface BaseLMOptions {
  schemaFormat?: SchemaFormat;
  dataFormat?: DataFormat;
  structuredOutputs?: boolean;
  temperature?: number;
  maxTokens?: number;
}

/**
 * Shared behaviour of every language model: the `lm.chat.*` and `lm.tokens.used` events around
 * each call. Subclasses implement `complete`, which does the actual work (provider call or script).
 */
export abstract class BaseLM implements LanguageModel {
  abstract readonly provider: string;
  abstract readonly model: string;
  schemaFormat: SchemaFormat;
  dataFormat: DataFormat;
  structuredOutputs: boolean;
  temperature: number | undefined;
  maxTokens: number | undefined;

  constructor(options: BaseLMOptions = {}) {
    this.schemaFormat = options.schemaFormat ?? "json";
    this.dataFormat = options.dataFormat ?? "json";
    this.structuredOutputs = options.structuredOutputs ?? false;
    this.temperature = options.temperature;
    this.maxTokens = options.maxTokens;
  }

  get id(): string {
    return `${this.provider}/${this.model}`;
  }

  abstract supportsStructuredOutputs(): boolean;
  /**
   * Does the actual work of one call (a provider request, a script): subclasses implement it; `chat`
   * wraps it. A subclass that streams hands text to `options.onDelta` as it arrives; one that does
   * not may ignore it, and `chat` hands the whole reply over once.
   */
  protected abstract complete(request: LMRequest, options?: ChatOptions): Promise<LMResponse>;

  /**
   * Sends one request, in a span of its own, between `lm.chat.start` and `lm.chat.end` events, and emits
   * `lm.tokens.used` with the reply's usage and estimated cost; streams through `options.onDelta` when
   * given, and then sets `firstTokenMs` (from the call's start to the first chunk) on the response and
   * on `lm.chat.end` (each provider attempt's own time to first token is on its `lm.request.end`).
   */
  chat(request: LMRequest, options?: ChatOptions): Promise<LMResponse> {
    return inSpan(() => this.chatInSpan(request, options));
  }

  private async chatInSpan(request: LMRequest, options: ChatOptions | undefined): Promise<LMResponse> {
    const { provider, model } = this;
    const started = performance.now();
    Instrumentation.emit("lm.chat.start", {
      provider, model, messageCount: request.messages.length, structured: request.responseSchema !== undefined,
      temperature: request.temperature ?? this.temperature, maxTokens: request.maxTokens ?? this.maxTokens, messages: request.messages,
      ...(request.rolloutId === undefined ? {} : { rolloutId: request.rolloutId }),
    });
    let response: LMResponse;
    // Streamed calls: from the call's start to the first text chunk handed out (retries and waits included).
    let firstTokenMs: number | undefined;
    try {
      throwIfAborted(options?.signal);
      if (options?.onDelta === undefined) {
        response = await this.complete(request, options);
      } else {
        const onDelta = options.onDelta;
        const first = (): void => { firstTokenMs ??= performance.now() - started; };
        response = await this.complete(request, { ...options, onDelta: (text) => { first(); onDelta(text); } });
        // A model that does not stream: the whole reply at once.
        if (firstTokenMs === undefined && response.content !== "") {
          first();
          onDelta(response.content);
        }
        if (firstTokenMs !== undefined) response = { ...response, firstTokenMs: response.firstTokenMs ?? firstTokenMs };
      }
    } catch (error) {
      Instrumentation.emit("lm.chat.end", {
        provider, model, ok: false, durationMs: performance.now() - started,
        error: error instanceof Error ? error.message : String(error),
        ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
      });
      throw error;
    }
    const durationMs = performance.now() - started;
    recordUsage(response, { messages: request.messages, latencyMs: durationMs });
    Instrumentation.emit("lm.chat.end", {
      provider, model, ok: true, durationMs, cached: response.cached,
      inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens,
      estimatedCost: response.estimatedCost, finishReason: response.finishReason, responseModel: response.model,
      content: response.content, ...(response.firstTokenMs === undefined ? {} : { firstTokenMs: response.firstTokenMs }),
    });
    Instrumentation.emit("lm.tokens.used", {
      inputTokens: response.usage.inputTokens,
      outputTokens: response.usage.outputTokens,
      reasoningTokens: response.usage.reasoningTokens ?? 0,
      cacheReadTokens: response.usage.cacheReadTokens ?? 0,
      cacheWriteTokens: response.usage.cacheWriteTokens ?? 0,
      estimatedCost: response.estimatedCost,
      provider, model, cached: response.cached,
    });
    return response;
  }

  /** The model's id and prompt settings (schema format, data format, structured outputs) as JSON; never a key. */
  toJSON(): Record<string, unknown> {
    return { id: this.id, schemaFormat: this.schemaFormat, dataFormat: this.dataFormat, structuredOutputs: this.structuredOutputs };
  }
}
