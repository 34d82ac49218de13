import type Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming, Message } from "@anthropic-ai/sdk/resources/messages/messages";
import { ConfigurationError, OutputError } from "../../errors.js";
import { thinkingBudget } from "../reasoning.js";
import { loadOptional } from "../../optional.js";
import type { LMRequest } from "../types.js";
import { anthropicUsage } from "../usage.js";
import { PROVIDER_INFO } from "./info.js";
import { anthropicContent } from "./media-content.js";
import { anthropicStream } from "./anthropic-stream.js";
import { ANTHROPIC_BATCH_LIMITS, anthropicBatches, anthropicBatchLine } from "./anthropic-batch.js";
import { addAnthropicTools, anthropicToolCalls } from "./tools-anthropic.js";
import { schemaName, withoutMeta, type CallSettings, type Provider, type ProviderDefinition, type ProviderReply } from "./provider.js";

/** The Messages API requires `max_tokens`; this is used when neither the LM nor the call sets one. */
const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * Anthropic Messages API. Structured output is forced tool use: the tool's input is the answer.
 * The LM's `temperature` is not sent (see `anthropicBody`).
 */
export const anthropicProvider: ProviderDefinition = {
  ...PROVIDER_INFO["anthropic"]!,
  requestBody: (request, settings) => anthropicBody(request, settings),
  batch: {
    limits: ANTHROPIC_BATCH_LIMITS,
    line: anthropicBatchLine,
    // The body is built again to learn which tool was forced, so the reply is read as the live one.
    reply: (resultBody, request, settings) => anthropicReply(resultBody as Message, anthropicBody(request, settings)),
    connect: ({ apiKey, baseURL, call }) => anthropicBatches(lazyClient(apiKey, baseURL), call),
  },
  create({ apiKey, baseURL }): Provider {
    const getClient = lazyClient(apiKey, baseURL);
    return {
      async ready() {
        await getClient();
      },
      async complete(request, settings, signal, onDelta) {
        const anthropic = await getClient();
        const body = anthropicBody(request, settings);
        if (onDelta !== undefined) return anthropicStream(anthropic, body, signal, settings.timeoutMs, onDelta);
        const message = await anthropic.messages.create(body, { signal, timeout: settings.timeoutMs, maxRetries: 0 });
        return anthropicReply(message, body);
      },
    };
  },
};

/** The SDK client, loaded and built on first use (tried again on the next call when loading failed). */
function lazyClient(apiKey: string | undefined, baseURL: string): () => Promise<Anthropic> {
  let client: Promise<Anthropic> | undefined;
  return () =>
    (client ??= loadOptional<typeof import("@anthropic-ai/sdk")>("@anthropic-ai/sdk", "The anthropic provider").then(
      // Retries off (one policy), logging off (library never prints), and the SDK's own
      // OpenTelemetry spans off: typelm's `otel` subscriber already traces each call.
      ({ default: AnthropicClient }) => new AnthropicClient({ apiKey, baseURL, maxRetries: 0, logLevel: "off", openTelemetry: false }),
      (error: unknown) => {
        client = undefined;
        throw error;
      },
    ));
}

export function anthropicBody(request: LMRequest, settings: CallSettings): MessageCreateParamsNonStreaming {
  // Anthropic takes system text as a parameter, not as a message.
  const system = request.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
  const turns = request.messages.filter((m) => m.role !== "system");
  const budget = settings.reasoning === undefined ? undefined : thinkingBudget(settings.reasoning);
  if (budget !== undefined && settings.maxTokens !== undefined && settings.maxTokens <= budget) {
    throw new ConfigurationError(
      `anthropic model "${settings.model}": maxTokens (${settings.maxTokens}) must be larger than the thinking budget (${budget} tokens), which it includes`,
    );
  }
  const body: MessageCreateParamsNonStreaming = {
    model: settings.model,
    // The thinking budget counts against max_tokens: without a maxTokens, the answer keeps the default room.
    max_tokens: settings.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS + (budget ?? 0),
    messages: turns.map((m, i) => {
      const role = m.role as "user" | "assistant";
      // `promptCache`: the last turn before the final one closes the static prefix (system text and
      // demo turns); everything up to and including it is cached.
      const cache = settings.promptCache === true && i === turns.length - 2;
      // A turn with media: its text, then image/document blocks (media-content.ts).
      if (m.media?.length) return { role, content: anthropicContent(m.content, m.media, cache) as unknown as Anthropic.Messages.ContentBlockParam[] };
      if (cache) return { role, content: [{ type: "text" as const, text: m.content, cache_control: { type: "ephemeral" as const } }] };
      return { role, content: m.content };
    }),
  };
  if (system !== "") {
    // With no demo turns, the system text alone is the static prefix.
    body.system = settings.promptCache && turns.length < 2 ? [{ type: "text", text: system, cache_control: { type: "ephemeral" } }] : system;
  }
  if (budget !== undefined) body.thinking = { type: "enabled", budget_tokens: budget };
  // No `temperature`: API version 2026-10-21 (sent by SDK 1.x) rejects every sampling parameter
  // with a 400, even at default values, and the SDK's types no longer have it.
  if (request.responseSchema !== undefined) {
    const name = schemaName(request.responseSchema.name);
    body.tools = [{
      name,
      description: "Record the answer. Call this tool exactly once with every output field.",
      input_schema: withoutMeta(request.responseSchema.schema) as Anthropic.Messages.Tool.InputSchema,
    }];
    // Anthropic refuses a forced tool call while thinking ("tool_choice: any / tool" with extended
    // thinking is an error; only "auto" or "none" combine): with reasoning the tool is offered with
    // `auto`, and the reply is its call when the model made one, else its text.
    body.tool_choice = budget === undefined ? { type: "tool", name } : { type: "auto" };
  }
  addAnthropicTools(body, request, settings);
  return body;
}

export function anthropicReply(message: Message, body: MessageCreateParamsNonStreaming): ProviderReply {
  const usage = anthropicUsage(message.usage);
  const finishReason = message.stop_reason ?? undefined;
  const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  if (body.tool_choice?.type === "tool") {
    const toolName = body.tool_choice.name;
    const call = message.content.find((b) => b.type === "tool_use" && b.name === toolName);
    if (call === undefined || call.type !== "tool_use") {
      throw new OutputError(
        `anthropic reply for model "${body.model}" has no call of the forced tool "${toolName}"; ` +
          `expected a tool_use block, received ${message.content.map((b) => b.type).join(", ") || "no content"} (stop_reason ${finishReason})`,
        { raw: text, expected: `a tool_use block named ${toolName}`, received: message.content.map((b) => b.type) },
      );
    }
    return { content: JSON.stringify(call.input), usage, finishReason };
  }
  // The answer tool offered with `auto` beside thinking (see anthropicBody): its call is the reply.
  const tool = body.tool_choice?.type === "auto" ? body.tools?.[0] : undefined;
  const offered = tool !== undefined && "name" in tool ? tool.name : undefined;
  const call = offered === undefined ? undefined : message.content.find((b) => b.type === "tool_use" && b.name === offered);
  if (call !== undefined && call.type === "tool_use") return { content: JSON.stringify(call.input), usage, finishReason };
  return { content: text, usage, finishReason, toolCalls: anthropicToolCalls(message, body) };
}
