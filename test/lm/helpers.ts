import { configure } from "../../lib/config.js";
import { LM, type LMOptions } from "../../lib/lm/lm.js";
import { afterAll, beforeAll, beforeEach } from "@jest/globals";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";

export const TEST_KEY = "sk-test-SECRET-123456";

export const PROVIDER_MODELS = {
  openai: "openai/gpt-4o-mini",
  anthropic: "anthropic/claude-3-5-haiku-20241022",
  ollama: "ollama/llama3.2:3b",
} as const;

export type ProviderName = keyof typeof PROVIDER_MODELS;
export const PROVIDER_NAMES = Object.keys(PROVIDER_MODELS) as ProviderName[];

/** An LM of `provider` pointed at the fake server (OpenAI's base URL carries `/v1`). */
export function lmFor(provider: ProviderName, fake: FakeProvider, options: LMOptions = {}): LM {
  return new LM(PROVIDER_MODELS[provider], {
    apiKey: provider === "ollama" ? undefined : TEST_KEY,
    baseURL: provider === "openai" ? fake.openaiBaseURL : fake.url,
    ...options,
  });
}

/** Turns on the logger subscriber at debug level and returns the lines it writes (undo with `resetConfiguration`). */
export function captureLogLines(formatter?: "json" | "text"): string[] {
  const lines: string[] = [];
  configure((c) => {
    c.instrumentation.enabled = true;
    c.instrumentation.subscribers = ["logger"];
    c.logger.output = (line) => lines.push(line);
    c.logger.level = "debug";
    if (formatter !== undefined) c.logger.formatter = formatter;
  });
  return lines;
}

/**
 * Runs the fake provider for a test file: started once before its tests (handed to `use`), reset
 * before each test (replies queued and requests seen), closed after the last.
 */
export function withFakeProvider(use: (fake: FakeProvider) => void): void {
  let fake: FakeProvider | undefined;
  beforeAll(async () => {
    fake = await startFakeProvider();
    use(fake);
  });
  beforeEach(() => fake!.reset());
  afterAll(async () => {
    await fake?.close();
  });
}
