import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { setImmediate as tick } from "node:timers/promises";
import { Evaluation, FewShotExample, LM, Predict, resetConfiguration, type Module } from "../../lib/index.js";
import { Pacer, type PacerClock } from "../../lib/evaluate/pacer.js";
import { withRetry } from "../../lib/lm/retry.js";
import { currentPolicy } from "../../lib/lm/policy.js";
import { withRateListener, type PacedAttempt } from "../../lib/lm/rate-signal.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";
import { Classify, startSentimentProvider } from "./sentiment-provider.js";

/** Virtual time: timers run in order of their time, each followed by the promise work it starts. */
class VirtualClock implements PacerClock {
  time = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now = (): number => this.time;

  setTimeout = (fn: () => void, ms: number): number => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.time + Math.max(0, ms), fn });
    return id;
  };

  clearTimeout = (handle: unknown): void => {
    this.timers.delete(handle as number);
  };

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }

  /** Runs timers up to `until` (ms of virtual time), letting promise chains settle after each. */
  async run(until: number): Promise<void> {
    await tick();
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (next === undefined || entry[1].at < next[1].at) next = entry;
      if (next === undefined || next[1].at > until) break;
      this.timers.delete(next[0]);
      this.time = next[1].at;
      next[1].fn();
      await tick();
    }
    this.time = Math.max(this.time, until);
  }
}

/** What a provider with a token bucket answered, as the gate sees it. */
interface Simulation {
  done: number;
  refused: number;
  pacer: Pacer;
}

/**
 * `calls` calls from `workers` callers through one gate to a provider that grants one request per
 * `intervalMs` (token bucket of `burst`), answers 429 with the time until its next token (rounded up to
 * whole ms, as the fake provider and real servers do), answers admitted requests after `latencyMs`,
 * and is `oneWayMs` away (plus a little deterministic jitter). Returns when all calls are done.
 */
async function simulate(options: { calls: number; workers: number; intervalMs: number; burst: number; latencyMs: number; oneWayMs: number; clock?: VirtualClock; pacer?: Pacer; liftAfter?: number }): Promise<Simulation> {
  const clock = options.clock ?? new VirtualClock();
  const pacer = options.pacer ?? new Pacer(clock);
  let tokens = options.burst;
  let at = 0;
  let seed = 7;
  const jitter = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return (seed / 2 ** 31) * 0.6;
  };
  /** The provider's answer at the moment a request arrives: undefined when admitted, else the wait. */
  const arrive = (): number | undefined => {
    if (options.liftAfter !== undefined && result.done >= options.liftAfter) return undefined;
    const now = clock.now();
    tokens = Math.min(options.burst, tokens + (now - at) / options.intervalMs);
    at = now;
    if (tokens >= 1) {
      tokens -= 1;
      return undefined;
    }
    return Math.ceil((1 - tokens) * options.intervalMs);
  };
  const result: Simulation = { done: 0, refused: 0, pacer };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.calls) {
      next++;
      let retry = false;
      for (;;) {
        const attempt = await pacer.ready(retry);
        await clock.sleep(options.oneWayMs + jitter());
        const wait = arrive();
        if (wait === undefined) {
          await clock.sleep(options.latencyMs + options.oneWayMs + jitter());
          pacer.succeeded(attempt);
          result.done++;
          break;
        }
        await clock.sleep(options.oneWayMs + jitter());
        result.refused++;
        pacer.limited(attempt, wait);
        retry = true;
      }
    }
  };
  const running = Promise.all(Array.from({ length: options.workers }, worker));
  let finished = false;
  void running.then(() => (finished = true));
  while (!finished) await clock.run(clock.time + 1000);
  await running;
  return result;
}

describe("Pacer: the gate in front of a rate-limited provider", () => {
  it("is open until a 429, then holds every waiting attempt until the server's retry-after and lets them go one per interval, the refused one first", async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(clock);
    // Open: attempts go at once.
    const first = await pacer.ready();
    const refused = await pacer.ready();
    expect(pacer.pacing).toBe(false);
    // The second is refused: "the next token comes in 20 ms".
    clock.time = 2;
    pacer.limited(refused, 20);
    expect(pacer.pacing).toBe(true);
    expect(pacer.delayMs()).toBe(20);
    const order: string[] = [];
    const times: Record<string, number> = {};
    const wait = (name: string, retry = false): void => {
      void Promise.resolve(pacer.ready(retry)).then(() => {
        order.push(name);
        times[name] = clock.time;
      });
    };
    // Two new calls arrive, then the refused call comes back for its retry.
    wait("new-1");
    wait("new-2");
    wait("retry", true);
    await clock.run(21.9);
    expect(order).toEqual([]); // nothing goes before the server's time
    await clock.run(22);
    expect(order).toEqual(["retry"]); // the refused call first, at 2 + 20 ms
    await clock.run(60);
    expect(order).toEqual(["retry", "new-1"]); // one per interval, not all at once
    expect(times["new-1"]! - times["retry"]!).toBeGreaterThan(15);
    await clock.run(100);
    expect(order).toEqual(["retry", "new-1", "new-2"]);
    expect(times["new-2"]! - times["new-1"]!).toBeGreaterThan(15);
    pacer.succeeded(first);
    expect(pacer.released).toBe(5);
    expect(pacer.refused).toBe(1);
  });

  it("a 60 s retry-after holds the gate for 60 s, then lets attempts go about one a second, not one a minute", async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(clock);
    const refused = await pacer.ready();
    pacer.limited(refused, 60_000);
    expect(pacer.delayMs()).toBe(60_000);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) void Promise.resolve(pacer.ready(i === 0)).then(() => times.push(clock.time));
    await clock.run(59_999);
    expect(times).toEqual([]);
    await clock.run(70_000);
    // The refused call at the server's time, the four others one interval apart; an interval set
    // by the 60 s wait itself would have let the second go at about 118 s.
    expect(times).toHaveLength(5);
    expect(times[0]).toBe(60_000);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThan(900);
      expect(gap).toBeLessThanOrEqual(1000);
    }
  });

  it("against a bucket of one token, learns the provider's interval from the admitted attempts and has few attempts refused", async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(clock);
    // A first guess far off: a server's wait of 2 ms (the gate's first interval).
    pacer.limited(await pacer.ready(), 2);
    expect(pacer.interval).toBeLessThan(3);
    const sim = await simulate({ calls: 300, workers: 16, intervalMs: 20, burst: 1, latencyMs: 20, oneWayMs: 1, clock, pacer });
    expect(sim.done).toBe(300);
    // Without pacing every call waits out its own 429 and they all fire together when it ends: at
    // least one refusal per call (over 4,000 in this simulation). With the gate, a small fraction.
    expect(sim.refused).toBeLessThan(300 / 3);
    // The gate's interval ends near the provider's 20 ms (it presses a little below the average).
    expect(pacer.interval).toBeGreaterThan(18);
    expect(pacer.interval).toBeLessThan(24);
  });

  it("with a burst allowance, also paces from the refusals and keeps refusals few", async () => {
    const sim = await simulate({ calls: 300, workers: 16, intervalMs: 20, burst: 5, latencyMs: 20, oneWayMs: 1 });
    expect(sim.done).toBe(300);
    expect(sim.refused).toBeLessThan(300 / 3);
  });

  it("opens again once the provider stops refusing (the limit was lifted)", async () => {
    const sim = await simulate({ calls: 200, workers: 16, intervalMs: 20, burst: 1, latencyMs: 20, oneWayMs: 1, liftAfter: 60 });
    expect(sim.done).toBe(200);
    expect(sim.pacer.pacing).toBe(false);
  });
});

describe("withRetry with a pacing listener", () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(async () => {
    await fake.close();
  });
  afterEach(() => {
    fake.reset();
  });

  it("leaves a 429's wait to the gate: the retry goes back through pace (retry: true), not into a sleep of its own", async () => {
    const { default: OpenAI } = await import("openai");
    const client = new OpenAI({ apiKey: "sk-test-000000000000", baseURL: fake.openaiBaseURL, maxRetries: 0 });
    // A wait the test could not sit out: if withRetry slept it, the test would time out.
    fake.fail({ status: 429, times: 1, retryAfterMs: 60_000 });
    const heard: string[] = [];
    let n = 0;
    const listener = {
      pace: (_target: unknown, retry: boolean): PacedAttempt => {
        heard.push(`pace retry=${retry}`);
        return { at: ++n };
      },
      limited: (retryAfterMs: number | undefined, attempt?: PacedAttempt) => heard.push(`limited ${retryAfterMs} #${attempt?.at}`),
      succeeded: (attempt?: PacedAttempt) => heard.push(`succeeded #${attempt?.at}`),
    };
    const reply = await withRateListener(listener, () =>
      withRetry({ provider: "openai", model: "gpt-4o-mini" }, currentPolicy(), (signal) =>
        client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { signal })));
    expect(reply.choices[0]?.message.content).toContain("hi");
    expect(heard).toEqual(["pace retry=false", "limited 60000 #1", "pace retry=true", "succeeded #2"]);
  });
});

/** `count` examples of the sentiment task ("odd" in the sentence makes it negative). */
function sentences(count: number): FewShotExample[] {
  return Array.from({ length: count }, (_, n) => new FewShotExample({
    input: { sentence: `sentence ${n} is ${n % 2 === 1 ? "odd" : "even"}` }, output: { sentiment: n % 2 === 1 ? "negative" : "positive" },
  }));
}

describe("Evaluation against a provider that refuses requests (429)", () => {
  let fake: FakeProvider;
  let module: Module;
  beforeAll(async () => {
    fake = await startSentimentProvider();
  });
  beforeEach(async () => {
    const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-test-SECRET-123456", baseURL: fake.openaiBaseURL });
    module = new Predict(Classify).configure((c) => { c.lm = lm; });
    await module.call({ sentence: "warm-up" }); // loads the SDK before any refusal
    fake.reset();
  });
  afterAll(async () => {
    await fake.close();
  });
  afterEach(() => {
    LM.resetConfiguration();
    fake.rateLimit(null);
    fake.reset();
    resetConfiguration();
  });

  it("one request at a time (token bucket, burst 1): paces its calls: 0 failed examples and far fewer 429 answers than examples", async () => {
    fake.rateLimit({ requestsPerSecond: 100, burst: 1 });
    const report = await new Evaluation({ concurrency: 16, record: false, progress: false }).evaluate({ moduleInstance: module, testExamples: sentences(200) });
    expect(report.failures).toHaveLength(0);
    expect(report.accuracy).toBe(1);
    expect(fake.rateLimited).toBeGreaterThan(0);
    // Each call firing when its own wait ends gets about one 429 per example (over 200 here).
    expect(fake.rateLimited).toBeLessThan(200 / 2);
  });

  it("retry-after: 0: waits the backoff's minimum before each retry: 8 examples refused for 0.5 s make 2 requests each, not a burst per re-run", async () => {
    // Every request is refused with "retry-after: 0" for half a second, then answered.
    fake.fail({ status: 429, times: 10_000, retryAfter: 0 });
    let refused = 0;
    const window = setTimeout(() => {
      refused = fake.requests.length;
      fake.reset();
    }, 500);
    const report = await new Evaluation({ concurrency: 8, record: false, progress: false }).evaluate({ moduleInstance: module, testExamples: sentences(8) });
    clearTimeout(window);
    const requests = refused + fake.requests.length;
    expect(report.failures).toHaveLength(0);
    // Each example: refused once, then answered after the floor (750 ms with retryDelay 1 s). Without
    // the floor each example's call sent its 4 attempts back to back, again at each re-run (72 in all).
    expect(refused).toBe(8);
    expect(requests).toBe(16);
  });
});
