import { ConfigurationError } from "../../errors.js";
import { PROFILES, type ProviderCapabilities } from "../profiles.js";
import type { ProviderDefinition } from "./provider.js";

/** What `new LM(...)` needs of a provider before any call: its name, key variable and server. */
export interface ProviderInfo {
  name: string;
  /** Environment variable holding the API key; absent when the provider needs none. */
  apiKeyEnv?: string;
  /**
   * The server a call goes to: `baseURL` when given, else the provider's environment variable or
   * default address. `create` receives this value, and the response cache keys on it.
   */
  resolveBaseURL(baseURL: string | undefined): string;
  /** What the provider's endpoint accepts (a profile's flags); absent: everything. */
  capabilities?: ProviderCapabilities;
}

const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
export const OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434";

/**
 * Every provider `LM` knows, by the name used in model ids (`openai/gpt-4o-mini`). The rest of each
 * provider (request bodies, replies, batches) is in its own module, loaded at the first call
 * (`loadProvider`), so `import "typelm"` does not compile it.
 */
export const PROVIDER_INFO: Readonly<Record<string, ProviderInfo>> = {
  openai: {
    name: "openai",
    apiKeyEnv: "OPENAI_API_KEY",
    // The SDK's own fallbacks, resolved here so the response cache knows the server.
    resolveBaseURL: (baseURL) => baseURL ?? (process.env["OPENAI_BASE_URL"] || OPENAI_DEFAULT_BASE_URL),
  },
  anthropic: {
    name: "anthropic",
    apiKeyEnv: "ANTHROPIC_API_KEY",
    resolveBaseURL: (baseURL) => baseURL ?? (process.env["ANTHROPIC_BASE_URL"] || ANTHROPIC_DEFAULT_BASE_URL),
  },
  ollama: {
    name: "ollama",
    resolveBaseURL: (baseURL) => baseURL ?? (process.env["OLLAMA_HOST"] || OLLAMA_DEFAULT_HOST),
  },
  ...Object.fromEntries(Object.entries(PROFILES).map(([name, profile]): [string, ProviderInfo] => [name, {
    name,
    ...(profile.apiKeyEnv === undefined ? {} : { apiKeyEnv: profile.apiKeyEnv }),
    capabilities: profile.capabilities,
    resolveBaseURL: (baseURL) => {
      const resolved = baseURL ?? ((profile.baseURLEnv === undefined ? undefined : process.env[profile.baseURLEnv]) || profile.baseURL);
      if (resolved === undefined) {
        throw new ConfigurationError(
          `${name}: no server address. Set ${profile.baseURLEnv} in the environment (e.g. http://127.0.0.1:8000/v1) or pass { baseURL } to new LM(...).`,
        );
      }
      return resolved;
    },
  }])),
};

/** The provider's whole definition, loaded the first time a model of that provider is called. */
export async function loadProvider(name: string): Promise<ProviderDefinition> {
  const { PROVIDERS } = await import("./index.js");
  const definition = PROVIDERS[name];
  if (definition === undefined) throw new Error(`no provider named ${JSON.stringify(name)}`);
  return definition;
}
