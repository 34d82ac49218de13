import type OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { Instrumentation } from "../../instrument/bus.js";
import { loadOptional } from "../../optional.js";
import { strictSchemaProblem, toStrictSchema } from "../strict-schema.js";
import type { LMRequest } from "../types.js";
import { openaiUsage } from "../usage.js";
import { PROVIDER_INFO } from "./info.js";
import { openaiContent } from "./media-content.js";
import { openaiStream } from "./openai-stream.js";
import { OPENAI_BATCH_LIMITS, openaiBatches, openaiBatchLine } from "./openai-batch.js";
import { addOpenAITools, openaiToolCalls } from "./tools-openai.js";
import { schemaName, withoutMeta, type CallSettings, type Provider, type ProviderDefinition, type ProviderReply } from "./provider.js";

/** OpenAI chat completions (and OpenAI-compatible servers through `baseURL`). */
export const openaiProvider: ProviderDefinition = {
  ...PROVIDER_INFO["openai"]!,
  requestBody: (request, settings) => openaiBody(request, settings),
  batch: {
    limits: OPENAI_BATCH_LIMITS,
    line: openaiBatchLine,
    reply: (resultBody) => openaiReply(resultBody as OpenAI.Chat.Completions.ChatCompletion),
    connect: ({ apiKey, baseURL, call }) => openaiBatches(lazyClient(apiKey, baseURL), call),
  },
  create({ apiKey, baseURL }): Provider {
    const getClient = lazyClient(apiKey, baseURL);
    return {
      async ready() {
        await getClient();
      },
      async complete(request, settings, signal, onDelta) {
        const openai = await getClient();
        if (onDelta !== undefined) return openaiStream(openai, openaiBody(request, settings), signal, settings.timeoutMs, onDelta);
        const completion = await openai.chat.completions.create(openaiBody(request, settings), {
          signal, timeout: settings.timeoutMs, maxRetries: 0,
        });
        return openaiReply(completion);
      },
    };
  },
};

/** The SDK client, loaded and built on first use (tried again on the next call when loading failed). */
function lazyClient(apiKey: string | undefined, baseURL: string): () => Promise<OpenAI> {
  let client: Promise<OpenAI> | undefined;
  return () =>
    (client ??= loadOptional<typeof import("openai")>("openai", "The openai provider").then(
      // Retries off: the LM's own policy counts attempts once. Logging off: library code never prints.
      ({ default: OpenAIClient }) => new OpenAIClient({ apiKey, baseURL, maxRetries: 0, logLevel: "off" }),
      (error: unknown) => {
        client = undefined;
        throw error;
      },
    ));
}

export function openaiBody(request: LMRequest, settings: CallSettings): ChatCompletionCreateParamsNonStreaming {
  const body: ChatCompletionCreateParamsNonStreaming = {
    model: settings.model,
    // A message with media: its text, then the provider's image/audio/file parts (media-content.ts).
    messages: request.messages.map((m) => (m.media?.length ? { role: m.role, content: openaiContent(m.content, m.media) } : { role: m.role, content: m.content })) as ChatCompletionCreateParamsNonStreaming["messages"],
  };
  if (settings.temperature !== undefined) body.temperature = settings.temperature;
  // `max_tokens` is deprecated and rejected by reasoning models; `max_completion_tokens` works for all.
  if (settings.maxTokens !== undefined) body.max_completion_tokens = settings.maxTokens;
  if (settings.reasoning !== undefined && "effort" in settings.reasoning) body.reasoning_effort = settings.reasoning.effort;
  if (request.responseSchema !== undefined) body.response_format = responseFormat(request.responseSchema, settings.model);
  addOpenAITools(body, request);
  return body;
}

type JsonSchemaFormat = Extract<ChatCompletionCreateParamsNonStreaming["response_format"], { type: "json_schema" }>;

/**
 * Strict `json_schema` when strict mode can express the schema. Otherwise (a record, an open object)
 * the provider would reject the request, and forcing `additionalProperties: false` would change
 * what the model may return, so the original schema goes as a non-strict guide: the reply is still
 * validated against the signature after it arrives.
 */
function responseFormat(responseSchema: NonNullable<LMRequest["responseSchema"]>, model: string): JsonSchemaFormat {
  const name = schemaName(responseSchema.name);
  const strict = toStrictSchema(responseSchema.schema);
  const problem = strictSchemaProblem(strict);
  if (problem === undefined) return { type: "json_schema", json_schema: { name, strict: true, schema: strict } };
  Instrumentation.emit("lm.structured.fallback", { provider: "openai", model, schema: name, strict: false, reason: problem });
  return { type: "json_schema", json_schema: { name, strict: false, schema: withoutMeta(responseSchema.schema) } };
}

export function openaiReply(completion: OpenAI.Chat.Completions.ChatCompletion): ProviderReply {
  const choice = completion.choices[0];
  const message = choice?.message;
  // A refusal has no content; keep its text so the OutputError that follows shows why.
  const content = message?.content ?? message?.refusal ?? "";
  return {
    content,
    usage: openaiUsage(completion.usage),
    finishReason: message?.refusal ? "refusal" : choice?.finish_reason ?? undefined,
    toolCalls: openaiToolCalls(message),
  };
}
