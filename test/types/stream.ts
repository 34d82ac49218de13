// Type-level tests of stream(): compiled by `tsc --noEmit`, never executed.
import { z } from "zod";
import { ChainOfThought, Module, Predict, Signature, type PredictionStream, type StreamEvent } from "../../lib/index.js";

class Classify extends Signature {
  static override description = "Classify.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]), tags: z.array(z.string()) };
}

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function assertType<T extends true>(_: T): void {}

export async function predictStream(signal: AbortSignal): Promise<void> {
  const s = new Predict(Classify).stream({ sentence: "x" }, { signal });
  for await (const e of s) {
    if (e.type === "partial") {
      assertType<Equal<typeof e.partial.sentiment, "positive" | "negative" | undefined>>(true);
      assertType<Equal<typeof e.partial.tags, string[] | undefined>>(true);
    }
    if (e.type === "field") assertType<Equal<typeof e.name, string>>(true);
    if (e.type === "step") assertType<Equal<typeof e.path, string>>(true);
  }
  const r = await s.result;
  assertType<Equal<typeof r.sentiment, "positive" | "negative">>(true);
  // @ts-expect-error the inputs are checked as for call()
  new Predict(Classify).stream({ sentence: 1 });

  const cot = await new ChainOfThought(Classify).stream({ sentence: "x" }).result;
  assertType<Equal<typeof cot.reasoning, string>>(true);
}

class Pipeline extends Module<{ q: string }, { answer: string }> {
  async forward(inputs: { q: string }) {
    return { answer: inputs.q };
  }
}

export async function moduleStream(): Promise<void> {
  const s: PredictionStream<{ answer: string }> = new Pipeline().stream({ q: "x" });
  const events: StreamEvent[] = [];
  for await (const e of s) events.push(e);
  assertType<Equal<Awaited<typeof s.result>["answer"], string>>(true);
}
