import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, FewShotExample, Instrumentation, LM, Module, Predict, Signature, resetConfiguration } from "../../lib/index.js";
import { AdaptiveConcurrency } from "../../lib/evaluate/rate-limiter.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

let fake: FakeProvider;
let doneCount = 0;
beforeAll(async () => {
  fake = await startFakeProvider({
    defaultReply: async (req) => {
      await new Promise((r) => setTimeout(r, 5));
      return { sentiment: /odd/.test(req.messages.at(-1)?.content ?? "") ? "negative" : "positive" };
    },
  });
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  doneCount = 0;
  LM.resetConfiguration();
  fake.rateLimit(null);
  fake.reset();
  resetConfiguration();
  Instrumentation.reset();
});

function examples(count: number): FewShotExample[] {
  return Array.from({ length: count }, (_, n) => new FewShotExample({
    input: { sentence: `sentence ${n} is ${n % 2 === 1 ? "odd" : "even"}` }, output: { sentiment: n % 2 === 1 ? "negative" : "positive" },
  }));
}

/** Counts how many examples run at once, keyed by what the caller says the phase is. */
class Counting extends Module {
  readonly predict = new Predict(Classify);
  running = 0;
  phase = "start";
  readonly most: Record<string, number> = {};
  async forward(inputs: { sentence: string }): Promise<Record<string, unknown>> {
    this.running++;
    this.most[this.phase] = Math.max(this.most[this.phase] ?? 0, this.running);
    try {
      return (await this.predict.call(inputs)).toJSON();
    } finally {
      this.running--;
    }
  }
}

describe("Evaluation against a rate-limited provider", () => {
  it("lowers its concurrency on 429 + retry-after, raises it again once calls succeed, and ends with 0 failed examples", async () => {
    fake.rateLimit({ requestsPerSecond: 60 });
    const module = new Counting().configure((c) => {
      c.lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-test-SECRET-123456", baseURL: fake.openaiBaseURL });
    });
    const limits: { limit: number; cause: string }[] = [];
    Instrumentation.subscribe("evaluation.concurrency", (e) => limits.push(e.payload as { limit: number; cause: string }));
    const report = await new Evaluation({ concurrency: 16, record: false, progress: false }).evaluate({
      moduleInstance: module,
      testExamples: examples(400),
      onExample: () => {
        const done = ++doneCount;
        if (done === 40) module.phase = "limited";
        if (done === 100) {
          fake.rateLimit(null);
          module.phase = "lifted";
        }
        if (done === 300) module.phase = "recovered";
      },
    });
    expect(report.failures).toHaveLength(0);
    expect(report.accuracy).toBe(1);
    expect(fake.rateLimited).toBeGreaterThan(0);
    // At the start 16 run at once; under the limit the evaluation keeps far fewer going ...
    expect(module.most["start"]).toBe(16);
    expect(module.most["limited"]).toBeLessThanOrEqual(4);
    // ... and once the limit is lifted, additive increase brings it back to the configured 16.
    expect(module.most["recovered"]).toBe(16);
    // The limit's changes are events: halved on the first 429, down to a few slots, back up to 16.
    expect(limits[0]).toEqual(expect.objectContaining({ limit: 8, cause: "decrease", retryAfterMs: expect.any(Number) }));
    expect(Math.min(...limits.map((l) => l.limit))).toBeLessThanOrEqual(4);
    expect(limits.at(-1)).toEqual(expect.objectContaining({ limit: 16, cause: "increase" }));
  });

  it("re-runs an example whose LM gave up on 429, so the run ends with no failure", async () => {
    LM.configure((c) => { c.maxRetries = 0; });
    fake.fail({ status: 429, times: 3, retryAfterMs: 20 });
    const module = new Predict(Classify).configure((c) => {
      c.lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-test-SECRET-123456", baseURL: fake.openaiBaseURL });
    });
    const report = await new Evaluation({ concurrency: 1, record: false, progress: false })
      .evaluate({ moduleInstance: module, testExamples: examples(2) });
    expect(report.failures).toHaveLength(0);
    expect(fake.requests).toHaveLength(5);
  });
});

describe("AdaptiveConcurrency", () => {
  it("halves the limit once per round of 429s and adds one slot per round of successes", () => {
    const limiter = new AdaptiveConcurrency(16);
    const a = limiter.listener();
    const b = limiter.listener();
    a.limited(undefined);
    expect(limiter.limit).toBe(8);
    // b started before the decrease: its 429 is the same congestion, not news.
    b.limited(undefined);
    expect(limiter.limit).toBe(8);
    // b's next attempt started after the decrease, so another 429 halves again.
    b.limited(undefined);
    expect(limiter.limit).toBe(4);
    const c = limiter.listener();
    for (let i = 0; i < 4; i++) c.succeeded();
    expect(limiter.limit).toBe(4); // 4 + 4 × (about 1/4): just under 5
    c.succeeded();
    expect(limiter.limit).toBe(5);
    for (let i = 0; i < 200; i++) c.succeeded();
    expect(limiter.limit).toBe(16);
  });

  it("holds back new starts until retry-after has passed", async () => {
    let now = 1000;
    const limiter = new AdaptiveConcurrency(2, () => now);
    limiter.listener().limited(50);
    expect(limiter.pauseRemainingMs()).toBe(50);
    now += 30;
    expect(limiter.pauseRemainingMs()).toBe(20);
    now += 20;
    await limiter.acquire();
    expect(limiter.inFlight).toBe(1);
  });
});
