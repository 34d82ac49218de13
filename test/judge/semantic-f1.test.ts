import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, FewShotExample, Predict, SemanticF1, Signature, resetConfiguration } from "../../lib/index.js";
import { ScriptedLM, type ScriptedRequest } from "../../lib/testing/index.js";

class Explain extends Signature {
  static override input = { question: z.string() };
  static override output = { response: z.string() };
}

afterEach(() => resetConfiguration());

/** Key ideas are the comma-separated parts of a text. */
const ideas = (text: string) => new Set(text.split(",").map((s) => s.trim()).filter((s) => s !== ""));

/** A judge that counts shared key ideas: recall = shared/reference ideas, precision = shared/answer ideas. */
function overlapJudge(req: ScriptedRequest): Record<string, unknown> | string {
  const answer = ideas((req.inputs?.["answer"] as { response: string }).response);
  const reference = ideas((req.inputs?.["reference"] as { response: string }).response);
  if (answer.has("overflow")) return { reference_key_ideas: "-", answer_key_ideas: "-", rationale: "?", recall: 1.5, precision: 1 };
  const shared = [...answer].filter((i) => reference.has(i)).length;
  return {
    reference_key_ideas: [...reference].join("; "), answer_key_ideas: [...answer].join("; "),
    rationale: `${shared} shared`, recall: shared / reference.size, precision: shared / answer.size,
  };
}

describe("SemanticF1", () => {
  it("scores the F1 of judged recall and precision of key ideas, keeping both on the row", async () => {
    const answers = ["a, b, c, d", "a, b", "a, x, y, z", "x", "overflow"];
    const lm = new ScriptedLM((req) => ({ response: answers[Number(/(\d+)/.exec(String(req.inputs?.["question"]))![1])]! }));
    const examples = answers.map((_, n) => new FewShotExample({ input: { question: `q${n}` }, output: { response: "a, b, c, d" } }));
    const metric = new SemanticF1({ lm: new ScriptedLM(overlapJudge) });
    const report = await new Evaluation({ record: false, progress: false })
      .evaluate({ moduleInstance: new Predict(Explain).configure((c) => { c.lm = lm; }), testExamples: examples, metrics: [metric] });

    const scores = report.results.map((r) => r.scores["semantic_f1"]);
    expect(scores[0]).toBe(1);
    // "a, b": recall 2/4, precision 1 → F1 = 2·0.5·1/1.5 = 2/3.
    expect(scores[1]).toBeCloseTo(2 / 3, 12);
    // "a, x, y, z": recall 1/4, precision 1/4 → F1 = 1/4.
    expect(scores[2]).toBeCloseTo(1 / 4, 12);
    // Nothing shared: F1 0 (not NaN).
    expect(scores[3]).toBe(0);
    expect(report.results[1]!.details).toEqual({ semantic_f1: { recall: 0.5, precision: 1, rationale: "2 shared" } });
    // A recall outside [0, 1] is the judge's error, not a clamped score.
    expect(report.results[4]!.error).toMatch(/^OutputError: .*recall/);
    expect(report.failures).toHaveLength(1);
  });
});
