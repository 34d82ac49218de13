// Agents' streams through the real SDKs (openai, @anthropic-ai/sdk, ollama) against the fake
// provider, in each provider: ChainOfThought streams `reasoning`; ReAct, CodeAct and
// ProgramOfThought emit each step as it completes (before the next model request is sent) and
// stream their final answer (its field events while the provider is still sending); each result
// equals what call() returns on the same replies; abort and fail-fast close the connection early.
// ReAct and CodeAct run the text protocol here (`toolCalling: "text"`; their default, "auto", is
// native with these LMs): their native loops are tested in test/agents/*-native.test.ts.
import { beforeEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { ChainOfThought, CodeAct, OutputError, ProgramOfThought, ReAct, Signature, type StreamEvent } from "../../lib/index.js";
import { LM } from "../../lib/lm/lm.js";
import { tool } from "../../lib/tools/tool.js";
import type { FakeProvider } from "../../lib/testing/fake-provider.js";
import { lmFor, PROVIDER_NAMES, type ProviderName, withFakeProvider } from "../lm/helpers.js";

let fake: FakeProvider;
withFakeProvider((f) => (fake = f));
beforeEach(() => LM.resetConfiguration());

const LONG = Array.from({ length: 6 }, () => "the sum of two and forty is forty two as the add tool said").join(" and ");
/** A final reply slow enough (about 100 chunks, 5 ms apart) that its fields are seen before it ends. */
const SLOW = { stream: { chunkChars: 4, delayMs: 5 } };
/** A reply that would take over 10 s: abort and fail-fast must cut it off. */
const VERY_SLOW = { stream: { chunkChars: 4, delayMs: 100 } };

/** The reply text a model writes in Enhanced Prompting with JSON. */
const json = (value: Record<string, unknown>): string => "```json\n" + JSON.stringify(value, null, 2) + "\n```";

const Question = Signature.define({
  name: "Question",
  description: "Answer the question using the tools.",
  input: { question: z.string() },
  output: { answer: z.string() },
});

const add = tool({ name: "add", description: "Adds two numbers.", input: { a: z.number(), b: z.number() }, call: ({ a, b }) => a + b });

/** One event as the consumer saw it, with what the fake had received and sent at that moment. */
interface Seen {
  event: StreamEvent<any>;
  /** Requests the fake had received. */
  requests: number;
  /** The last streamed reply: chunks sent of how many, and whether it had ended. */
  sent: number;
  chunks: number;
  ended: boolean;
}

async function consume(stream: AsyncIterable<StreamEvent<any>>): Promise<Seen[]> {
  const seen: Seen[] = [];
  for await (const event of stream) {
    const last = fake.streams[fake.streams.length - 1];
    seen.push({ event, requests: fake.requests.length, sent: last?.sent ?? 0, chunks: last?.chunks ?? 0, ended: last?.ended ?? false });
  }
  return seen;
}

const stepsOf = (seen: Seen[]) => seen.filter((s) => s.event.type === "step");
const fieldsAt = (seen: Seen[], path: string) =>
  seen.filter((s) => s.event.type === "field" && s.event.path === path).map((s) => s.event.type === "field" && [s.event.name, s.event.value]);
const partialsOf = (seen: Seen[], path: string, name: string): string[] =>
  seen.flatMap((s) => (s.event.type === "partial" && s.event.path === path && typeof s.event.partial[name] === "string" ? [s.event.partial[name] as string] : []));

describe.each(PROVIDER_NAMES)("%s: agents stream through the SDK", (provider: ProviderName) => {
  const lm = (): LM => lmFor(provider, fake);

  it("ChainOfThought streams its reasoning before its answer; result equals call()'s", async () => {
    const Classify = Signature.define({
      name: "Classify", description: "Classify the sentiment.", input: { sentence: z.string() },
      output: { sentiment: z.enum(["positive", "negative"]) },
    });
    const reply = json({ reasoning: LONG, sentiment: "positive" });
    fake.reply(reply, SLOW);
    const s = new ChainOfThought(Classify).stream({ sentence: "I love it" }, { lm: lm() });
    const seen = await consume(s);
    const result = await s.result;
    expect(fake.requests[0]!.body.stream).toBe(true);
    const reasoning = partialsOf(seen, "", "reasoning");
    expect(reasoning.filter((r) => r.length > 0 && r.length < LONG.length).length).toBeGreaterThan(2);
    expect(fieldsAt(seen, "")).toEqual([["reasoning", LONG], ["sentiment", "positive"]]);
    const field = seen.find((s) => s.event.type === "field" && s.event.name === "reasoning")!;
    expect(field.ended).toBe(false);

    fake.reply(reply);
    const called = await new ChainOfThought(Classify).call({ sentence: "I love it" }, { lm: lm() });
    expect(result.toJSON()).toEqual(called.toJSON());
  });

  const reactReplies = (): Array<[string, object]> => [
    [json({ thought: "Add them.", action: "add", toolInput: { a: 2, b: 40 } }), {}],
    [json({ thought: "I have it.", action: "finish", toolInput: {} }), {}],
    [json({ answer: LONG }), SLOW],
  ];

  it("ReAct: each step before the next request is sent, the final answer while it streams; result equals call()'s", async () => {
    for (const [reply, options] of reactReplies()) fake.reply(reply, options);
    const s = new ReAct(Question, { tools: [add], toolCalling: "text" }).stream({ question: "2 + 40?" }, { lm: lm() });
    const seen = await consume(s);
    const result = await s.result;
    expect(fake.requests.every((r) => r.body.stream === true)).toBe(true);
    const steps = stepsOf(seen);
    expect(steps.map((s) => [s.event.path, s.event.type === "step" && s.event.step])).toEqual(result.history.map((h) => ["", h]));
    expect(result.history.map((h) => h.observation)).toEqual([42, null]);
    // Step 1 is seen before the second step's request reaches the provider, step 2 before the extraction's.
    expect(steps.map((s) => s.requests)).toEqual([1, 2]);
    expect(fieldsAt(seen, "step")).toEqual([
      ["thought", "Add them."], ["action", "add"], ["toolInput", { a: 2, b: 40 }],
      ["thought", "I have it."], ["action", "finish"], ["toolInput", {}],
    ]);
    // The final answer streams: partials grow, and its field event comes before its reply ended.
    expect(partialsOf(seen, "extract", "answer").filter((a) => a.length > 0 && a.length < LONG.length).length).toBeGreaterThan(2);
    expect(fieldsAt(seen, "extract")).toEqual([["answer", LONG]]);
    const answer = seen.find((s) => s.event.type === "field" && s.event.path === "extract")!;
    expect(answer.requests).toBe(3);
    expect(answer.ended).toBe(false);

    for (const [reply] of reactReplies()) fake.reply(reply);
    const called = await new ReAct(Question, { tools: [add], toolCalling: "text" }).call({ question: "2 + 40?" }, { lm: lm() });
    expect(result.toJSON()).toEqual(called.toJSON());
    expect(result.history).toEqual(called.history);
  });

  it("ReAct: a malformed step costs an iteration as in call(), with the same observation", async () => {
    const replies: Array<[string, object]> = [
      [json({ thought: "Add them.", action: "add", toolInput: "two and forty" }), SLOW],
      ...reactReplies(),
    ];
    for (const [reply, options] of replies) fake.reply(reply, options);
    const s = new ReAct(Question, { tools: [add], toolCalling: "text" }).stream({ question: "2 + 40?" }, { lm: lm() });
    const seen = await consume(s);
    const result = await s.result;
    expect(stepsOf(seen).map((s) => s.requests)).toEqual([1, 2, 3]);
    for (const [reply] of replies) fake.reply(reply);
    const called = await new ReAct(Question, { tools: [add], toolCalling: "text" }).call({ question: "2 + 40?" }, { lm: lm() });
    expect(result.history).toEqual(called.history);
    expect(result.toJSON()).toEqual(called.toJSON());
  });

  it("CodeAct: each step (with its code's output) before the next request, the final answer while it streams; result equals call()'s", async () => {
    const Task = Signature.define({ name: "Task", description: "Compute.", input: { n: z.number() }, output: { answer: z.number(), explanation: z.string() } });
    const replies: Array<[string, object]> = [
      [json({ thought: "Double n.", code: "const d = inputs.n * 2;\nconsole.log(d);", finished: false }), {}],
      [json({ thought: "Done.", code: "console.log(d + 1)", finished: true }), {}],
      [json({ answer: 43, explanation: LONG, solution: "n * 2 + 1" }), SLOW],
    ];
    for (const [reply, options] of replies) fake.reply(reply, options);
    const s = new CodeAct(Task, { toolCalling: "text" }).stream({ n: 21 }, { lm: lm() });
    const seen = await consume(s);
    const result = await s.result;
    const steps = stepsOf(seen);
    expect(steps.map((s) => s.event.type === "step" && s.event.step)).toEqual(result.history);
    expect(result.history.map((h) => h.output)).toEqual(["42\n", "43\n"]);
    expect(steps.map((s) => s.requests)).toEqual([1, 2]);
    expect(fieldsAt(seen, "extract")).toEqual([["answer", 43], ["explanation", LONG], ["solution", "n * 2 + 1"]]);
    const answer = seen.find((s) => s.event.type === "field" && s.event.path === "extract" && s.event.name === "answer")!;
    expect(answer.ended).toBe(false);
    expect(answer.sent).toBeLessThan(answer.chunks / 2);

    for (const [reply] of replies) fake.reply(reply);
    const called = await new CodeAct(Task, { toolCalling: "text" }).call({ n: 21 }, { lm: lm() });
    expect(result.toJSON()).toEqual(called.toJSON());
    expect(result.history).toEqual(called.history);
  });

  it("ProgramOfThought: each attempt before the repair request is sent, the programs streamed; result equals call()'s", async () => {
    const Sum = Signature.define({ name: "Sum", description: "Add.", input: { a: z.number(), b: z.number() }, output: { total: z.number() } });
    const comment = "// " + LONG + "\n";
    const replies: Array<[string, object]> = [
      [json({ code: comment + "answer({ total: inputs.a + inputs.c.value })" }), SLOW],
      [json({ code: comment + "answer({ total: inputs.a + inputs.b })" }), SLOW],
    ];
    for (const [reply, options] of replies) fake.reply(reply, options);
    const s = new ProgramOfThought(Sum).stream({ a: 1, b: 2 }, { lm: lm() });
    const seen = await consume(s);
    const result = await s.result;
    expect(result.total).toBe(3);
    const steps = stepsOf(seen);
    expect(steps.map((s) => s.event.type === "step" && s.event.step)).toEqual(result.attempts);
    expect(steps.map((s) => (s.event.type === "step" && (s.event.step as { error: string | null }).error === null))).toEqual([false, true]);
    expect(steps[0]!.requests).toBe(1);
    expect(partialsOf(seen, "generate", "code").filter((c) => c.length > 0 && c.length < comment.length).length).toBeGreaterThan(2);
    expect(fieldsAt(seen, "repair")).toEqual([["code", comment + "answer({ total: inputs.a + inputs.b })"]]);

    for (const [reply] of replies) fake.reply(reply);
    const called = await new ProgramOfThought(Sum).call({ a: 1, b: 2 }, { lm: lm() });
    expect(result.toJSON()).toEqual(called.toJSON());
    expect(result.attempts).toEqual(called.attempts);
  });

  it("ReAct aborts on the signal during its final answer: AbortError, the connection closed early, no further request", async () => {
    const [first, second] = reactReplies();
    fake.reply(first![0]).reply(second![0]).reply(json({ answer: LONG }), VERY_SLOW);
    const controller = new AbortController();
    const s = new ReAct(Question, { tools: [add], toolCalling: "text" }).stream({ question: "2 + 40?" }, { lm: lm(), signal: controller.signal });
    const error = await (async () => {
      for await (const e of s) if (e.type === "partial" && e.path === "extract") controller.abort();
    })().then(() => undefined, (e: unknown) => e);
    expect((error as Error).name).toBe("AbortError");
    await expect(s.result).rejects.toMatchObject({ name: "AbortError" });
    await fake.whenClosedEarly(1);
    expect(fake.requests).toHaveLength(3);
    expect(fake.streams[2]!.sent).toBeLessThan(fake.streams[2]!.chunks / 4);
  });

  it("CodeAct fails fast on a final answer that cannot be converted: OutputError, the connection closed early, no retry", async () => {
    const Task = Signature.define({ name: "Task", description: "Compute.", input: { n: z.number() }, output: { answer: z.number(), explanation: z.string() } });
    fake.reply(json({ thought: "Done.", code: "console.log(inputs.n * 2)", finished: true }))
      .reply(json({ answer: "forty-two", explanation: LONG }), VERY_SLOW);
    const s = new CodeAct(Task, { toolCalling: "text" }).stream({ n: 21 }, { lm: lm() });
    const error = await s.result.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OutputError);
    expect((error as Error).message).toContain("answer");
    await fake.whenClosedEarly(1);
    expect(fake.requests).toHaveLength(2);
    expect(fake.streams[1]!.sent).toBeLessThan(fake.streams[1]!.chunks / 4);
  });
});

// The same through TOON and native structured outputs: steps and final answers in every data format.
type Mode = "toon" | "structured";
const MODE_CASES: [ProviderName, Mode][] = PROVIDER_NAMES.flatMap((p) => (["toon", "structured"] as const).map((m): [ProviderName, Mode] => [p, m]));

/** The ReAct replies (two steps, the extraction) as the model writes them in `mode`, TOON by hand. */
function reactIn(mode: Mode): Array<string | Record<string, unknown>> {
  if (mode === "structured") {
    return [
      { thought: "Add them.", action: "add", toolInput: { a: 2, b: 40 } },
      { thought: "I have it.", action: "finish", toolInput: {} },
      { answer: LONG },
    ];
  }
  return [
    "```toon\nthought: Add them.\naction: add\ntoolInput:\n  a: 2\n  b: 40\n```",
    "```toon\nthought: I have it.\naction: finish\ntoolInput:\n```",
    "```toon\nanswer: " + LONG + "\n```",
  ];
}

describe.each(MODE_CASES)("%s, %s: agents stream through the SDK", (provider, mode) => {
  const lm = (): LM => lmFor(provider, fake, mode === "structured" ? { structuredOutputs: true } : { dataFormat: "toon" });

  it("ChainOfThought streams its reasoning; result equals call()'s", async () => {
    const Classify = Signature.define({
      name: "Classify", description: "Classify the sentiment.", input: { sentence: z.string() },
      output: { sentiment: z.enum(["positive", "negative"]) },
    });
    const reply = mode === "structured" ? { reasoning: LONG, sentiment: "positive" } : "```toon\nreasoning: " + LONG + "\nsentiment: positive\n```";
    fake.reply(reply, SLOW);
    const s = new ChainOfThought(Classify).stream({ sentence: "I love it" }, { lm: lm() });
    const seen = await consume(s);
    const result = await s.result;
    expect(fieldsAt(seen, "")).toEqual([["reasoning", LONG], ["sentiment", "positive"]]);
    expect(seen.find((s) => s.event.type === "field" && s.event.name === "reasoning")!.ended).toBe(false);
    fake.reply(reply);
    expect(result.toJSON()).toEqual((await new ChainOfThought(Classify).call({ sentence: "I love it" }, { lm: lm() })).toJSON());
  });

  it("ReAct: each step before the next request, the final answer while it streams; result equals call()'s", async () => {
    const replies = reactIn(mode);
    replies.forEach((r, i) => fake.reply(r, i === 2 ? SLOW : {}));
    const s = new ReAct(Question, { tools: [add], toolCalling: "text" }).stream({ question: "2 + 40?" }, { lm: lm() });
    const seen = await consume(s);
    const result = await s.result;
    expect(result.history.map((h) => [h.action, h.toolInput, h.observation])).toEqual([["add", { a: 2, b: 40 }, 42], ["finish", {}, null]]);
    expect(stepsOf(seen).map((s) => s.requests)).toEqual([1, 2]);
    expect(fieldsAt(seen, "extract")).toEqual([["answer", LONG]]);
    // The answer, the reply's last value (in structured output its closing quote may come with the
    // last chunk), grows through partials while the reply is still being sent.
    const growing = seen.filter((s) => s.event.type === "partial" && s.event.path === "extract" && !s.ended
      && typeof s.event.partial.answer === "string" && s.event.partial.answer.length > 0 && s.event.partial.answer.length < LONG.length);
    expect(growing.length).toBeGreaterThan(2);
    for (const r of replies) fake.reply(r);
    const called = await new ReAct(Question, { tools: [add], toolCalling: "text" }).call({ question: "2 + 40?" }, { lm: lm() });
    expect(result.history).toEqual(called.history);
    expect(result.toJSON()).toEqual(called.toJSON());
  });
});
