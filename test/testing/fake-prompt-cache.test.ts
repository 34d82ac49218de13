// The fake provider's prompt cache, honest to Anthropic's: a request that marks a prefix
// (`cache_control`) reads the longest of its prefixes an earlier request marked, and writes the
// longer prefixes it marks; a request that marks nothing reads nothing. Token counts by hand: the
// fake counts 4 characters a token, per block, each block as JSON with its role.
import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { LM } from "../../lib/lm/lm.js";
import { emptyUsage, trackUsage, type ModelCall } from "../../lib/lm/usage-scope.js";
import { ReAct } from "../../lib/predict/react.js";
import { Signature } from "../../lib/signature/signature.js";
import { FakePromptCache } from "../../lib/testing/fake-prompt-cache.js";
import { startFakeProvider } from "../../lib/testing/fake-provider.js";
import { toolCalls } from "../../lib/testing/fake-tools.js";
import type { FakeRequest } from "../../lib/testing/fake-wire.js";
import { tool } from "../../lib/tools/tool.js";

const S = "s".repeat(399); // {"role":"system","type":"text","text":"<399>"} = 41 + 399 = 440 characters: 110 tokens
const userBlock = (text: string) => ({ role: "user", content: text });
const request = (body: object): FakeRequest => ({ wire: "anthropic", method: "POST", path: "/v1/messages", headers: {}, body, messages: [], schema: undefined, media: [], toolResults: [], toolNames: [] });

describe("FakePromptCache", () => {
  it("reads the longest earlier marked prefix, writes the new marked one, and reads nothing for a request that marks nothing", () => {
    const cache = new FakePromptCache();
    const marked = [{ type: "text", text: S, cache_control: { type: "ephemeral" } }];
    // "u1" as {"role":"user","type":"text","text":"u1"} = 41 characters: 11 tokens.
    const first = cache.usage(request({ system: marked, messages: [userBlock("u1")] }), "abcd");
    expect(first).toEqual({ inputTokens: 121, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 110 });
    const second = cache.usage(request({ system: marked, messages: [userBlock("u2")] }), "abcd");
    expect(second).toEqual({ inputTokens: 121, outputTokens: 1, cacheReadTokens: 110, cacheWriteTokens: 0 });
    const unmarked = cache.usage(request({ system: S, messages: [userBlock("u3")] }), "abcd");
    expect(unmarked).toEqual({ inputTokens: 121, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });
});

describe("native ReAct with promptCache on an Anthropic LM", () => {
  it("reads, from the second step on, the whole conversation the previous step marked", async () => {
    const fake = await startFakeProvider({ promptCache: true });
    try {
      fake.reply(toolCalls([{ id: "toolu_1", name: "add", arguments: { a: 1, b: 2 } }]));
      fake.reply(toolCalls([{ id: "toolu_2", name: "add", arguments: { a: 3, b: 4 } }]));
      fake.reply(toolCalls([{ id: "toolu_3", name: "finish", arguments: { answer: "10" } }]));
      const add = tool({ name: "add", description: "Adds", input: { a: z.number(), b: z.number() }, call: async ({ a, b }) => a + b });
      const Q = Signature.define({ name: "Q", description: "Answer.", input: { question: z.string() }, output: { answer: z.string() } });
      const lm = new LM("anthropic/claude-haiku-4-5", { apiKey: "sk-test-not-a-key", baseURL: fake.url, promptCache: true });
      const usage = { ...emptyUsage(), log: [] as ModelCall[] };
      await trackUsage(usage, () => new ReAct(Q, { tools: [add], toolCalling: "native" }).call({ question: "q" }, { lm }));
      expect(usage.calls).toBe(3);
      const calls = usage.log;
      expect(calls[0]!.cacheReadTokens).toBeUndefined();
      for (const k of [1, 2]) {
        expect(calls[k]!.cacheReadTokens).toBeGreaterThan(0);
        expect(calls[k]!.cacheReadTokens).toBe((calls[k - 1]!.cacheReadTokens ?? 0) + (calls[k - 1]!.cacheWriteTokens ?? 0));
      }
      // Each request's last tool result is marked; the next request reads up to it.
      const bodies = fake.requests.map((r) => r.body);
      expect(bodies[1].messages.at(-1).content.at(-1).cache_control).toEqual({ type: "ephemeral" });
      expect(usage.cacheReadTokens).toBeGreaterThan(0);
      expect(usage.cacheWriteTokens).toBeGreaterThan(0);
    } finally {
      await fake.close();
    }
  });
});
