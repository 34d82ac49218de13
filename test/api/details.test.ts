/** API.md details not covered section by section elsewhere in test/api. Imports by package name (dist/). */
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { z } from "zod";
import {
  ChainOfThought, CodeAct, LM, Module, Predict, ProgramOfThought, Prompt, ReAct, Signature, Temporal, ValidationError,
  configure, resetConfiguration, t,
} from "typelm";
import { ScriptedLM, SimulatedLM, startFakeProvider } from "typelm/testing";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative", "neutral"]), note: z.string().nullish(), extra: z.number().optional() };
}
afterEach(() => { resetConfiguration(); LM.resetConfiguration(); });
const text = (lm: { requests: { messages: { content: string }[] }[] }) => lm.requests.map((r) => r.messages.map((m) => m.content).join("\n")).join("\n");

describe("details", () => {
  test("omitted optional/nullish outputs are null and never raise", async () => {
    const r = await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ sentiment: "positive" }]) });
    expect(r.note ?? null).toBeNull();
    expect(r.extra ?? null).toBeNull();
    expect(Classify.outputJsonSchema()).toMatchObject({ required: ["sentiment"] });
  });

  test("every predictor kind is a Module", () => {
    const Q = Signature.define({ name: "Q", description: "q", input: { q: z.string() }, output: { a: z.string() } });
    for (const p of [new Predict(Q), new ChainOfThought(Q), new ReAct(Q, { tools: [] }), new CodeAct(Q), new ProgramOfThought(Q)]) {
      expect(p).toBeInstanceOf(Module);
    }
  });

  test("invalid predictor configuration is a ValidationError at construction", () => {
    const Q = Signature.define({ name: "Q", description: "q", input: { q: z.string() }, output: { a: z.string() } });
    expect(() => new ReAct(Q, { maxIterations: 0 })).toThrow(ValidationError);
    expect(() => new CodeAct(Q, { maxIterations: -1 })).toThrow(ValidationError);
  });

  test("date-time inputs are written on the wire as YYYY-MM-DDTHH:MM:SS+HH:MM, instants with Z, dates as YYYY-MM-DD", async () => {
    class When extends Signature {
      static override description = "When.";
      static override input = { day: t.date(), local: t.dateTime(), at: z.date() };
      static override output = { ok: z.boolean() };
    }
    const lm = new ScriptedLM([{ ok: true }]);
    await new Predict(When).call({
      day: Temporal.PlainDate.from("2024-02-29"),
      local: Temporal.ZonedDateTime.from("2024-03-01T10:00:00+02:00[+02:00]"),
      at: new Date("2024-03-01T08:00:00Z"),
    }, { lm });
    const sent = text(lm);
    expect(sent).toContain("2024-02-29");
    expect(sent).toContain("2024-03-01T10:00:00+02:00");
    expect(sent).toMatch(/2024-03-01T08:00:00(\.000)?Z/);
  });

  test("LM schemaFormat reaches the prompt; Prompt.fromSignature's schemaFormat overrides the LM's choice", async () => {
    const lm = new ScriptedLM([{ sentiment: "positive" }], { schemaFormat: "baml" });
    await new Predict(Classify).call({ sentence: "x" }, { lm });
    expect(lm.requests[0]!.messages[0]!.content).toMatch(/class \w*Output \{/);
    const json = Prompt.fromSignature(Classify, { schemaFormat: "json" }).system();
    expect(json).not.toMatch(/class \w*Output \{/);
  });

  test("SimulatedLM writes an object reply in the prompt's data format (TOON)", async () => {
    const lm = new SimulatedLM({ dataFormat: "toon", rules: [{ phrase: "classify the sentiment", answer: () => ({ sentiment: "negative" }) }] });
    const r = await new Predict(Classify).call({ sentence: "x" }, { lm });
    expect(r.sentiment).toBe("negative");
    expect(text(lm)).toContain("```toon");
  });

  test("logger is switched by c.instrumentation.enabled; text formatter", async () => {
    const lines: string[] = [];
    const spy = jest.spyOn(process.stderr, "write").mockImplementation((chunk: any) => { lines.push(String(chunk)); return true; });
    try {
      configure((c) => { c.instrumentation.enabled = false; c.instrumentation.subscribers = ["logger"]; c.logger.level = "debug"; });
      await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ sentiment: "positive" }]) });
      expect(lines.filter((l) => l.includes("prediction."))).toEqual([]);
      configure((c) => { c.instrumentation.enabled = true; c.logger.formatter = "text"; c.logger.level = "debug"; });
      await new Predict(Classify).call({ sentence: "x" }, { lm: new ScriptedLM([{ sentiment: "positive" }]) });
    } finally { spy.mockRestore(); resetConfiguration(); }
    const hits = lines.filter((l) => l.includes("prediction.end"));
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]!.trim().startsWith("{")).toBe(false);
  });

  test("a 429 with retry-after is retried through the SDK and then succeeds", async () => {
    const fake = await startFakeProvider();
    try {
      LM.configure((c) => { c.maxRetries = 2; c.retryDelay = 0; });
      fake.fail({ status: 429, times: 1, retryAfterMs: 50 }).reply({ sentiment: "neutral" });
      const started = Date.now();
      const r = await new Predict(Classify).call({ sentence: "x" }, { lm: new LM("openai/gpt-4o-mini", { apiKey: "k", baseURL: fake.openaiBaseURL }) });
      expect(r.sentiment).toBe("neutral");
      expect(fake.requests).toHaveLength(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    } finally { await fake.close(); }
  });
});
