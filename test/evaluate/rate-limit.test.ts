import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { Evaluation, FewShotExample, Instrumentation, LM, Module, Predict, resetConfiguration } from "../../lib/index.js";
import { AdaptiveConcurrency } from "../../lib/evaluate/rate-limiter.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { Classify, startSentimentProvider } from "./sentiment-provider.js";

let fake: FakeProvider;
let doneCount = 0;
beforeAll(async () => {
  fake = await startSentimentProvider();
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
  it("halves its concurrency at the first 429s, then paces its calls (few 429s) instead of halving again, raises the limit once calls succeed, and ends with 0 failed examples", async () => {
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
    // The first 16 calls go together and all but one are refused; after that the calls pass the
    // evaluation's pacing gate one per token. Without the gate (each call waiting out its own 429,
    // concurrency halved down to 1-2) the 100 examples under the limit drew over 130 refusals.
    expect(fake.rateLimited).toBeGreaterThan(0);
    expect(fake.rateLimited).toBeLessThan(60);
    expect(module.most["start"]).toBe(16);
    // Once the limit is lifted the gate opens and additive increase brings back the configured 16.
    expect(module.most["recovered"]).toBe(16);
    // The limit's changes are events: halved once, on the first 429s (the gate's own later refusals
    // are its probing, not congestion), then back up to 16.
    expect(limits[0]).toEqual(expect.objectContaining({ limit: 8, cause: "decrease", retryAfterMs: expect.any(Number) }));
    expect(limits.filter((l) => l.cause === "decrease")).toHaveLength(1);
    expect(limits.at(-1)).toEqual(expect.objectContaining({ limit: 16, cause: "increase" }));
    // 400 calls paced at the provider's real rate (about 5 s idle): on a loaded machine that takes
    // longer than jest's default 20 s, and a timed-out run would keep calling into the next test.
  }, 120_000);

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

  it("a 429 of an attempt its pacing gate let go lowers neither the limit nor pauses new starts; the gate holds the calls instead", async () => {
    const limiter = new AdaptiveConcurrency(16);
    const listener = limiter.listener();
    const target = { provider: "openai", model: "m", endpoint: "http://127.0.0.1/v1" };
    // Open gate: the first refusal halves the limit and starts the gate pacing.
    const first = await listener.pace!(target, false);
    const refusedAt = performance.now();
    listener.limited(30, first);
    expect(limiter.limit).toBe(8);
    const gate = limiter.pacer(target);
    expect(gate.pacing).toBe(true);
    // The gate's next slot is over 25 ms after the refusal (what remains of it shrinks as the machine
    // takes its time between these lines: at load, 15 ms had gone by before delayMs() was read).
    expect(gate.delayMs() + (performance.now() - refusedAt)).toBeGreaterThan(25);
    // The retry waits at the gate; its refusal is the gate probing, not congestion.
    const paced = await listener.pace!(target, true);
    listener.limited(30, paced);
    expect(limiter.limit).toBe(8);
    expect(limiter.decreases).toBe(1);
    expect(limiter.pauseRemainingMs()).toBeLessThanOrEqual(1); // the first refusal's pause is over; this one set none
    expect(gate.refused).toBe(2);
    // Another model or endpoint has a gate of its own, still open.
    expect(limiter.pacer({ ...target, model: "other" }).pacing).toBe(false);
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
