import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { ChainOfThought, Module, OutputError, Predict, Prediction, Signature, type StreamEvent } from "../../lib/index.js";
import { resetAfterEach } from "../helpers/scripted.js";
import { ChunkedLM } from "../helpers/chunked-lm.js";

resetAfterEach();

const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment of the sentence.",
  input: { sentence: z.string() },
  output: {
    sentiment: z.enum(["positive", "negative"]),
    confidence: z.number(),
    summary: z.string(),
  },
});

const LONG = "The writer is delighted with the product and says so at length. ".repeat(6);
const answer = { sentiment: "positive", confidence: 0.9, summary: LONG };

/** Every event of a stream, each with how many chunks its model call had sent when the event arrived. */
async function collect(lm: ChunkedLM, stream: AsyncIterable<StreamEvent<any>>): Promise<Array<StreamEvent<any> & { sent: number; total: number }>> {
  const seen: Array<StreamEvent<any> & { sent: number; total: number }> = [];
  for await (const e of stream) seen.push({ ...e, sent: lm.last.sent, total: lm.last.total });
  return seen;
}

function fields(events: StreamEvent<any>[]): Array<[string, unknown, string]> {
  return events.flatMap((e) => (e.type === "field" ? [[e.name, e.value, e.path] as [string, unknown, string]] : []));
}

describe("Predict.stream", () => {
  for (const [label, options] of [
    ["JSON, Enhanced Prompting", {}],
    ["TOON, Enhanced Prompting", { dataFormat: "toon" as const }],
    ["native structured output", { structuredOutputs: true }],
  ] as const) {
    it(`${label}: a field event arrives while later chunks are still unsent; result equals call()'s`, async () => {
      const lm = new ChunkedLM([answer], options);
      const s = new Predict(Classify).stream({ sentence: "I love it" }, { lm });
      const events = await collect(lm, s);
      const r = await s.result;

      const sentiment = events.find((e) => e.type === "field" && e.name === "sentiment")!;
      expect(sentiment).toMatchObject({ value: "positive", path: "" });
      expect(sentiment.sent).toBeLessThan(sentiment.total / 2);
      expect(fields(events)).toEqual([["sentiment", "positive", ""], ["confidence", 0.9, ""], ["summary", LONG, ""]]);
      // The summary grows through partial events.
      const summaries = events.flatMap((e) => (e.type === "partial" && typeof e.partial.summary === "string" ? [e.partial.summary as string] : []));
      expect(summaries.length).toBeGreaterThan(10);
      for (let i = 1; i < summaries.length; i++) expect(summaries[i]!.startsWith(summaries[i - 1]!)).toBe(true);
      expect(summaries.some((t) => t.length > 0 && t.length < LONG.length)).toBe(true);
      // Before its field event the sentiment shows as the text read so far; from then on, converted.
      const at = events.indexOf(sentiment);
      const before = events.slice(0, at).flatMap((e) => (e.type === "partial" && e.partial.sentiment !== undefined ? [e.partial.sentiment] : []));
      for (const text of before) expect("positive".startsWith(text as string)).toBe(true);
      const after = events.slice(at).filter((e) => e.type === "partial");
      expect(after.length).toBeGreaterThan(0);
      for (const e of after) expect(e.type === "partial" && e.partial.sentiment).toBe("positive");

      const expected = await new Predict(Classify).call({ sentence: "I love it" }, { lm: new ChunkedLM([answer], options) });
      expect(r).toBeInstanceOf(Prediction);
      expect(r.toJSON()).toEqual(expected.toJSON());
      expect(Prediction.meta(r)!.raw).toBe(Prediction.meta(expected)!.raw);
      expect(lm.last.threw).toBeUndefined();
    });
  }

  it("await result alone (no iteration) gives call()'s prediction", async () => {
    const lm = new ChunkedLM([answer]);
    const r = await new Predict(Classify).stream({ sentence: "x" }, { lm }).result;
    expect(r.toJSON()).toEqual({ sentiment: "positive", confidence: 0.9, summary: LONG });
    expect(lm.calls).toHaveLength(1);
  });

  it("events wait for a consumer that starts late, partials merged: a few events per field, not one per chunk", async () => {
    const lm = new ChunkedLM([answer]);
    const s = new Predict(Classify).stream({ sentence: "x" }, { lm });
    await s.result;
    const events: StreamEvent<any>[] = [];
    for await (const e of s) events.push(e);
    expect(lm.last.total).toBeGreaterThan(100);
    expect(fields(events)).toEqual([["sentiment", "positive", ""], ["confidence", 0.9, ""], ["summary", LONG, ""]]);
    // Between two field events at most one partial (the newest state).
    expect(events.length).toBeLessThanOrEqual(7);
    const last = events.filter((e) => e.type === "partial").pop()!;
    expect(last.type === "partial" && last.partial.summary).toBe(LONG);
  });

  it("a fenced JSON block after prose is read while streaming", async () => {
    const reply = "Here is my answer.\n```json\n" + JSON.stringify(answer) + "\n```\nDone.";
    const lm = new ChunkedLM([reply]);
    const s = new Predict(Classify).stream({ sentence: "x" }, { lm });
    const events = await collect(lm, s);
    expect(events.find((e) => e.type === "field" && e.name === "sentiment")!.sent).toBeLessThan(lm.last.total / 2);
    expect((await s.result).sentiment).toBe("positive");
  });

  it("JSON in prose (read only at the end, as call() does): fields are reported from the final prediction", async () => {
    const reply = "I think the answer is " + JSON.stringify(answer) + " as requested.";
    const lm = new ChunkedLM([reply]);
    const s = new Predict(Classify).stream({ sentence: "x" }, { lm });
    const events = await collect(lm, s);
    expect(fields(events)).toEqual([["sentiment", "positive", ""], ["confidence", 0.9, ""], ["summary", LONG, ""]]);
    for (const e of events) expect(e.sent).toBe(e.total);
  });

  for (const [label, options, reply] of [
    ["JSON", {}, JSON.stringify({ sentiment: "furious", confidence: 0.9, summary: LONG })],
    ["TOON", { dataFormat: "toon" as const }, "```toon\nsentiment: furious\nconfidence: 0.9\nsummary: \"" + LONG + "\"\n```"],
  ] as const) {
    it(`${label}: a field that fails conversion fails fast: onDelta throws OutputError, the request stops, stream and result reject`, async () => {
      const lm = new ChunkedLM([reply], options);
      const s = new Predict(Classify).stream({ sentence: "x" }, { lm });
      const iterated = collect(lm, s);
      await expect(iterated).rejects.toBeInstanceOf(OutputError);
      await expect(s.result).rejects.toThrow(/sentiment/);
      expect(lm.last.threw).toBeInstanceOf(OutputError);
      expect(lm.last.sent).toBeLessThan(lm.last.total / 2);
      // call() on the whole reply rejects the same field.
      await expect(new Predict(Classify).call({ sentence: "x" }, { lm: new ChunkedLM([reply], options) })).rejects.toThrow(/sentiment/);
    });
  }

  it("signal aborts the request: stream and result reject with AbortError", async () => {
    const lm = new ChunkedLM([answer]);
    const controller = new AbortController();
    lm.afterChunk = (call) => {
      if (call.sent === 3) controller.abort();
    };
    const s = new Predict(Classify).stream({ sentence: "x" }, { lm, signal: controller.signal });
    await expect(collect(lm, s)).rejects.toMatchObject({ name: "AbortError" });
    await expect(s.result).rejects.toMatchObject({ name: "AbortError" });
    await lm.last.ended;
    expect(lm.last.aborted).toBe(true);
    expect(lm.last.sent).toBe(3);
  });

  it("an already aborted signal makes no model call", async () => {
    const lm = new ChunkedLM([answer]);
    const controller = new AbortController();
    controller.abort();
    await expect(new Predict(Classify).stream({ sentence: "x" }, { lm, signal: controller.signal }).result).rejects.toMatchObject({ name: "AbortError" });
    expect(lm.requests).toHaveLength(0);
  });

  it("ChainOfThought streams reasoning as it grows, before the answer's fields", async () => {
    const reasoning = "First, the sentence says love. Love is a positive word. ".repeat(4);
    const lm = new ChunkedLM([{ reasoning, ...answer }]);
    const s = new ChainOfThought(Classify).stream({ sentence: "I love it" }, { lm });
    const events = await collect(lm, s);
    const growing = events.flatMap((e) => (e.type === "partial" && typeof e.partial.reasoning === "string" && e.partial.sentiment === undefined ? [e.partial.reasoning as string] : []));
    expect(growing.length).toBeGreaterThan(5);
    expect(growing[0]!.length).toBeLessThan(reasoning.length);
    expect(fields(events).map(([n]) => n)).toEqual(["reasoning", "sentiment", "confidence", "summary"]);
    expect((await s.result).reasoning).toBe(reasoning);
  });
});

describe("Module.stream", () => {
  class TwoSteps extends Module {
    first = new Predict(Classify);
    inner = [new Predict(Classify)];
    async forward(inputs: { sentence: string }) {
      const a = await this.first.call(inputs);
      const b = await this.inner[0]!.call({ sentence: a.summary as string });
      return { a: a.sentiment, b: b.sentiment };
    }
  }

  it("streams the events of every predictor it calls, tagged with their paths", async () => {
    const negative = { sentiment: "negative", confidence: 0.2, summary: "meh" };
    const lm = new ChunkedLM([answer, negative]);
    const program = new TwoSteps().configure((c) => (c.lm = lm));
    const s = program.stream({ sentence: "x" });
    const events = await collect(lm, s);
    expect(fields(events)).toEqual([
      ["sentiment", "positive", "first"], ["confidence", 0.9, "first"], ["summary", LONG, "first"],
      ["sentiment", "negative", "inner[0]"], ["confidence", 0.2, "inner[0]"], ["summary", "meh", "inner[0]"],
    ]);
    expect(new Set(events.filter((e) => e.type === "partial").map((e) => e.path))).toEqual(new Set(["first", "inner[0]"]));
    expect(await s.result).toEqual({ a: "positive", b: "negative" });
    // The same module called without a stream: no onDelta reaches the model.
    const plain = new ChunkedLM([answer, negative]);
    await new TwoSteps().configure((c) => (c.lm = plain)).call({ sentence: "x" });
    expect(plain.calls).toHaveLength(0);
  });
});
