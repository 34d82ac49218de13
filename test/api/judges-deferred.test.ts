/**
 * Judges, reports and evaluation options through the package (dist/): their bodies are deferred modules
 * of the bundle (lib/judge/judge-impl.ts, pairwise-impl.ts, judge-predict.ts, lib/evaluate/report-impl.ts,
 * evaluation-settings.ts, metric.ts, timeout.ts, lib/batch/settings.ts; see scripts/deferred-modules.mjs),
 * loaded at the first call. The checks throw the package's own ValidationError with the same messages,
 * and the judges, intervals and options work as the sources do. Expected values are written by hand.
 */
import { describe, expect, test } from "@jest/globals";
import { z } from "zod";
import {
  defaultMetric, Evaluation, EvaluationReport, FewShotExample, Judge, PairwiseJudge, Predict, SemanticF1, Signature, ValidationError,
} from "typelm";
import type { EvaluationRow } from "typelm";
import { ScriptedLM } from "typelm/testing";
import { thrownBy } from "../helpers/thrown.js";

const example = new FewShotExample({ input: { question: "Capital of France?" }, output: { answer: "Paris" }, id: "q1" });

/** `fn()`'s error, which must be a ValidationError of the code under test. */
const validationError = (fn: () => unknown): ValidationError => thrownBy(ValidationError, fn);

describe("Judge through the bundle", () => {
  test("its option checks throw the package's ValidationError with their messages", () => {
    expect(validationError(() => new Judge(null as never)).message).toBe("new Judge(options): expected { name, criteria, scale?, reference?, lm? }");
    const badName = validationError(() => new Judge({ name: "has space", criteria: "c" }));
    expect(badName.message).toBe('Judge name must be an identifier such as "correct" (it names the metric in reports); received "has space"');
    expect(badName.field).toBe("name");
    expect(validationError(() => new Judge({ name: "j", criteria: " " })).message)
      .toBe('Judge "j": criteria must be a non-empty text saying what the judge checks; received " "');
    expect(validationError(() => new Judge({ name: "j", criteria: "c", scale: { min: 5, max: 1 } })).message).toBe(
      'Judge "j": scale must be "pass-fail" or { min, max } with whole numbers min < max (at most 100 apart), e.g. { min: 1, max: 5 }; received {"min":5,"max":1}',
    );
    expect(validationError(() => new Judge({ name: "j", criteria: "c", reference: "yes" as never })).message)
      .toBe('Judge "j": reference must be true or false; received "yes"');
  });

  test("a score scale: labels, verdict field, scores mapped to [0, 1], the metric named after the judge", () => {
    const judge = new Judge({ name: "quality", criteria: "Good answer.", scale: { min: 1, max: 5 } });
    expect(judge.scale).toEqual({ min: 1, max: 5 });
    expect(judge.reference).toBe(false);
    expect(judge.labels).toEqual(["1", "2", "3", "4", "5"]);
    expect(judge.verdictField).toBe("score");
    expect(judge.scoreOf({ score: 3, rationale: "" })).toBe(0.5);
    expect(judge.scoreOf({ score: 5, rationale: "" })).toBe(1);
    expect(judge.metric.name).toBe("quality");
    expect(judge.predictor.instruction).toBe(
      "Judge the answer. Criteria: Good answer.\nRead the task's inputs and the answer; give a brief rationale first, " +
        "then a whole-number score from 1 (does not meet the criteria) to 5 (fully meets them).",
    );
  });

  test("judges a prediction: verdict, rationale as feedback, details; the last verdict in the reply counts", async () => {
    const lm = new ScriptedLM(() => '{"verdict": "fail"} was quoted; mine: {"rationale": "names Paris", "verdict": "pass"}');
    const judge = new Judge({ name: "correct", criteria: "Names the capital.", reference: true, lm });
    expect(judge.labels).toEqual(["pass", "fail"]);
    const result = await judge.judge(example, { answer: "Paris" });
    expect(result).toEqual({ score: 1, feedback: "names Paris", details: { verdict: "pass", rationale: "names Paris" } });
    const metric = await judge.metric(example, { answer: "Paris" });
    expect(metric).toEqual(result);
  });

  test("SemanticF1: its defaults, and the F1 of recall and precision as the score", async () => {
    const lm = new ScriptedLM(() => ({ reference_key_ideas: "Paris", answer_key_ideas: "Paris, Lyon", rationale: "half", recall: 1, precision: 0.5 }));
    const f1 = new SemanticF1({ lm });
    expect(f1.name).toBe("semantic_f1");
    expect(f1.reference).toBe(true);
    expect(f1.criteria).toBe("The answer covers the key ideas of the reference (recall) and says nothing the reference does not support (precision).");
    const result = (await f1.judge(example, { answer: "Paris and Lyon" })) as { score: number; details: Record<string, unknown> };
    // 2 · 1 · 0.5 / (1 + 0.5) = 2/3
    expect(result.score).toBeCloseTo(2 / 3, 12);
    expect(result.details).toEqual({ recall: 1, precision: 0.5, rationale: "half" });
    expect(new SemanticF1({ name: "sf1", instruction: "Compare." }).predictor.instruction).toBe("Compare.");
  });
});

describe("PairwiseJudge through the bundle", () => {
  test("its check, its defaults, and one call", async () => {
    expect(validationError(() => new PairwiseJudge({ criteria: "" })).message)
      .toBe('new PairwiseJudge(options): criteria must be a non-empty text saying what makes an answer better; received ""');
    const lm = new ScriptedLM(() => ({ rationale: "the first is right", winner: "first" }));
    const judge = new PairwiseJudge({ criteria: "Which is right?", lm });
    expect(judge.name).toBe("pairwise");
    expect(judge.reference).toBe(false);
    const out = await judge.call({ inputs: { question: "Capital of France?" }, first: { answer: "Paris" }, second: { answer: "Lyon" } });
    expect(out).toEqual({ rationale: "the first is right", winner: "first" });
  });
});

describe("EvaluationReport and Evaluation through the bundle", () => {
  const row = (index: number, score: number): EvaluationRow => ({
    index, exampleId: `e${index}`, inputs: { text: `t${index}` }, expected: { label: score === 1 ? "pos" : "neg" }, prediction: { label: "pos" },
    scores: { accuracy: score }, error: null, durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
  });
  const fields = [{ name: "label", label: true, labels: ["pos", "neg"] }];
  const summary = (ci?: Record<string, [number, number]>) => ({
    metrics: { accuracy: 0.75 }, results: [row(0, 1), row(1, 1), row(2, 1), row(3, 0)], failures: [], feedback: [],
    inputTokens: 0, outputTokens: 0, cost: 0, durationMs: 5, runId: null, ...(ci ? { ci } : {}),
  });

  test("intervals computed at the first read: a share's method is Wilson; toJSON carries them", () => {
    const report = new EvaluationReport(summary(), fields);
    expect(report.ciMethod).toEqual({ accuracy: "wilson" });
    const [low, high] = report.ci["accuracy"]!;
    expect(low).toBeLessThan(0.75);
    expect(high).toBeGreaterThan(0.75);
    expect(report.ci).toBe(report.ci);
    const json = report.toJSON();
    expect(json.ci).toBe(report.ci);
    expect(json.ciMethod).toBe(report.ciMethod);
    expect(Object.keys(json)).toEqual([
      "metrics", "results", "failures", "feedback", "inputTokens", "outputTokens", "cost", "durationMs", "judge", "runId", "name", "ci", "ciMethod",
    ]);
    expect(json.judge).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0, cost: 0 });
  });

  test("intervals given are kept; their methods are the ones the rows call for", () => {
    const report = new EvaluationReport(summary({ accuracy: [0.1, 0.9] }), fields);
    expect(report.ci).toEqual({ accuracy: [0.1, 0.9] });
    expect(report.ciMethod).toEqual({ accuracy: "wilson" });
  });

  test("confusion and perLabel: the matrix, and an unknown field named in the error", () => {
    const report = new EvaluationReport(summary(), fields);
    // Gold pos, pos, pos, neg; every prediction pos.
    expect(report.confusion()).toEqual({ field: "label", labels: ["pos", "neg"], matrix: [[3, 0], [1, 0]], unanswered: [0, 0] });
    expect(report.perLabel()["neg"]).toEqual({ precision: 0, recall: 0, f1: 0, support: 1 });
    expect(validationError(() => report.confusion("answer")).message)
      .toBe('report.confusion("answer"): no such expected output field; the examples have: label');
    expect(validationError(() => new EvaluationReport(summary(), []).perLabel()).message).toBe(
      "report.perLabel(): no classification field among the expected outputs (none); expected an enum, boolean or single-word label field. Pass the field name to use another.",
    );
  });

  test("Evaluation's options: defaults, and each check's message", () => {
    const evaluation = new Evaluation();
    expect([evaluation.concurrency, evaluation.record, evaluation.recordCalls, evaluation.name, evaluation.exampleTimeout, evaluation.batch])
      .toEqual([8, true, true, "evaluation", 600, null]);
    expect(new Evaluation({ batch: true, name: "n", exampleTimeout: 2 })).toMatchObject({
      name: "n", givenName: "n", exampleTimeout: 2, batch: { pollInterval: undefined, maxRequestsPerBatch: undefined, maxRetries: 2, maxWait: 86400 },
    });
    expect(validationError(() => new Evaluation({ concurrency: 0 })).message).toBe("Evaluation concurrency must be a positive integer; received 0");
    expect(validationError(() => new Evaluation({ exampleTimeout: -1 })).message)
      .toBe("Evaluation option exampleTimeout must be a positive number of seconds (default 600); received -1");
    expect(validationError(() => new Evaluation({ batch: { maxRetries: 1.5 } })).message)
      .toBe("Evaluation option batch.maxRetries must be a whole number ≥ 0; received 1.5");
  });

  test("a metric's result is checked, and an example past exampleTimeout is a failed row saying so", async () => {
    const program = new Predict(Signature.define({ name: "Capital", input: { question: z.string() }, output: { answer: z.string() } }));
    program.configure((c) => { c.lm = new ScriptedLM(() => ({ answer: "Paris" })); });
    const seven = () => 7;
    const never = () => new Promise<boolean>(() => {});
    const report = await new Evaluation({ progress: false, record: false, exampleTimeout: 0.05 }).evaluate({
      moduleInstance: program, testExamples: [example], metrics: [seven],
    });
    expect(report.results[0]!.error).toBe('TypeError: Metric "seven" returned 7; expected a number in [0, 1], a boolean, or { score, feedback }');
    const late = await new Evaluation({ progress: false, record: false, exampleTimeout: 0.05 }).evaluate({
      moduleInstance: program, testExamples: [example], metrics: [never],
    });
    expect(late.results[0]!.error).toBe(
      'ExampleTimeoutError: example timed out after 0.05 s (exampleTimeout) while metric "never" was scoring; raise exampleTimeout if it needs longer',
    );
  });

  test("defaultMetric: every expected field equal in JSON form", () => {
    expect(defaultMetric(example, { answer: "Paris" })).toBe(true);
    expect(defaultMetric(example, { answer: "Lyon" })).toBe(false);
    // Its name is the metric's name in reports when passed as a metric function.
    expect(defaultMetric.name).toBe("defaultMetric");
  });
});
