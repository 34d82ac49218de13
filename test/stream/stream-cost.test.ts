// What keeps a stream's cost per chunk low, checked by behaviour: a waiting consumer gets one
// partial for all the chunks that arrive in one turn of the event loop (not one per chunk), with
// every field still reported; and a lone predictor's stream, which hands its sink to its model call
// directly rather than through AsyncLocalStorage, keeps its events apart from other streams and calls
// of the same predictor, while a subclass that awaits before its model call still streams.
import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Predict, Signature, type StreamEvent } from "../../lib/index.js";
import type { CallOptions } from "../../lib/module.js";
import { BaseLM } from "../../lib/lm/base.js";
import type { ChatOptions, LMRequest, LMResponse } from "../../lib/lm/types.js";
import { resetAfterEach } from "../helpers/scripted.js";
import { ChunkedLM } from "../helpers/chunked-lm.js";

resetAfterEach();

const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment of the sentence.",
  input: { sentence: z.string() },
  output: { sentiment: z.enum(["positive", "negative"]), confidence: z.number(), summary: z.string() },
});

const LONG = "The writer is delighted with the product and says so at length. ".repeat(6);

/** A model that hands its whole reply over in 4-character chunks within one turn of the event loop (as one network read). */
class OneTurnLM extends BaseLM {
  readonly provider = "test";
  readonly model = "one-turn";
  chunks = 0;
  constructor(private readonly reply: string) {
    super();
  }
  supportsStructuredOutputs(): boolean {
    return false;
  }
  protected async complete(_request: LMRequest, options?: ChatOptions): Promise<LMResponse> {
    // Through an async generator, as an SDK's stream hands out the events of one network read:
    // promise callbacks between two chunks, but no turn of the event loop.
    const reply = this.reply;
    async function* pieces(): AsyncGenerator<string> {
      for (let at = 0; at < reply.length; at += 4) yield reply.slice(at, at + 4);
    }
    for await (const piece of pieces()) {
      options?.onDelta?.(piece);
      this.chunks++;
    }
    const usage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    return { content: this.reply, usage, provider: this.provider, model: this.model, estimatedCost: 0, cached: false };
  }
}

const fieldsOf = (events: StreamEvent<any>[]): Array<[string, unknown]> =>
  events.flatMap((e) => (e.type === "field" ? [[e.name, e.value] as [string, unknown]] : []));

describe("stream cost per chunk", () => {
  it("a waiting consumer gets one partial per turn of the event loop, not one per chunk, and every field", async () => {
    const answer = { sentiment: "positive", confidence: 0.9, summary: LONG };
    const lm = new OneTurnLM("```json\n" + JSON.stringify(answer, null, 2) + "\n```");
    const s = new Predict(Classify).stream({ sentence: "x" }, { lm });
    const events: StreamEvent<any>[] = [];
    for await (const e of s) events.push(e);
    expect(lm.chunks).toBeGreaterThan(100);
    expect(fieldsOf(events)).toEqual([["sentiment", "positive"], ["confidence", 0.9], ["summary", LONG]]);
    // The consumer waits from the start: at most a partial on each side of each field and one at the end
    // (one per chunk, over 100, before partials were handed over once per turn).
    expect(events.filter((e) => e.type === "partial").length).toBeLessThanOrEqual(7);
    expect((await s.result).toJSON()).toEqual(answer);
  });

  it("streams of one predictor running at once, and a call() between them, keep their events apart", async () => {
    const predict = new Predict(Classify);
    const a = { sentiment: "positive", confidence: 0.9, summary: "first " + LONG };
    const b = { sentiment: "negative", confidence: 0.1, summary: "second " + LONG };
    const c = { sentiment: "negative", confidence: 0.5, summary: "third" };
    const lmA = new ChunkedLM([a]);
    const lmB = new ChunkedLM([b]);
    const sa = predict.stream({ sentence: "a" }, { lm: lmA });
    const called = predict.call({ sentence: "c" }, { lm: new ChunkedLM([c]) });
    const sb = predict.stream({ sentence: "b" }, { lm: lmB });
    const collect = async (s: AsyncIterable<StreamEvent<any>>): Promise<StreamEvent<any>[]> => {
      const out: StreamEvent<any>[] = [];
      for await (const e of s) out.push(e);
      return out;
    };
    const [ea, eb] = await Promise.all([collect(sa), collect(sb)]);
    expect(fieldsOf(ea)).toEqual([["sentiment", "positive"], ["confidence", 0.9], ["summary", a.summary]]);
    expect(fieldsOf(eb)).toEqual([["sentiment", "negative"], ["confidence", 0.1], ["summary", b.summary]]);
    for (const e of [...ea, ...eb]) if (e.type === "partial" && typeof e.partial.summary === "string") expect(e.partial.summary.startsWith("third")).toBe(false);
    expect((await called).toJSON()).toEqual(c);
    // Each stream's fields came while its own reply was streaming.
    expect(lmA.last.total).toBeGreaterThan(50);
    expect(lmB.last.total).toBeGreaterThan(50);
  });

  it("a predictor subclass that awaits before its model call still streams its fields while the reply arrives", async () => {
    class Slow extends Predict<any, any> {
      override async forward(inputs: any, options?: CallOptions): Promise<any> {
        await new Promise<void>((resolve) => setImmediate(resolve));
        return super.forward(inputs, options);
      }
    }
    const answer = { sentiment: "positive", confidence: 0.9, summary: LONG };
    const lm = new ChunkedLM([answer]);
    const s = new Slow(Classify).stream({ sentence: "x" }, { lm });
    const seen: Array<{ e: StreamEvent<any>; sent: number; total: number }> = [];
    for await (const e of s) seen.push({ e, sent: lm.last.sent, total: lm.last.total });
    expect(fieldsOf(seen.map((x) => x.e))).toEqual([["sentiment", "positive"], ["confidence", 0.9], ["summary", LONG]]);
    const first = seen.find((x) => x.e.type === "field")!;
    expect(first.sent).toBeLessThan(first.total / 2);
    expect((await s.result).toJSON()).toEqual(answer);
  });
});
