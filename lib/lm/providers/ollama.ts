import type { ChatRequest, ChatResponse } from "ollama";
import { tokenUsage } from "../usage.js";
import { loadOptional } from "../../optional.js";
import { PROVIDER_INFO } from "./info.js";
import { ollamaImages } from "./media-content.js";
import type { LMRequest } from "../types.js";
import { ollamaStream } from "./ollama-stream.js";
import { addOllamaTools, ollamaToolCalls } from "./tools-ollama.js";
import { withoutMeta, type CallSettings, type Provider, type ProviderDefinition, type ProviderReply } from "./provider.js";

export { OLLAMA_DEFAULT_HOST } from "./info.js";

/** A local Ollama server. Structured output is its `format` parameter with the JSON Schema. */
export const ollamaProvider: ProviderDefinition = {
  ...PROVIDER_INFO["ollama"]!,
  requestBody: (request, settings) => ollamaBody(request, settings),
  // Ollama has no batch service: many requests at once go to several servers behind a load balancer.
  batch: undefined,
  create({ apiKey, baseURL: host }): Provider {
    // Only hosted Ollama wants a key; a local server gets no Authorization header.
    const headers: Record<string, string> | undefined = apiKey ? { Authorization: `Bearer ${apiKey}` } : undefined;
    let sdk: Promise<typeof import("ollama")> | undefined;
    // Loaded on first use; a failed load is tried again on the next call.
    const load = (): Promise<typeof import("ollama")> =>
      (sdk ??= loadOptional<typeof import("ollama")>("ollama", "The ollama provider").catch((error: unknown) => {
        sdk = undefined;
        throw error;
      }));
    return {
      async ready() {
        await load();
      },
      async complete(request, settings, signal, onDelta) {
        const { Ollama } = await load();
        // The Ollama SDK has no timeout and cannot abort a non-streamed call, so each attempt gets a
        // (cheap) client whose fetch carries this attempt's signal (with the SDK's own, which a
        // stream's `abort()` uses); it also keeps the response headers so a 429's retry-after
        // reaches the retry policy.
        let lastHeaders: Headers | undefined;
        const client = new Ollama({
          host,
          ...(headers ? { headers } : {}),
          fetch: async (input, init) => {
            const response = await fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
            lastHeaders = response.headers;
            return response;
          },
        });
        try {
          if (onDelta !== undefined) return await ollamaStream(client, ollamaBody(request, settings), signal, onDelta);
          const reply = await client.chat({ ...ollamaBody(request, settings), stream: false });
          return ollamaReply(reply);
        } catch (error) {
          if (typeof error === "object" && error !== null && "status_code" in error && lastHeaders !== undefined) {
            Object.assign(error, { headers: lastHeaders });
          }
          throw error;
        }
      },
    };
  },
};

export function ollamaBody(request: LMRequest, settings: CallSettings): ChatRequest {
  const body: ChatRequest = {
    model: settings.model,
    // A message with media: its images as base64 (media-content.ts); Ollama takes no other kind.
    messages: request.messages.map((m) => (m.media?.length ? { role: m.role, content: m.content, images: ollamaImages(m.media) } : { role: m.role, content: m.content })),
  };
  const options: NonNullable<ChatRequest["options"]> = {};
  if (settings.temperature !== undefined) options.temperature = settings.temperature;
  if (settings.maxTokens !== undefined) options.num_predict = settings.maxTokens;
  if (Object.keys(options).length > 0) body.options = options;
  // `think`: an effort level as Ollama takes it (models such as gpt-oss), a budget as thinking on.
  if (settings.reasoning !== undefined) body.think = "effort" in settings.reasoning ? settings.reasoning.effort : true;
  if (request.responseSchema !== undefined) body.format = withoutMeta(request.responseSchema.schema);
  addOllamaTools(body, request);
  return body;
}

function ollamaReply(reply: ChatResponse): ProviderReply {
  return {
    content: reply.message?.content ?? "",
    usage: tokenUsage(reply.prompt_eval_count ?? 0, reply.eval_count ?? 0),
    finishReason: reply.done_reason || undefined,
    toolCalls: ollamaToolCalls(reply.message?.tool_calls),
  };
}
