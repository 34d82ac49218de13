// `reasoning` and `promptCache` on LM, sent through the real SDKs to the fake provider, streamed and
// not: the request bodies carry each provider's own setting (OpenAI `reasoning_effort`, Anthropic
// `thinking` and `cache_control` on the last static turn, Ollama `think`); bad settings are refused
// with a sentence; the reasoning setting is part of the response cache key.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "@jest/globals";
import { ConfigurationError } from "../../lib/errors.js";
import { LM } from "../../lib/lm/lm.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, TEST_KEY, withFakeProvider } from "./helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

const system = { role: "system" as const, content: "You answer briefly." };
const demo = [{ role: "user" as const, content: "1 + 1?" }, { role: "assistant" as const, content: "2" }];
const question = { role: "user" as const, content: "2 + 2?" };
const modes = [["unstreamed", false], ["streamed", true]] as const;

describe.each(modes)("%s", (_name, streamed) => {
  const chat = (lm: LM, messages: { role: "system" | "user" | "assistant"; content: string }[]) =>
    lm.chat({ messages }, streamed ? { onDelta: () => undefined } : {});

  it("openai: reasoning effort is sent as reasoning_effort; promptCache changes nothing", async () => {
    await chat(lmFor("openai", fake, { reasoning: { effort: "low" }, promptCache: true }), [system, ...demo, question]);
    const body = fake.requests[0]!.body;
    expect(body.reasoning_effort).toBe("low");
    expect(JSON.stringify(body)).not.toContain("cache_control");
  });

  it("anthropic: a budget is sent as thinking, with max_tokens above it", async () => {
    await chat(lmFor("anthropic", fake, { reasoning: { budgetTokens: 2048 } }), [system, question]);
    const body = fake.requests[0]!.body;
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(body.max_tokens).toBe(2048 + 4096);
  });

  it("anthropic: an effort becomes its thinking budget", async () => {
    await chat(lmFor("anthropic", fake, { reasoning: { effort: "medium" } }), [system, question]);
    expect(fake.requests[0]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 4096 });
  });

  it("anthropic promptCache: cache_control on the last demo turn, none on the question", async () => {
    await chat(lmFor("anthropic", fake, { promptCache: true }), [system, ...demo, question]);
    const body = fake.requests[0]!.body;
    expect(body.system).toBe("You answer briefly.");
    expect(body.messages).toEqual([
      { role: "user", content: "1 + 1?" },
      { role: "assistant", content: [{ type: "text", text: "2", cache_control: { type: "ephemeral" } }] },
      { role: "user", content: "2 + 2?" },
    ]);
  });

  it("anthropic promptCache without demos: cache_control on the system text", async () => {
    await chat(lmFor("anthropic", fake, { promptCache: true }), [system, question]);
    const body = fake.requests[0]!.body;
    expect(body.system).toEqual([{ type: "text", text: "You answer briefly.", cache_control: { type: "ephemeral" } }]);
    expect(body.messages).toEqual([{ role: "user", content: "2 + 2?" }]);
  });

  it("anthropic without promptCache: no cache_control anywhere", async () => {
    await chat(lmFor("anthropic", fake), [system, ...demo, question]);
    expect(JSON.stringify(fake.requests[0]!.body)).not.toContain("cache_control");
  });

  it("ollama: think is the effort, or true for a budget", async () => {
    await chat(lmFor("ollama", fake, { reasoning: { effort: "high" } }), [system, question]);
    await chat(lmFor("ollama", fake, { reasoning: { budgetTokens: 2048 } }), [system, question]);
    expect(fake.requests.map((r) => r.body.think)).toEqual(["high", true]);
  });
});

describe("checks", () => {
  const make = (id: string, reasoning: unknown) => () => new LM(id, { apiKey: TEST_KEY, reasoning: reasoning as never });

  it("refuses a bad effort, a small budget, two settings at once, and a budget for OpenAI", () => {
    expect(make("openai/o4-mini", { effort: "max" })).toThrow(/reasoning\.effort must be "low", "medium" or "high"; received "max"/);
    expect(make("anthropic/claude-sonnet-4-5", { budgetTokens: 100 })).toThrow(/budgetTokens must be an integer of at least 1024; received 100/);
    expect(make("anthropic/claude-sonnet-4-5", { effort: "low", budgetTokens: 2048 })).toThrow(ConfigurationError);
    expect(make("openai/o4-mini", { budgetTokens: 2048 })).toThrow(/OpenAI takes a reasoning effort, not a token budget/);
    expect(make("anthropic/claude-sonnet-4-5", { budgetTokens: 2048 })).not.toThrow();
  });

  it("refuses an Anthropic maxTokens that leaves no room above the thinking budget", async () => {
    const lm = lmFor("anthropic", fake, { reasoning: { budgetTokens: 2048 }, maxTokens: 1000 });
    await expect(lm.chat({ messages: [question] })).rejects.toThrow(/maxTokens \(1000\) must be larger than the thinking budget \(2048 tokens\)/);
    expect(fake.requests).toHaveLength(0);
  });

  it("the reasoning setting is part of the response cache key", async () => {
    // One store file for both LMs (":memory:" would give each LM its own store).
    const cache = { path: join(mkdtempSync(join(tmpdir(), "typelm-reasoning-")), "lab.sqlite") };
    const low = lmFor("openai", fake, { reasoning: { effort: "low" }, cache });
    const high = lmFor("openai", fake, { reasoning: { effort: "high" }, cache });
    const first = await low.chat({ messages: [question] });
    const again = await low.chat({ messages: [question] });
    const other = await high.chat({ messages: [question] });
    expect([first.cached, again.cached, other.cached]).toEqual([false, true, false]);
    expect(fake.requests.map((r) => r.body.reasoning_effort)).toEqual(["low", "high"]);
  });
});
