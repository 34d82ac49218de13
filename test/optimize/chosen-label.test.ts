// A score that chose a configuration is optimistic: display.candidates labels the best score, and the
// returned trial's score, "validation (chosen on it)" (GEPA scoring on its training examples:
// "training examples (chosen on them)").
import { describe, expect, it } from "@jest/globals";
import { Predict, SimpleOptimizer } from "../../lib/index.js";
import { display, type CandidatesInput } from "../../lib/notebook/index.js";
import type { Trial } from "../../lib/store/records.js";
import { candidateInstructions, makeExamples, taskModel, Topic, useTempLab } from "./task.js";

const LABEL = "validation (chosen on it)";

function trial(index: number, kind: string, score: number | null, extra: Partial<Trial> = {}): Trial {
  return {
    index, kind, parents: [], choices: {}, instructions: { self: `instruction ${index}` }, demoIds: { self: [] }, reused: 0, score,
    exampleScores: null, budgetSpent: index + 1, lmCalls: 1, inputTokens: 10, outputTokens: 1, cost: 0, durationMs: 1, error: null, data: {},
    ...extra,
  };
}

/** The table's body rows as cell texts (HTML tags dropped, entities left as they are). */
function htmlRows(html: string): string[][] {
  const body = html.slice(html.indexOf("<tbody>"), html.indexOf("</tbody>"));
  return [...body.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((c) => c[1]!.replace(/<[^>]+>/g, "")));
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

const mipro: CandidatesInput = {
  name: "MIPROv2", bestTrial: 3, summary: { validation: "given" },
  trials: [trial(0, "bootstrap", 0.9), trial(1, "propose", null), trial(2, "baseline", 0.4), trial(3, "full", 0.7), trial(4, "minibatch", 0.95), trial(5, "full", 0.6)],
};

useTempLab();

describe("display.candidates labels the chosen configuration's score", () => {
  it("text/plain: the best score is labelled validation (chosen on it), and so is the returned trial's row, only that one", async () => {
    const text = (await display.candidates(mipro))!["text/plain"];
    // A minibatch's 0.95 and the bootstrap's 0.9 are not validation scores: the best is the full 0.7.
    expect(text.split("\n")[0]).toBe(`MIPROv2: 6 trials, best score 0.7, ${LABEL}`);
    expect(occurrences(text, LABEL)).toBe(2);
    const row = text.split("\n").find((l) => l.includes("3 ★"))!;
    expect(row).toContain(`0.7 — ${LABEL}`);
  });

  it("text/html: the returned trial's score cell carries the label; no other row does", async () => {
    const bundle = (await display.candidates(mipro))!;
    const rows = htmlRows(bundle["text/html"]);
    expect(rows).toHaveLength(6);
    const scores = rows.map((r) => r[3]);
    expect(scores).toEqual(["0.9", "—", "0.4", `0.7 — ${LABEL}`, "0.95", "0.6"]);
    const spec = bundle["application/vnd.vegalite.v5+json"]!;
    expect(spec.title).toContain("best validation score so far, chosen on it");
  });

  it("a GEPA run scored on its training examples is labelled training examples (chosen on them)", async () => {
    const gepa: CandidatesInput = {
      name: "GEPA", bestTrial: 1, summary: { validation: "training" },
      trials: [trial(0, "seed", 0.5), trial(1, "candidate", 0.8, { parents: [0] }), trial(2, "rejected", 0.9, { parents: [0] })],
    };
    const bundle = (await display.candidates(gepa))!;
    expect(bundle["text/plain"]).toContain("GEPA: 3 trials, best score 0.8, training examples (chosen on them)");
    expect(bundle["text/plain"]).not.toContain(LABEL);
    expect(htmlRows(bundle["text/html"]).map((r) => r[3])).toEqual(["0.5", "0.8 — training examples (chosen on them)", "0.9"]);
  });

  it("on a real run, the label sits on the trial compile returned", async () => {
    const opt = new SimpleOptimizer({ seed: 2, numTrials: 3, kDemos: 0, instructions: candidateInstructions(1, 2), progress: false });
    await opt.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = taskModel(); }), trainingExamples: makeExamples(12, 1, "train") });
    const run = opt.lastRun!;
    const rows = htmlRows((await display.candidates(run))!["text/html"]);
    const labelled = rows.filter((r) => r[3]!.includes(LABEL)).map((r) => r[0]);
    expect(labelled).toEqual([`${run.bestTrial} ★`]);
    expect(rows[run.bestTrial!]![3]).toBe(`${run.score} — ${LABEL}`);
  });
});
