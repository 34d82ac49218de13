// program.batch({ via: "provider-batch" }) through the real OpenAI and Anthropic SDKs against the fake
// provider's batch services on loopback: a two-call module runs in two rounds, at the batch price.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { ChainOfThought, ConfigurationError, Instrumentation, LM, LMError, Module, Predict, resetConfiguration } from "../../lib/index.js";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/index.js";
import { Count, Upper, answerFor } from "../evaluate/batch-task.js";

/** The model's answer, with a line of reasoning for ChainOfThought (Predict ignores the extra field). */
const answer = (request: FakeRequest) => ({ reasoning: "read the word", ...answerFor(String(request.messages[request.messages.length - 1]?.content ?? "")) });

/** Two calls per input, the second made from the first one's answer: ChainOfThought, then Predict. */
class ThinkThenCount extends Module<{ word: string }, { loud: string; letters: number }> {
  shout = new ChainOfThought(Upper);
  count = new Predict(Count);
  async forward(inputs: { word: string }) {
    const { loud } = await this.shout.call(inputs);
    const { letters } = await this.count.call({ loud });
    return { loud, letters };
  }
}
const words = ["ant", "bee", "yak", "dog", "eel"];
const fast = { pollInterval: 0.01 };

let fake: FakeProvider;
beforeAll(async () => { fake = await startFakeProvider({ defaultReply: answer }); });
afterAll(() => fake.close());
afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
});

const models = {
  openai: () => new LM("openai/gpt-4o-mini", { apiKey: "sk-batch-call-key", baseURL: fake.openaiBaseURL, temperature: 0 }),
  anthropic: () => new LM("anthropic/claude-3-5-haiku-20241022", { apiKey: "sk-ant-batch-call-key", baseURL: fake.url, temperature: 0 }),
};

/** The cost `program.batch` reports at its end (the `batch.end` event). */
function endCost(): () => number {
  let cost = Number.NaN;
  Instrumentation.subscribe("batch.end", (e) => { cost = (e.payload as { cost: number }).cost; });
  return () => cost;
}

describe.each(Object.keys(models) as (keyof typeof models)[])("program.batch via provider-batch (%s)", (provider) => {
  it("a two-call module (ChainOfThought then Predict) runs in two rounds: two batches, the second holding the second calls, no live request; results in order; half the live cost", async () => {
    const before = { batches: fake.batches.length, live: fake.requests.length };
    const cost = endCost();
    const program = new ThinkThenCount().configure((c) => { c.lm = models[provider](); });
    const results = await program.batch(words.map((word) => ({ word })), { via: "provider-batch", providerBatch: fast, progress: false });
    expect(results).toEqual(words.map((w) => ({ ok: true, value: { loud: w.toUpperCase(), letters: 3 } })));
    const batches = fake.batches.slice(before.batches);
    expect(batches.map((b) => b.wire)).toEqual([provider, provider]);
    const asks = (i: number) => batches[i]!.requests.map((r) => (JSON.stringify(r.messages).includes("Shout the word") ? "shout" : "count"));
    expect(asks(0)).toEqual(Array(5).fill("shout"));
    expect(asks(1)).toEqual(Array(5).fill("count"));
    expect(fake.requests.length).toBe(before.live);
    const batchCost = cost();

    // The same inputs live: the same values, twice the cost.
    const live = await new ThinkThenCount().configure((c) => { c.lm = models[provider](); }).batch(words.map((word) => ({ word })), { progress: false });
    expect(fake.requests.length - before.live).toBe(10);
    expect(live).toEqual(results);
    expect(cost()).toBeGreaterThan(0);
    expect(batchCost).toBeCloseTo(cost() / 2, 12);
  });
});

describe("program.batch via provider-batch: failures and abort", () => {
  const lm = models.openai;

  it("a request that fails inside every batch is that input's { ok: false, error }; the others are ok", async () => {
    const isYak = (_id: string, request: unknown) => JSON.stringify(request).includes("yak");
    fake.batch({ failIds: isYak, lineError: { status: 500, message: "server hiccup" }, times: 2 });
    const program = new Predict(Upper).configure((c) => { c.lm = lm(); });
    const results = await program.batch(words.map((word) => ({ word })), { via: "provider-batch", providerBatch: { ...fast, maxRetries: 1 }, progress: false });
    expect(results.map((r) => r.ok)).toEqual([true, true, false, true, true]);
    const yak = results[2]!;
    expect(yak.ok === false && yak.error).toBeInstanceOf(LMError);
    expect(yak.ok === false && (yak.error as Error).message).toMatch(/server hiccup.*after 2 batches/);
    expect(results[3]!.ok && results[3]!.value.loud).toBe("DOG");
  });

  it("a batch that fails as a whole is the result of every input waiting on it, not a thrown error", async () => {
    fake.batch({ fail: "input file has an invalid line" });
    const program = new Predict(Upper).configure((c) => { c.lm = lm(); });
    const results = await program.batch([{ word: "owl" }, { word: "cat" }], { via: "provider-batch", providerBatch: fast, progress: false });
    for (const r of results) {
      expect(r.ok === false && r.error).toBeInstanceOf(LMError);
      expect(r.ok === false && (r.error as Error).message).toContain("input file has an invalid line");
    }
  });

  it("a model with no batch service (Ollama) rejects the batch with a ConfigurationError, as Evaluation does", async () => {
    const program = new Predict(Upper).configure((c) => { c.lm = new LM("ollama/llama3.2", { baseURL: fake.url }); });
    const error = await program.batch([{ word: "owl" }], { via: "provider-batch", providerBatch: fast, progress: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/Ollama has no batch service; run without batch/);
  });

  it("the signal aborts the wait for a batch: the inputs without a result resolve as AbortError, and the provider's status is reported while waiting", async () => {
    fake.batch({ polls: 1_000 });
    const controller = new AbortController();
    const polled: string[] = [];
    Instrumentation.subscribe("batch.provider", (e) => {
      polled.push((e.payload as { status: string }).status);
      controller.abort();
    });
    const program = new Predict(Upper).configure((c) => { c.lm = lm(); });
    const results = await program.batch([{ word: "gnu" }, { word: "elk" }], {
      via: "provider-batch", providerBatch: fast, signal: controller.signal, progress: false,
    });
    expect(polled.length).toBeGreaterThan(0);
    for (const r of results) {
      expect(r.ok === false && (r.error as Error).name).toBe("AbortError");
      expect(r.ok === false && (r.error as Error).message).toMatch(/aborted before this input's calls were answered/);
    }
  });
});
