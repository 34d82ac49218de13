import { afterEach, describe, expect, it } from "@jest/globals";
import { ConfigurationError } from "../../lib/errors.js";
import { LM } from "../../lib/lm/lm.js";

const KEY_VARS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"] as const;

/** Runs `fn` with the provider key variables removed from the environment (restored after). */
function withoutKeys<T>(fn: () => T): T {
  const saved = KEY_VARS.map((name) => [name, process.env[name]] as const);
  for (const name of KEY_VARS) delete process.env[name];
  try {
    return fn();
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}

function configurationError(fn: () => unknown): ConfigurationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error("expected a ConfigurationError");
}

afterEach(() => LM.resetConfiguration());

describe("new LM(id)", () => {
  it("splits the id on the first slash only", () => {
    const lm = new LM("openai/ft:gpt-4o:org/x", { apiKey: "k-1234" });
    expect(lm.provider).toBe("openai");
    expect(lm.model).toBe("ft:gpt-4o:org/x");
    expect(lm.id).toBe("openai/ft:gpt-4o:org/x");
    expect(new LM("ollama/llama3.2:3b").model).toBe("llama3.2:3b");
  });

  it("rejects an unknown provider and lists the valid ones", () => {
    const error = configurationError(() => new LM("mistral/large", { apiKey: "k-1234" }));
    expect(error.message).toContain('unknown provider "mistral"');
    expect(error.message).toContain("openai, anthropic, ollama");
  });

  it.each(["gpt-4o", "openai/", "/gpt-4o", ""])("rejects the id %j that lacks a provider or model", (id) => {
    const error = configurationError(() => new LM(id, { apiKey: "k-1234" }));
    expect(error.message).toContain('"<provider>/<model>"');
    expect(error.message).toContain("openai, anthropic, ollama");
  });

  it("says to set OPENAI_API_KEY when OpenAI has no key", () => {
    const error = withoutKeys(() => configurationError(() => new LM("openai/gpt-4o-mini")));
    expect(error.message).toContain("OPENAI_API_KEY");
  });

  it("says to set ANTHROPIC_API_KEY when Anthropic has no key", () => {
    const error = withoutKeys(() => configurationError(() => new LM("anthropic/claude-sonnet-4")));
    expect(error.message).toContain("ANTHROPIC_API_KEY");
  });

  it("reads the key from the environment when apiKey is omitted, and never exposes it", () => {
    const lm = withoutKeys(() => {
      process.env["OPENAI_API_KEY"] = "sk-env-KEY-987654";
      try {
        return new LM("openai/gpt-4o-mini");
      } finally {
        delete process.env["OPENAI_API_KEY"];
      }
    });
    expect(JSON.stringify(lm)).not.toContain("sk-env-KEY-987654");
    expect(Object.values(lm).map(String).join(" ")).not.toContain("sk-env-KEY-987654");
  });

  it("needs no key for Ollama", () => {
    expect(withoutKeys(() => new LM("ollama/llama3.2:3b")).provider).toBe("ollama");
  });

  it("supports native structured outputs on all three providers and keeps the BaseLM options", () => {
    for (const id of ["openai/gpt-4o", "anthropic/claude-sonnet-4", "ollama/llama3.2"]) {
      const lm = new LM(id, { apiKey: "k-1234", structuredOutputs: true, schemaFormat: "baml", dataFormat: "toon", temperature: 0, maxTokens: 5 });
      expect(lm.supportsStructuredOutputs()).toBe(true);
      expect(lm).toMatchObject({ structuredOutputs: true, schemaFormat: "baml", dataFormat: "toon", temperature: 0, maxTokens: 5 });
    }
  });
});

describe("LM.configure", () => {
  it("sets the global policy and resetConfiguration restores the defaults", () => {
    LM.configure((c) => {
      c.httpTimeout = 30;
      c.maxRetries = 5;
      c.retryDelay = 0.5;
    });
    expect(LM.configuration).toEqual({ httpTimeout: 30, maxRetries: 5, retryDelay: 0.5 });
    LM.resetConfiguration();
    expect(LM.configuration).toEqual({ httpTimeout: 60, maxRetries: 3, retryDelay: 1 });
  });

  it("rejects invalid values and keeps the previous policy", () => {
    expect(() => LM.configure((c) => { c.maxRetries = -1; })).toThrow(/maxRetries must be a non-negative integer; received -1/);
    expect(() => LM.configure((c) => { c.httpTimeout = 0; })).toThrow(ConfigurationError);
    expect(() => LM.configure((c) => { c.retryDelay = Number.NaN; })).toThrow(ConfigurationError);
    expect(LM.configuration.maxRetries).toBe(3);
  });
});
