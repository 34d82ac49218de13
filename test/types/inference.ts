// Type-level tests: compiled by `tsc --noEmit` (npm run typecheck, .ci/run), never executed.
// Each `@ts-expect-error` line must fail to compile; if inference broke and it compiled, tsc reports
// "Unused '@ts-expect-error' directive" and the type-check fails.
import { z } from "zod";
import { ChainOfThought, Predict, Signature, t, Temporal } from "../../lib/index.js";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string(), lang: z.string().default("en"), hint: z.string().optional() };
  static override output = {
    sentiment: z.enum(["positive", "negative", "neutral"]),
    confidence: z.number().default(1.0),
    note: z.string().nullable(),
    due: t.date(),
    tags: z.array(z.string()),
  };
}

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function assertType<T extends true>(_: T): void {}

export async function inference(): Promise<void> {
  const predict = new Predict(Classify);
  const r = await predict.call({ sentence: "I love it" });

  assertType<Equal<typeof r.sentiment, "positive" | "negative" | "neutral">>(true);
  assertType<Equal<typeof r.confidence, number>>(true);
  assertType<Equal<typeof r.note, string | null>>(true);
  assertType<Equal<typeof r.due, Temporal.PlainDate>>(true);
  assertType<Equal<typeof r.tags, string[]>>(true);

  // Defaulted and optional inputs may be omitted or given.
  await predict.call({ sentence: "x", lang: "fr", hint: "h" });

  // @ts-expect-error — a wrong input key
  await predict.call({ sentense: "typo" });
  // @ts-expect-error — a missing required input
  await predict.call({ lang: "fr" });
  // @ts-expect-error — a wrong input type
  await predict.call({ sentence: 42 });

  // @ts-expect-error — an output's type misused: sentiment is a string union, not a number
  const n: number = r.sentiment;
  // @ts-expect-error — an output the signature does not declare
  r.answer;
  // @ts-expect-error — an enum compared with a value outside it
  if (r.sentiment === "ecstatic") return;

  const cot = new ChainOfThought(Classify);
  const c = await cot.call({ sentence: "x" });
  assertType<Equal<typeof c.reasoning, string>>(true);
  assertType<Equal<typeof c.sentiment, "positive" | "negative" | "neutral">>(true);

  const Dated = Signature.define({ name: "Dated", input: { day: t.date() }, output: { ok: z.boolean() } });
  // Date inputs may be ISO strings or Temporal values.
  await new Predict(Dated).call({ day: "2024-01-01" });
  await new Predict(Dated).call({ day: Temporal.PlainDate.from("2024-01-01") });
  // @ts-expect-error — a number is not a date
  await new Predict(Dated).call({ day: 20240101 });
  void n;
}

export async function nestedOptionals(): Promise<void> {
  const Nested = Signature.define({
    name: "Nested",
    output: { owner: z.object({ name: z.string(), nick: z.string().optional(), tags: z.array(z.object({ v: z.string().optional() })) }) },
  });
  const r = await new Predict(Nested).call({});
  assertType<Equal<typeof r.owner.nick, string | null>>(true);
  assertType<Equal<typeof r.owner.tags[number]["v"], string | null>>(true);
  assertType<Equal<typeof r.owner.name, string>>(true);
}
