import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LM, Predict, estimateCost } from "../../lib/index.js";
import { runInRounds, type BatchTransport } from "../../lib/evaluate/batch-rounds.js";
import { Instrumentation } from "../../lib/instrument/bus.js";
import type { BatchAnswer, CollectedRequest } from "../../lib/lm/batch-scope.js";
import { ShoutAndCount, Upper, answerFor } from "./batch-task.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-rounds-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


/** Nothing listens there: a call that reached the network would fail, so every reply must come from a batch or the cache. */
const lm = (cachePath?: string) => new LM("openai/gpt-4o-mini", {
  apiKey: "sk-rounds-test-key", baseURL: "http://127.0.0.1:9/v1", temperature: 0, ...(cachePath ? { cache: { path: cachePath } } : {}),
});

/** Answers like a model would, from the request's last user message; records every batch. */
function transport(options: { failOnce?: (r: CollectedRequest) => boolean; failAlways?: (r: CollectedRequest) => boolean } = {}) {
  const sent: CollectedRequest[][] = [];
  const failed = new Set<string>();
  const t: BatchTransport = {
    async send(requests) {
      sent.push([...requests]);
      const answers = new Map<string, BatchAnswer>();
      for (const r of requests) {
        const last = String(r.request.messages[r.request.messages.length - 1]?.content ?? "");
        if (options.failAlways?.(r) || (options.failOnce?.(r) && !failed.has(r.key))) {
          failed.add(r.key);
          answers.set(r.key, { ok: false, error: "request expired inside the batch" });
          continue;
        }
        const content = JSON.stringify(answerFor(last));
        answers.set(r.key, { ok: true, reply: { content, usage: { inputTokens: 1000, outputTokens: 100, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, finishReason: "stop" } });
      }
      return answers;
    },
  };
  return { t, sent };
}

const words = ["ant", "bee", "cat", "dog", "eel"];

describe("batch rounds", () => {
  it("a one-step module takes one batch holding every example's request", async () => {
    const { t, sent } = transport();
    const model = lm();
    const program = new Predict(Upper).configure((c) => { c.lm = model; });
    const r = await runInRounds(words, (word) => program.call({ word }), t);
    expect(r.results.map((p) => p.loud)).toEqual(["ANT", "BEE", "CAT", "DOG", "EEL"]);
    expect(sent.map((b) => b.length)).toEqual([5]);
    expect(r).toMatchObject({ batches: 1, rounds: 1 });
  });

  it("a two-step pipeline takes two batches: the first steps, then the second steps; the module code is unchanged", async () => {
    const { t, sent } = transport();
    const model = lm();
    const program = new ShoutAndCount().configure((c) => { c.lm = model; });
    const r = await runInRounds(words, (word) => program.call({ word }), t);
    expect(r.results).toEqual(words.map((w) => ({ loud: w.toUpperCase(), letters: 3 })));
    expect(r).toMatchObject({ batches: 2, rounds: 2 });
    // Which task each request asks, read from its prompt (the signature's description).
    const asks = (batch: CollectedRequest[]) => batch.map((q) => (JSON.stringify(q.request.messages).includes("Shout the word") ? "shout" : "count"));
    expect(asks(sent[0]!)).toEqual(["shout", "shout", "shout", "shout", "shout"]);
    expect(asks(sent[1]!)).toEqual(["count", "count", "count", "count", "count"]);
  });

  it("batch replies enter the LM cache, and cached requests never enter a batch", async () => {
    const cache = join(dir, "cache.sqlite");
    const first = transport();
    const model = lm(cache);
    const program = new ShoutAndCount().configure((c) => { c.lm = model; });
    await runInRounds(words.slice(0, 3), (word) => program.call({ word }), first.t);
    expect(first.sent.map((b) => b.length)).toEqual([3, 3]);
    // Again with two known words and one new: only the new word's two requests are batched.
    const second = transport();
    const again = new ShoutAndCount().configure((c) => { c.lm = lm(cache); });
    const r = await runInRounds(["ant", "bee", "fox"], (word) => again.call({ word }), second.t);
    expect(r.results.map((x) => x.loud)).toEqual(["ANT", "BEE", "FOX"]);
    expect(second.sent.map((b) => b.map((q) => q.request.messages[q.request.messages.length - 1]!.content.includes("fox") || q.request.messages[q.request.messages.length - 1]!.content.includes("FOX")))).toEqual([[true], [true]]);
  });

  it("a request that fails inside a batch goes into the next one; past maxRetries the example sees the error", async () => {
    const failOnce = (r: CollectedRequest) => JSON.stringify(r.request.messages).includes("cat");
    const retried = transport({ failOnce });
    const model = lm();
    const program = new Predict(Upper).configure((c) => { c.lm = model; });
    const r = await runInRounds(words, (word) => program.call({ word }).then((p) => p.loud, (e: Error) => `error: ${e.message}`), retried.t);
    expect(r.results).toEqual(["ANT", "BEE", "CAT", "DOG", "EEL"]);
    expect(retried.sent.map((b) => b.length)).toEqual([5, 1]);

    const failAlways = transport({ failAlways: failOnce });
    const given = await runInRounds(words, (word) => program.call({ word }).then((p) => p.loud, (e: Error) => `error: ${e.message}`), failAlways.t, { maxRetries: 1 });
    expect(given.results[2]).toBe("error: request expired inside the batch (after 2 batches)");
    expect(given.results.filter((x) => !x.startsWith("error"))).toHaveLength(4);
    expect(failAlways.sent.map((b) => b.length)).toEqual([5, 1]);
  });

  it("a batch reply costs half of a live reply with the same usage", async () => {
    const { t } = transport();
    const model = lm();
    const program = new Predict(Upper).configure((c) => { c.lm = model; });
    const costs: number[] = [];
    const off = Instrumentation.subscribe("lm.tokens.used", (e) => { costs.push(e.payload.estimatedCost as number); });
    try {
      await runInRounds(["ant"], (word) => program.call({ word }), t);
    } finally {
      off();
    }
    const live = estimateCost("openai", "gpt-4o-mini", { inputTokens: 1000, outputTokens: 100 })!;
    expect(live).toBeGreaterThan(0);
    expect(costs).toEqual([live / 2]);
  });
});
