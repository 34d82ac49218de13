import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, FewShotExample, Instrumentation, Module, Predict, Signature, resetConfiguration } from "../../lib/index.js";
import type { SignatureClass } from "../../lib/signature/signature.js";
import { ScriptedLM } from "../../lib/testing/index.js";

afterEach(() => {
  resetConfiguration();
  Instrumentation.reset();
});

const quiet = { record: false, progress: false } as const;

class Classify extends Signature {
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative", "neutral"]) };
}

class Answer extends Signature {
  static override input = { question: z.string() };
  static override output = { answer: z.string() };
}

/** A predictor whose scripted model answers example i with `replies[i]` (an object, or raw text). */
function scripted(signature: SignatureClass, key: string, replies: (Record<string, unknown> | string)[]) {
  const lm = new ScriptedLM((req) => replies[Number((req.inputs?.[key] as string).split("#")[1])]!);
  return new Predict(signature).configure((c) => { c.lm = lm; });
}

function enumCase() {
  const gold = ["positive", "positive", "negative", "negative", "neutral", "positive"];
  const replies = [
    { sentiment: "positive" }, { sentiment: "negative" }, { sentiment: "negative" },
    "not a reply anyone can parse", { sentiment: "neutral" }, { sentiment: "neutral" },
  ];
  const testExamples = gold.map((g, i) => new FewShotExample({ input: { sentence: `s#${i}` }, output: { sentiment: g } }));
  return { moduleInstance: scripted(Classify, "sentence", replies), testExamples };
}

describe("f1_score, confusion and perLabel on an enum output", () => {
  // Gold / predicted: pos/pos, pos/neg, neg/neg, neg/(failed), neu/neu, pos/neu.
  // positive: tp 1, fp 0, fn 2 → P 1, R 1/3, F1 0.5; negative: tp 1, fp 1, fn 1 → F1 0.5;
  // neutral: tp 1, fp 1, fn 0 → P 0.5, R 1, F1 2/3. Macro-F1 = (0.5 + 0.5 + 2/3) / 3 = 5/9.
  it("macro-F1 over the labels, the failed example a miss for its gold label", async () => {
    const report = await new Evaluation(quiet).evaluate({ ...enumCase(), metrics: ["accuracy", "f1_score"] });
    expect(report.failures.map((r) => r.index)).toEqual([3]);
    expect(report.accuracy).toBeCloseTo(3 / 6, 12);
    expect(report.f1_score).toBeCloseTo(5 / 9, 12);
    expect(report.results.map((r) => r.scores["f1_score"])).toEqual([1, 0, 1, 0, 1, 0]);
  });

  it("confusion counts gold (rows) against predicted (columns) in enum order, failures apart", async () => {
    const report = await new Evaluation(quiet).evaluate(enumCase());
    expect(report.confusion()).toEqual({
      field: "sentiment",
      labels: ["positive", "negative", "neutral"],
      matrix: [
        [1, 1, 1],
        [0, 1, 0],
        [0, 0, 1],
      ],
      unanswered: [0, 1, 0],
    });
  });

  it("perLabel gives precision, recall, F1 and support per label", async () => {
    const report = await new Evaluation(quiet).evaluate(enumCase());
    const stats = report.perLabel("sentiment");
    expect(Object.keys(stats)).toEqual(["positive", "negative", "neutral"]);
    expect(stats["positive"]).toEqual({ precision: 1, recall: 1 / 3, f1: 0.5, support: 3 });
    expect(stats["negative"]).toEqual({ precision: 0.5, recall: 0.5, f1: 0.5, support: 2 });
    expect(stats["neutral"]!.precision).toBe(0.5);
    expect(stats["neutral"]!.recall).toBe(1);
    expect(stats["neutral"]!.f1).toBeCloseTo(2 / 3, 12);
    expect(stats["neutral"]!.support).toBe(1);
  });

  it("names the field it cannot find", async () => {
    const report = await new Evaluation(quiet).evaluate(enumCase());
    expect(() => report.confusion("topic")).toThrow('report.confusion("topic"): no such expected output field; the examples have: sentiment');
  });
});

describe("free-text metrics (SQuAD normalisation)", () => {
  // "The Eiffel Tower" vs "Eiffel tower": both "eiffel tower" → F1 1, exact 1.
  // "in the year 1889" vs "1889": gold tokens in/year/1889, one shared → P 1, R 1/3, F1 0.5.
  // "Gustave Eiffel" vs "Alexandre Gustave Eiffel": two shared → P 2/3, R 1, F1 0.8.
  const gold = ["The Eiffel Tower", "in the year 1889", "Gustave Eiffel"];
  const predicted = ["Eiffel tower", "1889", "Alexandre Gustave Eiffel"];
  const run = (metrics: ("accuracy" | "f1_score" | "exact_match" | "token_f1")[]) => new Evaluation(quiet).evaluate({
    moduleInstance: scripted(Answer, "question", predicted.map((answer) => ({ answer }))),
    testExamples: gold.map((answer, i) => new FewShotExample({ input: { question: `q#${i}` }, output: { answer } })),
    metrics,
  });

  it("f1_score is the mean token F1 for free text; exact_match and token_f1 normalise too", async () => {
    const report = await run(["f1_score", "token_f1", "exact_match", "accuracy"]);
    expect(report.f1_score).toBeCloseTo((1 + 0.5 + 0.8) / 3, 12);
    expect(report.token_f1).toBeCloseTo((1 + 0.5 + 0.8) / 3, 12);
    expect(report.exact_match).toBeCloseTo(1 / 3, 12);
    expect(report.accuracy).toBe(0);
    expect(report.results.map((r) => r.scores["token_f1"])).toEqual([1, 0.5, expect.closeTo(0.8, 12)]);
  });

  it("has no confusion matrix for free text", async () => {
    const report = await run(["accuracy"]);
    expect(() => report.confusion()).toThrow(/no classification field among the expected outputs \(answer\)/);
  });
});

describe("label strings without a declared enum", () => {
  it("treats single-word string outputs as labels for f1_score", async () => {
    class Spam extends Module {
      async forward({ text }: { text: string }): Promise<{ label: string }> {
        return { label: text.includes("win") || text.includes("free") ? "spam" : "ham" };
      }
    }
    // Gold spam, ham, ham; predicted spam, spam, ham. spam: P 0.5, R 1, F1 2/3; ham: P 1, R 0.5, F1 2/3.
    const testExamples = [
      new FewShotExample({ input: { text: "win money" }, output: { label: "spam" } }),
      new FewShotExample({ input: { text: "free lunch at noon" }, output: { label: "ham" } }),
      new FewShotExample({ input: { text: "see you" }, output: { label: "ham" } }),
    ];
    const report = await new Evaluation(quiet).evaluate({ moduleInstance: new Spam(), testExamples, metrics: ["f1_score"] });
    expect(report.f1_score).toBeCloseTo(2 / 3, 12);
    expect(report.confusion().matrix).toEqual([[1, 0], [1, 1]]);
  });
});
