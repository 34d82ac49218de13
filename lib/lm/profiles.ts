// Provider profiles: OpenAI-compatible services reached through the `openai` SDK under their own
// name (`new LM("gemini/gemini-2.5-flash")`). A profile gives the service's base URL (or the
// environment variable that holds it, for servers the user runs), the variable holding its key, and
// what its OpenAI-compatible endpoint accepts, as flags the rest of the library reads
// (`profileCapabilities`). The table is small on purpose: `new LM(...)` reads it synchronously.

/** What a provider's endpoint accepts, as typelm uses it. */
export interface ProviderCapabilities {
  /** A native structured output (`response_format: json_schema` on the OpenAI wire). */
  readonly structuredOutputs: boolean;
  /** Function definitions (`tools`) and tool calls read back. */
  readonly tools: boolean;
  /** Image content parts in user messages. */
  readonly images: boolean;
  /** Streamed replies (`stream: true`) with usage at the end. */
  readonly streaming: boolean;
  /** A reasoning setting (`reasoning_effort` on the OpenAI wire). */
  readonly reasoning: boolean;
}

/** One OpenAI-compatible service: where it is, which key it takes, what it accepts. */
export interface ProviderProfile {
  /** The service's own address (absent for a server the user runs: see `baseURLEnv`). */
  readonly baseURL?: string;
  /** The variable holding the server's address (vLLM, LM Studio); the `baseURL` option wins. */
  readonly baseURLEnv?: string;
  /** The variable holding the API key; absent when the service needs none. */
  readonly apiKeyEnv?: string;
  /** Runs on the user's own hardware: no charge per token. */
  readonly local?: boolean;
  readonly capabilities: ProviderCapabilities;
}

const caps = (structuredOutputs: boolean, reasoning: boolean): ProviderCapabilities =>
  ({ structuredOutputs, tools: true, images: true, streaming: true, reasoning });

/**
 * The known profiles. Base URLs and key variables as each service documents them (read 2026-11):
 * Gemini's OpenAI compatibility page (ai.google.dev/gemini-api/docs/openai), OpenRouter's API
 * reference, Groq's OpenAI compatibility page (console.groq.com/docs/openai), Together's OpenAI
 * compatibility page (docs.together.ai, `https://api.together.ai/v1`). Groq's structured outputs are
 * off: its strict `json_schema` mode exists on a few models only and others answer 400, so typelm's
 * strict request would fail there (Enhanced Prompting is used instead). `reasoning` is on where the
 * service documents `reasoning_effort` on its OpenAI-compatible endpoint (Gemini, Groq).
 */
export const PROFILES: Readonly<Record<string, ProviderProfile>> = {
  gemini: { baseURL: "https://generativelanguage.googleapis.com/v1beta/openai/", apiKeyEnv: "GEMINI_API_KEY", capabilities: caps(true, true) },
  openrouter: { baseURL: "https://openrouter.ai/api/v1", apiKeyEnv: "OPENROUTER_API_KEY", capabilities: caps(true, false) },
  groq: { baseURL: "https://api.groq.com/openai/v1", apiKeyEnv: "GROQ_API_KEY", capabilities: caps(false, true) },
  together: { baseURL: "https://api.together.ai/v1", apiKeyEnv: "TOGETHER_API_KEY", capabilities: caps(true, false) },
  vllm: { baseURLEnv: "VLLM_BASE_URL", local: true, capabilities: caps(true, false) },
  lmstudio: { baseURLEnv: "LMSTUDIO_BASE_URL", local: true, capabilities: caps(true, false) },
};

/** The three providers with their own SDK accept every feature typelm uses (per model, the provider decides). */
const NATIVE: ProviderCapabilities = caps(true, true);
const NATIVE_PROVIDERS = new Set(["openai", "anthropic", "ollama"]);

/**
 * What the provider of `id` accepts: `id` is an LM id (`"groq/llama-3.3-70b-versatile"`) or a
 * provider name (`"groq"`). Undefined for an unknown provider. The OpenAI, Anthropic and Ollama
 * providers accept everything (whether a given model does is the provider's answer).
 */
export function profileCapabilities(id: string): ProviderCapabilities | undefined {
  const slash = id.indexOf("/");
  const name = (slash < 0 ? id : id.slice(0, slash)).trim();
  if (NATIVE_PROVIDERS.has(name)) return NATIVE;
  return Object.hasOwn(PROFILES, name) ? PROFILES[name]!.capabilities : undefined;
}

/** Whether `name` is a profile (an OpenAI-compatible service under its own name). */
export function isProfile(name: string): boolean {
  return Object.hasOwn(PROFILES, name);
}
