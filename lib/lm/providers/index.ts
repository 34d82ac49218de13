import { anthropicProvider } from "./anthropic.js";
import { ollamaProvider } from "./ollama.js";
import { openaiProvider } from "./openai.js";
import { PROFILES } from "../profiles.js";
import { PROVIDER_INFO } from "./info.js";
import type { ProviderDefinition } from "./provider.js";

/** A placeholder key for a server that needs none (vLLM, LM Studio): the SDK requires one, and must not fall back to OPENAI_API_KEY. */
const NO_KEY = "no-key";

/** A profile: the OpenAI provider under the profile's name, server and key; no batch service. */
function profileProvider(name: string): ProviderDefinition {
  return {
    ...openaiProvider, ...PROVIDER_INFO[name]!, batch: undefined,
    create: ({ apiKey, baseURL }) => openaiProvider.create({ apiKey: apiKey ?? NO_KEY, baseURL }),
  };
}

/** Every provider `LM` knows, by the name used in model ids (`openai/gpt-4o-mini`). */
export const PROVIDERS: Readonly<Record<string, ProviderDefinition>> = {
  openai: openaiProvider,
  anthropic: anthropicProvider,
  ollama: ollamaProvider,
  ...Object.fromEntries(Object.keys(PROFILES).map((name) => [name, profileProvider(name)])),
};

export type {
  BatchLimits, BatchService, BatchState, BatchStatus, CallSettings, Provider, ProviderDefinition, ProviderReply, RawBatchResult,
} from "./provider.js";
