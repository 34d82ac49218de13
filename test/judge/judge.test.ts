import { afterEach, describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { Evaluation, FewShotExample, Judge, LMError, Predict, Signature, ValidationError, resetConfiguration, type LMRequest, type LMResponse } from "../../lib/index.js";
import { ScriptedLM, type ScriptedReplies, type ScriptedRequest } from "../../lib/testing/index.js";

class Capital extends Signature {
  static override description = "Name the capital of the country.";
  static override input = { country: z.string() };
  static override output = { answer: z.string() };
}

afterEach(() => resetConfiguration());

/** Example n asks for the capital of country n; the gold answer is "Capital n". */
function examples(count: number): FewShotExample[] {
  return Array.from({ length: count }, (_, n) => new FewShotExample({
    input: { country: `country ${n}` }, output: { answer: `Capital ${n}` }, id: `ex-${n}`,
  }));
}

function numberIn(text: unknown): number {
  return Number(/(\d+)/.exec(JSON.stringify(text))![1]);
}

/** The program answers right for even examples and wrong ("Nowhere n") for odd ones. */
function program(): { module: Predict; lm: ScriptedLM } {
  const lm = new ScriptedLM((req) => {
    const n = numberIn(req.inputs?.["country"]);
    return { answer: n % 2 === 0 ? `Capital ${n}` : `Nowhere ${n}` };
  });
  return { module: new Predict(Capital).configure((c) => { c.lm = lm; }), lm };
}

/** A ScriptedLM whose every answered call costs `price` USD (the test doubles cost nothing). */
class PricedLM extends ScriptedLM {
  constructor(replies: ScriptedReplies, private readonly price: number) {
    super(replies);
  }

  protected override async complete(request: LMRequest): Promise<LMResponse> {
    return { ...(await super.complete(request)), estimatedCost: this.price };
  }
}

/** Tokens at four characters a token, the scripted models' estimate, summed over what a model received. */
function inputTokensOf(requests: readonly ScriptedRequest[]): number {
  let sum = 0;
  for (const r of requests) for (const m of r.messages) sum += Math.ceil(m.content.length / 4);
  return sum;
}

/** A reference judge's raw reply: pass when the judged answer equals the reference answer. */
function referenceVerdict(req: ScriptedRequest): string {
  const answer = (req.inputs?.["answer"] as { answer: string }).answer;
  const gold = (req.inputs?.["reference"] as { answer: string }).answer;
  const verdict = answer === gold ? "pass" : "fail";
  return JSON.stringify({ rationale: `"${answer}" against "${gold}"`, verdict });
}

describe("Judge in an evaluation", () => {
  it("scores each row from the judged answer, keeps verdict and rationale, and counts the judge's calls apart from the program's", async () => {
    const judgeLM = new PricedLM(referenceVerdict, 0.001);
    const judge = new Judge({ name: "correct", criteria: "The answer names the same city as the reference.", reference: true, lm: judgeLM });
    const { module, lm: programLM } = program();
    const report = await new Evaluation({ record: false, progress: false, concurrency: 3 })
      .evaluate({ moduleInstance: module, testExamples: examples(6), metrics: [judge, "accuracy"] });

    expect(report.failures).toEqual([]);
    expect(report.results.map((r) => r.scores["correct"])).toEqual([1, 0, 1, 0, 1, 0]);
    expect(report.metrics["correct"]).toBe(0.5);
    expect(report.results[1]!.details).toEqual({ correct: { verdict: "fail", rationale: '"Nowhere 1" against "Capital 1"' } });
    expect(report.results[2]!.details).toEqual({ correct: { verdict: "pass", rationale: '"Capital 2" against "Capital 2"' } });
    expect(report.feedback[3]).toEqual({ correct: '"Nowhere 3" against "Capital 3"' });

    // The judge's six calls, their tokens and cost are in report.judge; the program's are not mixed with them.
    expect(judgeLM.requests).toHaveLength(6);
    const judgeOutput = judgeLM.requests.reduce((n, r) => n + Math.ceil(referenceVerdict(r).length / 4), 0);
    expect(report.judge).toEqual({ calls: 6, inputTokens: inputTokensOf(judgeLM.requests), outputTokens: judgeOutput, cost: expect.closeTo(0.006, 12) });
    expect(report.inputTokens).toBe(inputTokensOf(programLM.requests));
    expect(report.cost).toBe(0);
    expect(report.toJSON().judge).toEqual(report.judge);
  });

  it("shows the judge no expected outputs without reference: true", async () => {
    const judgeLM = new ScriptedLM(() => ({ rationale: "fine", verdict: "pass" }));
    const judge = new Judge({ name: "fluent", criteria: "The answer is a city name.", lm: judgeLM });
    const { module } = program();
    const report = await new Evaluation({ record: false, progress: false })
      .evaluate({ moduleInstance: module, testExamples: examples(2), metrics: [judge] });
    expect(report.metrics["fluent"]).toBe(1);
    expect(Object.keys(judgeLM.requests[0]!.inputs!).sort()).toEqual(["answer", "inputs"]);
    // Example 1's program answer is "Nowhere 1"; its gold answer "Capital 1" reaches no judge prompt.
    const prompts = judgeLM.requests.map((r) => r.messages.map((m) => m.content).join("\n"));
    expect(prompts.some((p) => p.includes("Nowhere 1"))).toBe(true);
    expect(prompts.some((p) => p.includes("Capital 1"))).toBe(false);
  });

  it("makes the row of a failing judge call an error row carrying the judge's error, and scores the others", async () => {
    const judgeLM = new ScriptedLM((req) => {
      const n = numberIn((req.inputs?.["inputs"] as { country: string }).country);
      if (n === 2) throw new LMError("anthropic request failed: HTTP 400 invalid request for example 2", { status: 400, retryable: false, provider: "anthropic", attempts: 1 });
      return referenceVerdict(req);
    });
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true, lm: judgeLM });
    const { module } = program();
    const report = await new Evaluation({ record: false, progress: false })
      .evaluate({ moduleInstance: module, testExamples: examples(4), metrics: [judge] });

    expect(report.failures).toHaveLength(1);
    const row = report.results[2]!;
    expect(row.error).toBe('LMError: metric "correct" threw: anthropic request failed: HTTP 400 invalid request for example 2');
    expect(row.scores).toEqual({ correct: 0 });
    // The program's answer is kept: the judge failed, not the program.
    expect(row.prediction).toEqual({ answer: "Capital 2" });
    expect(report.results.map((r) => r.error === null)).toEqual([true, true, false, true]);
    expect(report.results[3]!.scores).toEqual({ correct: 0 });
    expect(report.results[0]!.scores).toEqual({ correct: 1 });
  });

  it("makes a reply outside the verdicts an error row (OutputError), never a silent 0", async () => {
    const judgeLM = new ScriptedLM((req) => {
      const n = numberIn((req.inputs?.["inputs"] as { country: string }).country);
      return n === 1 ? '{"rationale": "hard to say", "verdict": "maybe"}' : referenceVerdict(req);
    });
    const judge = new Judge({ name: "correct", criteria: "Same city as the reference.", reference: true, lm: judgeLM });
    const { module } = program();
    const report = await new Evaluation({ record: false, progress: false })
      .evaluate({ moduleInstance: module, testExamples: examples(3), metrics: [judge] });
    expect(report.failures.map((r) => r.index)).toEqual([1]);
    expect(report.results[1]!.error).toMatch(/^OutputError: .*verdict.*"maybe"/);
  });

  it("maps a score on { min, max } linearly into [0, 1] and refuses one outside the scale", async () => {
    const judgeLM = new ScriptedLM((req) => {
      const n = numberIn((req.inputs?.["inputs"] as { country: string }).country);
      return { rationale: `example ${n}`, score: [1, 4, 5, 7][n]! };
    });
    const judge = new Judge({ name: "quality", criteria: "A helpful answer.", scale: { min: 1, max: 5 }, lm: judgeLM });
    const { module } = program();
    const report = await new Evaluation({ record: false, progress: false })
      .evaluate({ moduleInstance: module, testExamples: examples(4), metrics: [judge] });
    expect(report.results.slice(0, 3).map((r) => r.scores["quality"])).toEqual([0, 0.75, 1]);
    expect(report.results[1]!.details).toEqual({ quality: { score: 4, rationale: "example 1" } });
    expect(report.results[3]!.error).toMatch(/^OutputError: .*score/);
  });

  it("refuses bad options with the field and what is valid", () => {
    expect(() => new Judge({ name: "ok", criteria: "x", scale: { min: 5, max: 1 } })).toThrow(/scale must be "pass-fail" or \{ min, max \}.*received \{"min":5,"max":1\}/);
    expect(() => new Judge({ name: "has space", criteria: "x" })).toThrow(/Judge name must be an identifier/);
    expect(() => new Judge({ name: "ok", criteria: " " })).toThrow(/criteria must be a non-empty text/);
  });
});

describe("Judge called directly", () => {
  it("asks its predictor with the inputs, the answer and the reference, and answers with verdict and rationale", async () => {
    const lm = new ScriptedLM(referenceVerdict);
    const judge = new Judge({ name: "correct", criteria: "same answer as the reference", reference: true, lm });
    const input = { inputs: { country: "country 0" }, prediction: { answer: "Capital 0" }, expected: { answer: "Capital 0" } };
    expect(await judge.call(input)).toEqual({ verdict: "pass", rationale: '"Capital 0" against "Capital 0"' });
    expect(await judge.call({ ...input, prediction: { answer: "Nowhere" } })).toEqual({ verdict: "fail", rationale: '"Nowhere" against "Capital 0"' });
    expect(lm.requests).toHaveLength(2);
  });

  it("refuses a malformed input, and no expected outputs when it judges against the reference, with the field, before any model call", async () => {
    const lm = new ScriptedLM(referenceVerdict);
    const judge = new Judge({ name: "correct", criteria: "same answer as the reference", reference: true, lm });
    const bad = judge.call({ inputs: { country: "c" }, prediction: "Capital" } as never);
    await expect(bad).rejects.toBeInstanceOf(ValidationError);
    await expect(bad).rejects.toMatchObject({
      field: "input",
      message: 'Judge "correct": expected { inputs: {...}, prediction: {...}, expected: {...} }, the judged program\'s inputs and outputs',
    });
    const unreferenced = judge.call({ inputs: { country: "c" }, prediction: { answer: "Capital" } });
    await expect(unreferenced).rejects.toBeInstanceOf(ValidationError);
    await expect(unreferenced).rejects.toMatchObject({
      field: "expected", message: 'Judge "correct" judges against the reference (reference: true) but was given no expected outputs',
    });
    expect(lm.requests).toHaveLength(0);
  });
});
