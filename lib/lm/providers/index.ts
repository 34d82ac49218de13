import { anthropicProvider } from "./anthropic.js";
import { ollamaProvider } from "./ollama.js";
import { openaiProvider } from "./openai.js";
import type { ProviderDefinition } from "./provider.js";

/** Every provider `LM` knows, by the name used in model ids (`openai/gpt-4o-mini`). */
export const PROVIDERS: Readonly<Record<string, ProviderDefinition>> = {
  openai: openaiProvider,
  anthropic: anthropicProvider,
  ollama: ollamaProvider,
};

export type {
  BatchLimits, BatchService, BatchState, BatchStatus, CallSettings, Provider, ProviderDefinition, ProviderReply, RawBatchResult,
} from "./provider.js";
