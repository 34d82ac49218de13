// program.batch with live calls: order, failures as results, the concurrency bound, rate-limit
// adaptation (the evaluation's), the abort signal, progress events and option errors.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Instrumentation, LM, LMError, Module, OutputError, Predict, Prediction, resetConfiguration, Signature, ValidationError } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { startFakeProvider, type FakeProvider } from "../../lib/testing/fake-provider.js";

const Echo = Signature.define({ name: "Echo", description: "Repeat the number.", input: { n: z.number() }, output: { n: z.number() } });

/** A promise and its resolver, for calls the test lets finish in the order it chooses. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => { open = resolve; });
  return { promise, open };
}

/** Waits (on events, not time) until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

/** A module whose calls wait on gates the test opens; it counts the calls in flight. */
class Gated extends Module<{ n: number }, { n: number }> {
  running = 0;
  most = 0;
  started: number[] = [];
  readonly gates = new Map<number, ReturnType<typeof gate>>();
  gateOf(n: number) {
    let g = this.gates.get(n);
    if (g === undefined) this.gates.set(n, (g = gate()));
    return g;
  }
  async forward({ n }: { n: number }): Promise<{ n: number }> {
    this.started.push(n);
    this.running++;
    this.most = Math.max(this.most, this.running);
    try {
      await this.gateOf(n).promise;
      if (n === 13) throw new Error("thirteen is unlucky");
      return { n };
    } finally {
      this.running--;
    }
  }
}

afterEach(() => {
  resetConfiguration();
  LM.resetConfiguration();
  Instrumentation.reset();
});

describe("program.batch (live calls)", () => {
  it("returns the results in the order of the inputs when the calls finish in the reverse order", async () => {
    const program = new Gated();
    const inputs = Array.from({ length: 6 }, (_, n) => ({ n }));
    const pending = program.batch(inputs, { concurrency: 6, progress: false });
    await until(() => program.started.length === 6);
    for (let n = 5; n >= 0; n--) {
      const before = program.running;
      program.gateOf(n).open();
      await until(() => program.running === before - 1);
    }
    const results = await pending;
    expect(results).toEqual(inputs.map((input) => ({ ok: true, value: input })));
  });

  it("a failed input is an { ok: false, error } at its place; the batch does not throw and the others are ok", async () => {
    const lm = new ScriptedLM((request) => (request.inputs?.n === 2 ? "no JSON here" : { n: request.inputs?.n }));
    const program = new Predict(Echo).configure((c) => { c.lm = lm; });
    const results = await program.batch([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }], { progress: false });
    expect(results.map((r) => r.ok)).toEqual([true, true, false, true]);
    const failed = results[2]!;
    expect(failed.ok === false && failed.error).toBeInstanceOf(OutputError);
    for (const i of [0, 1, 3]) {
      const r = results[i]!;
      expect(r.ok && r.value).toBeInstanceOf(Prediction);
      expect(r.ok && r.value.n).toBe(i);
    }
  });

  it("never runs more than `concurrency` inputs at once, and reaches it", async () => {
    const program = new Gated();
    const inputs = Array.from({ length: 20 }, (_, n) => ({ n }));
    const pending = program.batch(inputs, { concurrency: 3, progress: false });
    for (let n = 0; n < 20; n++) {
      // Inputs 0 to n-1 have been let finish: n to n+2 run, and the next waits for one of them.
      await until(() => program.started.length >= Math.min(20, n + 3));
      expect(program.started.length).toBe(Math.min(20, n + 3));
      expect(program.running).toBe(Math.min(3, 20 - n));
      program.gateOf(n).open();
    }
    const results = await pending;
    expect(program.most).toBe(3);
    expect(results.filter((r) => r.ok)).toHaveLength(19);
    const thirteen = results[13]!;
    expect(thirteen.ok === false && (thirteen.error as Error).message).toBe("thirteen is unlucky");
  });

  it("aborting the signal: inputs not started resolve as AbortError and are never called; the ones running finish and keep their result", async () => {
    const program = new Gated();
    const controller = new AbortController();
    const inputs = Array.from({ length: 10 }, (_, n) => ({ n }));
    const pending = program.batch(inputs, { concurrency: 2, signal: controller.signal, progress: false });
    await until(() => program.started.length === 2);
    program.gateOf(0).open();
    await until(() => program.started.length === 3);
    // Inputs 1 and 2 are running; 3 to 9 have not started.
    controller.abort();
    program.gateOf(1).open();
    program.gateOf(2).open();
    const results = await pending;
    expect(program.started).toEqual([0, 1, 2]);
    expect(results.slice(0, 3)).toEqual([{ ok: true, value: { n: 0 } }, { ok: true, value: { n: 1 } }, { ok: true, value: { n: 2 } }]);
    for (const r of results.slice(3)) {
      expect(r.ok).toBe(false);
      expect(r.ok === false && (r.error as Error).name).toBe("AbortError");
      expect(r.ok === false && (r.error as Error).message).toMatch(/aborted before this input started/);
    }
    // Already aborted: nothing is called.
    const none = new Gated();
    const again = await none.batch(inputs, { signal: controller.signal, progress: false });
    expect(none.started).toEqual([]);
    expect(again.every((r) => r.ok === false && (r.error as Error).name === "AbortError")).toBe(true);
  });

  it("reports its progress as batch.start, one batch.input per input (running totals) and batch.end", async () => {
    const names: string[] = [];
    const inputs: { index: number; done: number; failures: number; ok: boolean }[] = [];
    let end: Record<string, unknown> = {};
    Instrumentation.subscribe(/^batch\./, (e) => {
      names.push(e.name);
      if (e.name === "batch.input") inputs.push(e.payload as (typeof inputs)[number]);
      if (e.name === "batch.end") end = e.payload;
    });
    const lm = new ScriptedLM((request) => (request.inputs?.n === 1 ? "broken" : { n: request.inputs?.n }));
    await new Predict(Echo).configure((c) => { c.lm = lm; }).batch([{ n: 0 }, { n: 1 }, { n: 2 }], { progress: false, name: "echoes" });
    expect(names[0]).toBe("batch.start");
    expect(names.at(-1)).toBe("batch.end");
    expect(inputs.map((p) => p.done)).toEqual([1, 2, 3]);
    expect(inputs.map((p) => p.index).sort()).toEqual([0, 1, 2]);
    expect(inputs.at(-1)!.failures).toBe(1);
    expect(end).toEqual(expect.objectContaining({ name: "echoes", total: 3, done: 3, failures: 1, aborted: false, concurrencyDecreases: 0 }));
  });

  it("a bad option is a ValidationError naming it, before any call", async () => {
    const lm = new ScriptedLM(() => ({ n: 1 }));
    const program = new Predict(Echo).configure((c) => { c.lm = lm; });
    const bad: [unknown, unknown, RegExp][] = [
      [[{ n: 1 }], { concurrency: 0 }, /Predict\.batch: concurrency must be a whole number ≥ 1 \(default 8\); received 0/],
      [[{ n: 1 }], { concurrency: 2.5 }, /concurrency must be a whole number ≥ 1 .*received 2\.5/],
      [[{ n: 1 }], { concurrency: "8" }, /concurrency must be a whole number ≥ 1 .*received "8"/],
      [[{ n: 1 }], { via: "openai-batch" }, /Predict\.batch: via must be "live" or "provider-batch"; received "openai-batch"/],
      [[{ n: 1 }], { concurrancy: 4 }, /Predict\.batch: unknown option "concurrancy"; expected concurrency, via, signal/],
      [[{ n: 1 }], { signal: "stop" }, /signal must be an AbortSignal; received "stop"/],
      [[{ n: 1 }], { providerBatch: { pollInterval: 1 } }, /providerBatch applies only with via: "provider-batch"/],
      [[{ n: 1 }], { via: "provider-batch", providerBatch: { maxWait: -1 } }, /Predict\.batch option providerBatch\.maxWait must be a positive number; received -1/],
      [[{ n: 1 }], { temperature: -1 }, /temperature must be a finite number >= 0; received -1/],
      [{ n: 1 }, {}, /Predict\.batch: inputsList must be an array of inputs; received object/],
    ];
    for (const [inputs, options, message] of bad) {
      const error = await program.batch(inputs as { n: number }[], options as object).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(message);
    }
    expect(lm.requests).toHaveLength(0);
  });
});

describe("program.batch against a rate-limited provider", () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider({ defaultReply: (request) => ({ n: Number(/"n":\s*(\d+)/.exec(request.messages.at(-1)?.content ?? "")?.[1]) }) });
  });
  afterAll(() => fake.close());

  it("a 429 lowers the concurrency (the evaluation's adaptation), an input whose LM gave up is run again, and every input ends ok", async () => {
    LM.configure((c) => { c.maxRetries = 0; });
    fake.reset();
    fake.fail({ status: 429, times: 3, retryAfterMs: 20 });
    const limits: { limit: number; cause: string }[] = [];
    let end: Record<string, unknown> = {};
    Instrumentation.subscribe("batch.concurrency", (e) => limits.push(e.payload as { limit: number; cause: string }));
    Instrumentation.subscribe("batch.end", (e) => { end = e.payload; });
    const program = new Predict(Echo).configure((c) => {
      c.lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-test-SECRET-batch", baseURL: fake.openaiBaseURL });
    });
    const inputs = Array.from({ length: 8 }, (_, n) => ({ n }));
    const results = await program.batch(inputs, { concurrency: 8, progress: false });
    expect(results.map((r) => r.ok && r.value.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(limits[0]).toEqual(expect.objectContaining({ limit: 4, cause: "decrease", retryAfterMs: 20 }));
    expect(end).toEqual(expect.objectContaining({ failures: 0, concurrencyDecreases: 1 }));
    // 8 answers and the 3 refusals.
    expect(fake.requests).toHaveLength(11);
  }, 60_000);

  it("a provider error for one input (400) is that input's result, not a thrown error", async () => {
    LM.configure((c) => { c.maxRetries = 0; });
    fake.reset();
    fake.fail({ status: 400, times: 1 });
    const program = new Predict(Echo).configure((c) => {
      c.lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-test-SECRET-batch", baseURL: fake.openaiBaseURL });
    });
    const results = await program.batch([{ n: 1 }, { n: 2 }], { concurrency: 1, progress: false });
    expect(results[0]!.ok === false && results[0]!.error).toBeInstanceOf(LMError);
    expect(results[1]).toEqual({ ok: true, value: expect.objectContaining({ n: 2 }) });
  }, 60_000);
});
