import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Instrumentation, Predict, Signature, configure, resetConfiguration } from "../../lib/index.js";
import { registerSecret } from "../../lib/instrument/redact.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const Echo = Signature.define({ name: "Echo", input: { text: z.string() }, output: { text: z.string() } });

afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
});

describe("Instrumentation", () => {
  it("delivers events by exact name with name, payload and timestamp", () => {
    const seen: unknown[] = [];
    Instrumentation.subscribe("custom.thing", (e) => seen.push(e));
    Instrumentation.emit("custom.thing", { n: 1 });
    Instrumentation.emit("custom.other", { n: 2 });
    expect(seen).toHaveLength(1);
    const e = seen[0] as { name: string; payload: { n: number }; timestamp: number };
    expect(e.name).toBe("custom.thing");
    expect(e.payload.n).toBe(1);
    expect(Math.abs(e.timestamp - Date.now())).toBeLessThan(5000);
  });

  it("delivers every matching event to a pattern subscriber, and stops after unsubscribe", () => {
    const names: string[] = [];
    const off = Instrumentation.subscribe(/^lm\./, (e) => names.push(e.name));
    Instrumentation.emit("lm.chat.start");
    Instrumentation.emit("prediction.start");
    off();
    Instrumentation.emit("lm.chat.end");
    expect(names).toEqual(["lm.chat.start"]);
  });

  it("never lets a throwing subscriber break a prediction", async () => {
    Instrumentation.subscribe(/.*/, () => { throw new Error("subscriber bug"); });
    const r = await new Predict(Echo).call({ text: "hi" }, { lm: new ScriptedLM([{ text: "hi" }]) });
    expect(r.text).toBe("hi");
    expect(Instrumentation.listenerFailures().length).toBeGreaterThan(0);
  });

  it("reports lm.chat.* and lm.tokens.used with token counts for each model call", async () => {
    const events: { name: string; payload: Record<string, unknown> }[] = [];
    Instrumentation.subscribe(/^lm\./, (e) => events.push(e));
    await new Predict(Echo).call({ text: "hi" }, { lm: new ScriptedLM([{ text: "hi" }]) });
    expect(events.map((e) => e.name)).toEqual(["lm.chat.start", "lm.chat.end", "lm.tokens.used"]);
    const used = events[2]!.payload;
    expect(used["inputTokens"]).toBeGreaterThan(10);
    expect(used["outputTokens"]).toBeGreaterThan(0);
    expect(used["estimatedCost"]).toBe(0);
    expect(used["provider"]).toBe("scripted");
  });

  it("the logger subscriber writes json lines at the configured level when switched on", async () => {
    const lines: string[] = [];
    configure((c) => {
      c.instrumentation.enabled = true;
      c.instrumentation.subscribers = ["logger"];
      c.logger.formatter = "json";
      c.logger.level = "info";
      c.logger.output = (l) => lines.push(l);
    });
    await new Predict(Echo).call({ text: "hi" }, { lm: new ScriptedLM([{ text: "hi" }]) });
    const parsed = lines.map((l) => JSON.parse(l) as { event: string; level: string });
    expect(parsed.map((p) => p.event)).toContain("prediction.end");
    expect(parsed.map((p) => p.event)).not.toContain("lm.chat.start"); // debug level, filtered out
    expect(parsed.every((p) => p.level === "info")).toBe(true);
  });

  it("the logger subscriber is silent when instrumentation is disabled", async () => {
    const lines: string[] = [];
    configure((c) => {
      c.instrumentation.enabled = false;
      c.instrumentation.subscribers = ["logger"];
      c.logger.output = (l) => lines.push(l);
    });
    await new Predict(Echo).call({ text: "hi" }, { lm: new ScriptedLM([{ text: "hi" }]) });
    expect(lines).toHaveLength(0);
  });

  it("the logger adds trace and span ids to every json and text line", async () => {
    const json: string[] = [];
    configure((c) => {
      c.instrumentation.enabled = true;
      c.instrumentation.subscribers = ["logger"];
      c.logger.formatter = "json";
      c.logger.level = "debug";
      c.logger.output = (l) => json.push(l);
    });
    await new Predict(Echo).call({ text: "hi" }, { lm: new ScriptedLM([{ text: "hi" }]) });
    const parsed = json.map((l) => JSON.parse(l) as { event: string; traceId: string; spanId: string; parentSpanId: string | null });
    expect(parsed.length).toBeGreaterThanOrEqual(6);
    for (const p of parsed) {
      expect(p.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(p.spanId).toMatch(/^[0-9a-f]{16}$/);
    }
    const chat = parsed.find((p) => p.event === "lm.chat.start")!;
    const prediction = parsed.find((p) => p.event === "prediction.start")!;
    expect(chat.parentSpanId).toBe(prediction.spanId);

    const text: string[] = [];
    configure((c) => {
      c.logger.formatter = "text";
      c.logger.output = (l) => text.push(l);
    });
    await new Predict(Echo).call({ text: "hi" }, { lm: new ScriptedLM([{ text: "hi" }]) });
    expect(text.length).toBeGreaterThanOrEqual(6);
    for (const line of text) expect(line).toMatch(/^\S+ [A-Z]+ \S+ trace=[0-9a-f]{32} span=[0-9a-f]{16}( |$)/);
  });

  it("an event outside any call is a root: fresh ids, parentSpanId null", () => {
    const seen: Record<string, unknown>[] = [];
    Instrumentation.subscribe("custom.thing", (e) => seen.push(e.payload));
    Instrumentation.emit("custom.thing", { n: 1 });
    Instrumentation.emit("custom.thing", { n: 2 });
    expect(seen[0]!.parentSpanId).toBeNull();
    expect(seen[0]!.traceId).not.toBe(seen[1]!.traceId);
  });
});

describe("secrets in event payloads", () => {
  const KEY = "sk-events-test-KEY-0123456789";
  /** `{ level: { level: … { secret } } }`, `depth` objects deep. */
  const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { level: nested(depth - 1, leaf) });

  it("a user subscriber never receives a registered key, at any depth, in values, keys, arrays, errors or Maps", () => {
    registerSecret(KEY);
    const received: unknown[] = [];
    Instrumentation.subscribe(/.*/, (e) => received.push(e.payload));
    Instrumentation.emit("custom.deep", { data: nested(12, `token ${KEY} inside`) });
    Instrumentation.emit("custom.deeper", { data: nested(200, KEY) });
    Instrumentation.emit("custom.shapes", {
      list: [[["Bearer " + KEY]]],
      [KEY]: "key as a field name",
      error: new Error(`auth failed for ${KEY}`),
      map: new Map([["k", KEY]]),
      headers: { Authorization: "Basic Zm9vOmJhcg==", "x-api-key": "anything" },
    });
    expect(received).toHaveLength(3);
    const text = JSON.stringify(received);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain("Zm9vOmJhcg==");
    expect(text).toContain("[REDACTED]");
    // The structure around the secret is kept up to the depth limit, and marked past it.
    expect(JSON.stringify(received[0])).toContain('"token [REDACTED] inside"');
    expect(JSON.stringify(received[1])).toContain("[Truncated]");
  });

  it("listeners get a redacted copy of the payload, never the caller's object", () => {
    const payload = { nested: { value: "original" } };
    const seen: string[] = [];
    Instrumentation.subscribe("custom.copy", (e) => {
      (e.payload.nested as { value: string }).value = "mutated";
    });
    Instrumentation.subscribe("custom.copy", (e) => seen.push((e.payload.nested as { value: string }).value));
    Instrumentation.emit("custom.copy", payload);
    expect(payload.nested.value).toBe("original");
    expect(seen).toEqual(["mutated"]); // listeners share one redacted copy, never the caller's object
  });

  it("a cyclic payload is delivered with the cycle marked, not a stack overflow", () => {
    const seen: unknown[] = [];
    Instrumentation.subscribe("custom.cycle", (e) => seen.push(e.payload));
    const a: Record<string, unknown> = { name: "a" };
    a.self = a;
    Instrumentation.emit("custom.cycle", { a });
    expect(seen).toEqual([expect.objectContaining({ a: { name: "a", self: "[Circular]" } })]);
  });
});
