import { afterEach, describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FewShotExample, Judge, calibrate, loadDataset, resetConfiguration } from "../../lib/index.js";
import { ScriptedLM, SimulatedLM } from "../../lib/testing/index.js";

afterEach(() => resetConfiguration());

/** A bundled row in what calibrate takes, as docs/judges.md writes it. */
const judged = (e: FewShotExample) => new FewShotExample({
  id: e.id,
  input: { inputs: { question: e.input.question }, prediction: { summary: e.input.summary }, expected: { summary: e.input.reference } },
  output: { verdict: e.output.verdict },
});

/** The test split's rows as written in the file (not through loadDataset). */
const fileRows = readFileSync(join(process.cwd(), "datasets/squality-ratings/test.jsonl"), "utf8").trim().split("\n")
  .map((l) => JSON.parse(l) as { summary: string; reference: string; verdict: string });

describe("calibrating a judge on the bundled squality-ratings", () => {
  it("a judge that passes everything agrees on the people's pass share, κ 0, confusion from the file", async () => {
    const { test } = await loadDataset("squality-ratings");
    const passed = fileRows.filter((r) => r.verdict === "pass").length;
    const failed = fileRows.length - passed;
    expect(passed).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
    // No rule, no demos: the simulated model gives the first verdict, "pass", to every summary.
    const judge = new Judge({ name: "correct", criteria: "The summary is right.", reference: true, lm: new SimulatedLM() });
    const cal = await calibrate(judge, test.map(judged), { record: false, progress: false });
    expect(cal.n).toBe(fileRows.length);
    expect(cal.failures).toBe(0);
    expect(cal.confusion).toEqual({ labels: ["pass", "fail"], matrix: [[passed, 0], [failed, 0]] });
    expect(cal.accuracy).toBeCloseTo(passed / fileRows.length, 12);
    expect(cal.kappa).toBeCloseTo(0, 12);
  });

  it("the judge is shown the summary and the reference: a judge that reads the file's verdict for them agrees fully", async () => {
    const { test } = await loadDataset("squality-ratings");
    const verdictOf = new Map(fileRows.map((r) => [`${r.summary}\u0000${r.reference}`, r.verdict]));
    const lm = new ScriptedLM((request) => {
      const inputs = request.inputs as { answer: { summary: string }; reference: { summary: string } };
      const verdict = verdictOf.get(`${inputs.answer.summary}\u0000${inputs.reference.summary}`);
      return { rationale: verdict === undefined ? "not in the file" : "as people said", verdict: verdict ?? "fail" };
    });
    const judge = new Judge({ name: "correct", criteria: "The summary is right.", reference: true, lm });
    const cal = await calibrate(judge, test.map(judged), { record: false, progress: false });
    expect(lm.requests).toHaveLength(fileRows.length);
    expect(cal.accuracy).toBe(1);
    expect(cal.kappa).toBeCloseTo(1, 12);
    expect(cal.report.results.every((r) => r.prediction?.["rationale"] === "as people said")).toBe(true);
  });
});
