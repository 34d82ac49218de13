import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Instrumentation, Predict, Signature, configure, resetConfiguration } from "../../lib/index.js";
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
});
