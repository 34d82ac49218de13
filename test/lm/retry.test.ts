import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { LMError } from "../../lib/errors.js";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { retryAfterFrom, classifyFailure } from "../../lib/lm/failure.js";
import { LM } from "../../lib/lm/lm.js";
import { backoffMs, retryFloorMs } from "../../lib/lm/retry.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_NAMES, TEST_KEY, withFakeProvider } from "./helpers.js";

const messages = [{ role: "user" as const, content: "hello" }];

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => {
  LM.resetConfiguration();
  LM.configure((c) => {
    c.retryDelay = 0.01;
    c.httpTimeout = 0.3;
    c.maxRetries = 3;
  });
});
afterEach(() => {
  LM.resetConfiguration();
  Instrumentation.reset();
});

async function failure(promise: Promise<unknown>): Promise<LMError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LMError);
    return error as LMError;
  }
  throw new Error("expected the call to fail");
}

describe.each(PROVIDER_NAMES)("retries through the %s SDK", (provider) => {
  it("retries a 429 after the retry-after the server asked for, then succeeds", async () => {
    fake.fail({ status: 429, times: 2, retryAfter: "0.05" }).reply("ok");
    const started = performance.now();
    const r = await lmFor(provider, fake).chat({ messages });
    expect(r.content).toBe("ok");
    expect(fake.requests).toHaveLength(3);
    // Two waits of 50 ms from retry-after (backoff alone would be 10 + 20 ms at most).
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });

  it("waits at least the backoff's minimum between retries when retry-after is 0 or negative", async () => {
    LM.configure((c) => { c.retryDelay = 0.1; }); // floor: 75 ms
    for (const retryAfter of ["0", "-5"]) {
      fake.reset();
      fake.fail({ status: 429, times: 3, retryAfter }).reply("ok");
      const started = performance.now();
      expect((await lmFor(provider, fake).chat({ messages })).content).toBe("ok");
      expect(fake.requests).toHaveLength(4);
      // Three waits of at least 75 ms; back to back they took a few ms.
      expect(performance.now() - started).toBeGreaterThanOrEqual(225);
    }
  });

  it("honours retry-after-ms", async () => {
    fake.fail({ status: 429, retryAfterMs: 5 }).reply("ok");
    expect((await lmFor(provider, fake).chat({ messages })).content).toBe("ok");
    expect(fake.requests).toHaveLength(2);
  });

  it("retries a 500 and gives up after maxRetries + 1 attempts with LMError", async () => {
    fake.fail({ status: 500, times: 10 });
    const error = await failure(lmFor(provider, fake).chat({ messages }));
    expect(fake.requests).toHaveLength(4);
    expect(error).toMatchObject({ status: 500, retryable: true, provider, attempts: 4 });
    expect(error.message).toContain("HTTP 500");
    expect(error.message).toContain("gave up after 4 attempts");
  });

  it("times out an attempt that hangs past httpTimeout and retries it", async () => {
    fake.hang().reply("late but fine");
    const started = performance.now();
    const r = await lmFor(provider, fake).chat({ messages });
    expect(r.content).toBe("late but fine");
    expect(fake.requests).toHaveLength(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("reports a timeout as a retryable LMError without status when every attempt hangs", async () => {
    LM.configure((c) => {
      c.maxRetries = 1;
      c.httpTimeout = 0.1;
    });
    fake.hang({ times: 2 });
    const error = await failure(lmFor(provider, fake).chat({ messages }));
    expect(fake.requests).toHaveLength(2);
    expect(error).toMatchObject({ status: undefined, retryable: true, attempts: 2 });
    const server = provider === "openai" ? fake.openaiBaseURL : fake.url;
    expect(error.message).toContain(`no reply from ${server.replace(/\/+$/, "")} within httpTimeout 0.1s`);
  });

  it("retries a dropped connection", async () => {
    fake.dropConnection({ times: 2 }).reply("ok");
    expect((await lmFor(provider, fake).chat({ messages })).content).toBe("ok");
    expect(fake.requests).toHaveLength(3);
  });

  it("names the server it could not reach, and never the key", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    LM.configure((c) => { c.maxRetries = 1; });
    const base = provider === "openai" ? `http://127.0.0.1:${closed}/v1` : `http://127.0.0.1:${closed}`;
    const error = await failure(lmFor(provider, fake, { baseURL: base }).chat({ messages }));
    expect(error.message).toContain(`connection to ${base} failed`);
    expect(error.message).not.toContain(TEST_KEY);
  });

  it("retries a body cut off half-way", async () => {
    fake.truncateBody().reply("whole");
    expect((await lmFor(provider, fake).chat({ messages })).content).toBe("whole");
    expect(fake.requests).toHaveLength(2);
  });

  it("does not retry a 400", async () => {
    fake.fail({ status: 400, times: 5 });
    const error = await failure(lmFor(provider, fake).chat({ messages }));
    expect(fake.requests).toHaveLength(1);
    expect(error).toMatchObject({ status: 400, retryable: false, provider, attempts: 1 });
    expect(error.message).toContain("not retried");
  });

  it("emits lm.request.start and lm.request.end for every attempt", async () => {
    const events: TypelmEvent[] = [];
    Instrumentation.subscribe(/^lm\.request\./, (e) => events.push(e));
    fake.fail({ status: 503 }).reply("ok");
    await lmFor(provider, fake).chat({ messages });
    expect(events.map((e) => `${e.name}#${e.payload["attempt"]}`)).toEqual([
      "lm.request.start#1", "lm.request.end#1", "lm.request.start#2", "lm.request.end#2",
    ]);
    expect(events[1]!.payload).toMatchObject({ provider, ok: false, status: 503, willRetry: true });
    expect(events[3]!.payload).toMatchObject({ provider, ok: true });
    expect(typeof events[3]!.payload["durationMs"]).toBe("number");
  });
});

describe("retry policy", () => {
  it("retries 408 and 409 but not 401, 403, 404 or 422", async () => {
    for (const status of [408, 409]) {
      fake.reset();
      fake.fail({ status }).reply("ok");
      await lmFor("openai", fake).chat({ messages });
      expect(fake.requests).toHaveLength(2);
    }
    for (const status of [401, 403, 404, 422]) {
      fake.reset();
      fake.fail({ status, times: 3 });
      await expect(lmFor("openai", fake).chat({ messages })).rejects.toMatchObject({ status, retryable: false });
      expect(fake.requests).toHaveLength(1);
    }
  });

  it("makes exactly one request when maxRetries is 0", async () => {
    LM.configure((c) => {
      c.maxRetries = 0;
    });
    fake.fail({ status: 500, times: 3 });
    await expect(lmFor("anthropic", fake).chat({ messages })).rejects.toMatchObject({ attempts: 1, retryable: true });
    expect(fake.requests).toHaveLength(1);
  });

  it("backs off exponentially with jitter between 75% and 100% of the step", () => {
    const noRetryAfter = { kind: "http" as const, status: 500, retryable: true, retryAfterMs: undefined, message: "" };
    expect(backoffMs(noRetryAfter, 1, 1, () => 0)).toBe(1000);
    expect(backoffMs(noRetryAfter, 2, 1, () => 0)).toBe(2000);
    expect(backoffMs(noRetryAfter, 3, 1, () => 1)).toBe(3000);
    expect(backoffMs(noRetryAfter, 20, 1, () => 0)).toBe(30_000);
    expect(backoffMs({ ...noRetryAfter, retryAfterMs: 1234 }, 3, 1, () => 0)).toBe(1234);
    // The server's wait, but never under the backoff's minimum (75% of retryDelay).
    expect(backoffMs({ ...noRetryAfter, retryAfterMs: 0 }, 1, 1, () => 0)).toBe(750);
    expect(backoffMs({ ...noRetryAfter, retryAfterMs: 20 }, 2, 0.2, () => 0)).toBe(150);
    expect(retryFloorMs(1)).toBe(750);
  });

  it("reads retry-after-ms, retry-after in seconds and retry-after as an HTTP date", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    expect(retryAfterFrom(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), now)).toBe(250);
    expect(retryAfterFrom(new Headers({ "retry-after": "2" }), now)).toBe(2000);
    expect(retryAfterFrom(new Headers({ "retry-after": "Sat, 21 Nov 2026 10:00:03 GMT" }), now)).toBe(3000);
    expect(retryAfterFrom(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(retryAfterFrom(new Headers({ "retry-after": "3600" }), now)).toBe(60_000);
    expect(retryAfterFrom(undefined)).toBeUndefined();
  });

  it("classifies errors that are not HTTP failures", () => {
    expect(classifyFailure(new TypeError("fetch failed"), false)).toMatchObject({ kind: "connection", retryable: true });
    expect(classifyFailure(new SyntaxError("Unexpected end of JSON input"), false)).toMatchObject({ kind: "invalid-response", retryable: true });
    expect(classifyFailure(new Error("boom"), false)).toMatchObject({ kind: "other", retryable: false });
    expect(classifyFailure(new Error("aborted"), true)).toMatchObject({ kind: "timeout", retryable: true });
  });
});
