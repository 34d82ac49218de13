// calibrate(judge, { annotations: runId }): the reviews people wrote of a run's rows (the latest per
// row) as the human verdicts; figures checked against a table counted by hand.
import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Judge, ValidationError, calibrate } from "../../lib/index.js";
import { addAnnotation } from "../../lib/store/annotations/annotations.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { judgedRow } from "../view/review-fixture.js";

const files: string[] = [];
afterAll(() => { for (const f of files) closeStoreSync(f); });

/** A lab with one run of six rows: even rows answered right ("answer n"), odd rows wrong ("wrong n"). */
function sixRows(): { path: string; lab: LabStore; runId: string } {
  const path = join(mkdtempSync(join(tmpdir(), "typelm-calibrate-")), "lab.sqlite");
  files.push(path);
  const lab = LabStore.open(path);
  const runId = lab.startRun({ kind: "evaluation", name: "reviewed", config: {} });
  for (let i = 0; i < 6; i++) lab.recordExample(runId, judgedRow(i, i % 2 === 0 ? 1 : 0));
  return { path, lab, runId };
}

/** What the judge was shown per example id (its requests' inputs), and a judge that passes answers starting "answer". */
function passingJudge(seen: Map<string, unknown>, reference = false): Judge {
  const lm = new ScriptedLM((req) => {
    const text = JSON.stringify(req.inputs);
    const n = /question (\d+)/.exec(text)![1]!;
    seen.set(`q-${n}`, req.inputs);
    // The judged prediction is its "answer" input.
    const answer = (req.inputs?.["answer"] as { answer: string }).answer;
    return { rationale: "r", verdict: answer.startsWith("answer") ? "pass" : "fail" };
  });
  return new Judge({ name: "correct", criteria: "The answer is right.", lm, reference });
}

describe("calibrate from annotations", () => {
  it("reads the latest review of each row as the human verdict: agreement, κ and the confusion as counted by hand", async () => {
    const { path, lab, runId } = sixRows();
    // Humans (latest per row): q-0 pass, q-1 fail, q-2 fail, q-3 pass, q-4 1 (= pass), q-5 pass then fail (fail counts).
    const review = (exampleId: string, verdict: "pass" | "fail" | number) => addAnnotation(lab, { runId, exampleId, verdict, reviewer: "ann" });
    await review("q-0", "pass");
    await review("q-1", "fail");
    await review("q-2", "fail");
    await review("q-3", "pass");
    await review("q-4", 1);
    await review("q-5", "pass");
    await review("q-5", "fail");
    const seen = new Map<string, unknown>();
    const cal = await calibrate(passingJudge(seen), { annotations: runId, store: path }, { record: false, progress: false });
    // The judge passes the even rows (right answers). Rows human, columns judge (pass, fail):
    // human pass: q-0 (judge pass), q-3 (judge fail), q-4 (judge pass) → [2, 1];
    // human fail: q-1 (fail), q-2 (judge pass), q-5 (fail)             → [1, 2].
    // pₒ = 4/6; margins 3/6 each way, so pₑ = ½·½ + ½·½ = ½; κ = (2/3 − 1/2)/(1 − 1/2) = 1/3.
    expect(cal.n).toBe(6);
    expect(cal.confusion).toEqual({ labels: ["pass", "fail"], matrix: [[2, 1], [1, 2]] });
    expect(cal.accuracy).toBeCloseTo(4 / 6, 12);
    expect(cal.kappa).toBeCloseTo(1 / 3, 12);
    expect(cal.report.results.map((r) => [r.exampleId, r.expected["verdict"]])).toEqual([
      ["q-0", "pass"], ["q-1", "fail"], ["q-2", "fail"], ["q-3", "pass"], ["q-4", "pass"], ["q-5", "fail"],
    ]);
    expect([...seen.keys()].sort()).toEqual(["q-0", "q-1", "q-2", "q-3", "q-4", "q-5"]);
  }, 60_000);

  it("shows a judge with a reference the reviewer's corrected expected output, and the row's where none was given", async () => {
    const { path, lab, runId } = sixRows();
    await addAnnotation(lab, { runId, exampleId: "q-1", verdict: "pass", expected: { answer: "wrong 1" }, reviewer: "ann" });
    await addAnnotation(lab, { runId, exampleId: "q-2", verdict: "pass", reviewer: "ann" });
    const seen = new Map<string, unknown>();
    await calibrate(passingJudge(seen, true), { annotations: runId, store: path }, { record: false, progress: false });
    expect(JSON.stringify(seen.get("q-1"))).toContain("wrong 1");
    expect(JSON.stringify(seen.get("q-1"))).not.toContain("answer 1");
    expect(JSON.stringify(seen.get("q-2"))).toContain("answer 2");
  }, 60_000);

  it("maps pass and fail to 1 and 0 on a numeric scale, and refuses a verdict the scale has no label for, naming the row", async () => {
    const { path, lab, runId } = sixRows();
    await addAnnotation(lab, { runId, exampleId: "q-0", verdict: "pass", reviewer: "ann" });
    await addAnnotation(lab, { runId, exampleId: "q-1", verdict: "fail", reviewer: "ann" });
    const binary = new Judge({ name: "graded", criteria: "Right.", scale: { min: 0, max: 1 }, lm: new ScriptedLM(() => ({ rationale: "r", score: 1 })) });
    const cal = await calibrate(binary, { annotations: runId, store: path }, { record: false, progress: false });
    expect(cal.confusion).toEqual({ labels: ["0", "1"], matrix: [[0, 1], [0, 1]] });
    await addAnnotation(lab, { runId, exampleId: "q-2", verdict: 0.5, reviewer: "ann" });
    await expect(calibrate(binary, { annotations: runId, store: path }, { record: false, progress: false }))
      .rejects.toThrow(/the review of q-2 in run .* says 0\.5; judge "graded" gives one of "0", "1"/);
    await addAnnotation(lab, { runId, exampleId: "q-3", verdict: 3, reviewer: "ann" });
    await expect(calibrate(passingJudge(new Map()), { annotations: runId, store: path }, { record: false, progress: false })).rejects.toThrow(ValidationError);
    const empty = lab.startRun({ kind: "evaluation", name: "unreviewed", config: {} });
    await expect(calibrate(binary, { annotations: empty, store: path })).rejects.toThrow(/has no reviews .* typelm view --review/);
  }, 60_000);
});
