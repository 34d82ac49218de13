import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ModelChoice } from "../../lib/lab/experiment/model-choice.js";
import { LabStore } from "../../lib/store/lab-store.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import { renderReport } from "../../lib/lab/report/report-md.js";
import type { ComparisonResult, ReproduceResults } from "../../lib/lab/experiment/reproduce.js";
import { runBuiltCli } from "../helpers/cli.js";

// The reproductions run in child processes (the built CLI): nothing here configures an LM, and a run's
// lab store is opened only to read its rows back once the child has exited.
const dir = mkdtempSync(join(tmpdir(), "typelm-stats-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const model = { id: "openai/gpt-4o-mini", source: "--lm", standIn: false, description: "openai/gpt-4o-mini (from --lm, temperature 0)" } as ModelChoice;

function render(results: ReproduceResults): string {
  return renderReport({
    results, summary: "Sentiment of a verse (4 labels): a Predict program before and after MIPROv2 chose its instruction and demos.", models: [model], registered: true, bundledDataset: true, charts: { files: [], problems: [] }, providerCalls: 0,
    cost: { baseline: 0, optimized: 0, optimizer: 0 },
  });
}

/** The committed results.json with statistics of our own (it may predate them). */
function results(comparison: Record<string, ComparisonResult>): ReproduceResults {
  const r = JSON.parse(readFileSync("reports/poem-sentiment/results.json", "utf8")) as ReproduceResults;
  r.baseline.metrics = { accuracy: 0.183, f1_score: 0.1 };
  r.optimized!.metrics = { accuracy: 0.452, f1_score: 0.2 };
  r.baseline.ci = { accuracy: [0.115, 0.26], f1_score: [0.07, 0.13] };
  r.optimized!.ci = { accuracy: [0.356, 0.548], f1_score: [0.15, 0.25] };
  r.comparison = comparison;
  return r;
}

const significant: ComparisonResult = {
  a: 0.183, b: 0.452, diff: 0.269, ci: [0.183, 0.356], confidence: 0.95, pValue: 0.0001, significant: true, test: "mcnemar-exact", n: 104, better: 33, worse: 5,
};
const insignificant: ComparisonResult = {
  a: 0.1, b: 0.2, diff: 0.1, ci: [-0.012, 0.2], confidence: 0.95, pValue: 0.0713, significant: false, test: "sign-flip", n: 104, better: 12, worse: 7,
};

describe("report.md statistics", () => {
  it("gives each metric's 95% interval beside baseline and optimized, and the difference with its interval and p-value", () => {
    const md = render(results({ accuracy: significant, f1_score: insignificant }));
    expect(md).toContain("| test split | baseline (95% CI) | optimized (95% CI) |");
    expect(md).toContain("| accuracy | 0.183 (0.115–0.260) | 0.452 (0.356–0.548) |");
    expect(md).toContain("| f1_score | 0.100 (0.070–0.130) | 0.200 (0.150–0.250) |");
    expect(md).toContain(
      "**accuracy**, optimized − baseline: +0.269 (95% CI +0.183 to +0.356), p = 0.0001, mcnemar-exact: significant at the 5% level (33 examples better, 5 worse, of 104).",
    );
    expect(md).toContain(
      "**f1_score**, optimized − baseline: +0.100 (95% CI -0.012 to +0.200), p = 0.071, sign-flip: not significant at the 5% level (12 examples better, 7 worse, of 104).",
    );
  });

  it("names the interval's method, Holm's p and the mde beside a result that is not significant", () => {
    const r = results({
      accuracy: { ...significant, ciMethod: "clopper-pearson", pAdjusted: 0.0002, mde: 0.1 },
      f1_score: { ...insignificant, ciMethod: "bootstrap-bca", pAdjusted: 0.0713, mde: 0.137 },
    });
    r.baseline.ciMethod = { accuracy: "wilson", f1_score: "bootstrap-bca" };
    const md = render(r);
    expect(md).toContain("Intervals: accuracy modified Wilson interval (Brown, Cai & DasGupta); f1_score BCa bootstrap interval (2,000 resamples of the examples, seed 0).");
    expect(md).toContain(
      "**accuracy**, optimized − baseline: +0.269 (95% CI +0.183 to +0.356, clopper-pearson), p = 0.0001, Holm-adjusted p = 0.0002, mcnemar-exact: significant at the 5% level (33 examples better, 5 worse, of 104).",
    );
    expect(md).toContain(
      "**f1_score**, optimized − baseline: +0.100 (95% CI -0.012 to +0.200, bootstrap-bca), p = 0.071, sign-flip: not significant at the 5% level; mde 0.137 (80% power) (12 examples better, 7 worse, of 104).",
    );
  });

  it("a results.json written before the statistics renders as before (no interval columns, no comparison lines)", () => {
    const r = JSON.parse(readFileSync("reports/poem-sentiment/results.json", "utf8")) as Partial<ReproduceResults>;
    delete r.comparison;
    delete (r.baseline as Partial<ReproduceResults["baseline"]>).ci;
    delete (r.optimized as Partial<NonNullable<ReproduceResults["optimized"]>>).ci;
    const md = render(r as ReproduceResults);
    expect(md).toContain("| test split | baseline | optimized |");
    expect(md).not.toContain("optimized − baseline");
  });
});

describe("typelm reproduce writes the statistics", () => {
  async function run(experiment: string, limit: number, folder = `${experiment}-${limit}`) {
    const cwd = join(dir, folder);
    mkdirSync(cwd, { recursive: true });
    // The built command line: the bundled experiment files import "typelm" from dist/.
    const outcome = await runBuiltCli(["reproduce", experiment, "--limit", String(limit)], cwd);
    expect(outcome).toMatchObject({ code: 0 });
    const out = join(cwd, "reports", experiment);
    const json = readFileSync(join(out, "results.json"), "utf8");
    return { outcome, json, md: readFileSync(join(out, "report.md"), "utf8"), results: JSON.parse(json) as ReproduceResults };
  }

  it("poem-sentiment --limit 12: results.json holds ci and the comparison of every metric; report.md the same numbers", async () => {
    const { md, results: r, json } = await run("poem-sentiment", 12);
    expect(Object.keys(r.comparison)).toEqual(["accuracy", "f1_score"]);
    for (const metric of ["accuracy", "f1_score"]) {
      const c = r.comparison[metric]!;
      expect(Object.keys(c).sort()).toEqual(["a", "b", "better", "ci", "ciMethod", "confidence", "diff", "mde", "n", "pAdjusted", "pValue", "significant", "test", "worse"]);
      const test = metric === "accuracy" ? "mcnemar-exact" : "permutation-macro-f1";
      expect(c).toMatchObject({ a: r.baseline.metrics[metric], b: r.optimized!.metrics[metric], n: 12, confidence: 0.95, test });
      expect(c.diff).toBeCloseTo(c.b - c.a, 12);
      expect(c.ci[0]).toBeLessThanOrEqual(c.ci[1]);
      expect(c.significant).toBe(c.pValue < 0.05);
      expect(r.baseline.ci[metric]!.length).toBe(2);
      expect(md).toMatch(new RegExp(`\\*\\*${metric}\\*\\*, optimized − baseline: [+-]?\\d\\.\\d{3} \\(95% CI [+-]?\\d\\.\\d{3} to [+-]?\\d\\.\\d{3}, ${c.ciMethod}\\), p [=<] [\\d.]+(, Holm-adjusted p [=<] [\\d.]+)?, ${test}: (not )?significant at the 5% level(; mde[^(]*\\(80% power\\)|; mde: none \\([^)]*\\))? \\(${c.better} examples better, ${c.worse} worse, of 12\\)\\.`));
    }
    expect(json).not.toMatch(/durationMs|startedAt|runId|cost/);
    // A second run, in a fresh folder, gives the same bytes.
    expect((await run("poem-sentiment", 12, "poem-sentiment-12-again")).json).toBe(json);
  }, 60000);

  it('--limit 4 can never be significant (McNemar p ≥ 2/2^4 = 0.125), and report.md says "not significant" in words', async () => {
    const { md, results: r } = await run("gsm8k", 4);
    const c = r.comparison.accuracy!;
    expect(c.pValue).toBeGreaterThanOrEqual(0.125);
    expect(c.significant).toBe(false);
    expect(md).toMatch(/\*\*accuracy\*\*, optimized − baseline: [+-]?\d\.\d{3} \(95% CI [+-]?\d\.\d{3} to [+-]?\d\.\d{3}(, clopper-pearson)?\), p = [\d.]+(, Holm-adjusted p = [\d.]+)?, mcnemar-exact: not significant at the 5% level; mde(: none \(too few changed examples for 80% power\)| [\d.]+ \(80% power\)) \(\d examples better, \d worse, of 4\)\./);
    expect(md).toMatch(/\| accuracy \| \d\.\d{3} \(\d\.\d{3}–\d\.\d{3}\) \| \d\.\d{3} \(\d\.\d{3}–\d\.\d{3}\) \|/);
    // The numbers against the rows (helpers below): accuracy from the answers, the p-value of the discordant pairs.
    const rows = storedRows(join(dir, "gsm8k-4"), "gsm8k");
    const gold = goldAnswers("gsm8k", "answer");
    const right = (list: EvaluationRow[]) => list.map((row) => {
      expect(row.expected.answer).toBe(gold.get(row.exampleId!));
      return row.error === null && row.prediction !== null && row.prediction.answer === gold.get(row.exampleId!) ? 1 : 0;
    });
    const [base, opt] = [right(rows.baseline), right(rows.optimized)];
    expect(rows.optimized.map((row) => row.exampleId)).toEqual(rows.baseline.map((row) => row.exampleId));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(r.baseline.metrics.accuracy).toBeCloseTo(mean(base), 12);
    expect(r.optimized!.metrics.accuracy).toBeCloseTo(mean(opt), 12);
    const better = base.filter((b, i) => opt[i]! > b).length;
    const worse = base.filter((b, i) => opt[i]! < b).length;
    expect(c).toMatchObject({ n: 4, better, worse });
    expect(c.pValue).toBeCloseTo(mcnemarP(better, worse), 12);
    expect(c.diff).toBeCloseTo(mean(opt) - mean(base), 12);
  }, 60000);
});

// ---------------------------------------------------------------------------------------------------
// The numbers of results.json against values computed here from the rows: the gold answers read from
// the dataset file, the predictions from the run's lab store, and statistics written from their
// definitions (nothing below calls the library's statistics).

/** n choose k, exactly. */
function choose(n: number, k: number): bigint {
  let c = 1n;
  for (let i = 0; i < k; i++) c = (c * BigInt(n - i)) / BigInt(i + 1);
  return c;
}

/** The exact two-sided McNemar p-value: 2·P(X ≤ min(b, c)) for X ~ Binomial(b + c, 1/2), at most 1; 1 with no discordant pairs. */
function mcnemarP(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  let tail = 0n;
  for (let k = 0; k <= Math.min(b, c); k++) tail += choose(n, k);
  return Math.min(1, (2 * Number(tail)) / 2 ** n);
}

/** Per label: true positives, predicted, gold. Macro-F1 over the labels seen as gold or prediction. */
function labelCounts(gold: readonly string[], predicted: readonly (string | null)[]) {
  const counts = new Map<string, { hits: number; predicted: number; gold: number }>();
  const at = (l: string) => counts.get(l) ?? (counts.set(l, { hits: 0, predicted: 0, gold: 0 }), counts.get(l)!);
  gold.forEach((g, i) => {
    at(g).gold++;
    const p = predicted[i];
    if (p === null || p === undefined) return;
    at(p).predicted++;
    if (p === g) at(g).hits++;
  });
  return counts;
}
function f1Of(c: { hits: number; predicted: number; gold: number }) {
  const precision = c.predicted === 0 ? 0 : c.hits / c.predicted;
  const recall = c.gold === 0 ? 0 : c.hits / c.gold;
  return { precision, recall, f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall), support: c.gold };
}
function macroF1(gold: readonly string[], predicted: readonly (string | null)[]): number {
  const per = [...labelCounts(gold, predicted).values()].map((c) => f1Of(c).f1);
  return per.reduce((a, b) => a + b, 0) / per.length;
}

// ---- The interval methods: computed here from their textbook definitions. -------------------------
// A share (accuracy) has a Wilson score interval; the paired difference of 0/1 scores the
// Clopper–Pearson interval of better / (better + worse), scaled by (better + worse) / n and shifted
// to a difference (the interval that agrees with the exact McNemar test).
const INTERVAL_METHOD = "Wilson and Clopper–Pearson";
const Z975 = 1.959963984540054;

function wilson(k: number, n: number): [number, number] {
  const p = k / n, z2 = Z975 * Z975;
  const center = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z975 / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, center - half), Math.min(1, center + half)];
}

/** P(X ≤ k) for X ~ Binomial(m, q), summed term by term. */
function binomialCdf(k: number, m: number, q: number): number {
  let sum = 0;
  for (let i = 0; i <= k; i++) {
    let term = 1;
    for (let j = 0; j < i; j++) term *= (m - j) / (j + 1);
    sum += term * q ** i * (1 - q) ** (m - i);
  }
  return sum;
}

/** The root of a decreasing-in-q tail condition, by bisection. */
function solve(f: (q: number) => number): number {
  let lo = 0, hi = 1;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) > 0) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}

function pairedDifferenceInterval(better: number, worse: number, n: number): [number, number] {
  const m = better + worse;
  if (m === 0) return [0, 0];
  // Lower: P(X ≥ better | q) = 2.5%; upper: P(X ≤ better | q) = 2.5%.
  const lower = better === 0 ? 0 : solve((q) => 0.025 - (1 - binomialCdf(better - 1, m, q)));
  const upper = better === m ? 1 : solve((q) => binomialCdf(better, m, q) - 0.025);
  return [(m / n) * (2 * lower - 1), (m / n) * (2 * upper - 1)];
}

function expectInterval(interval: readonly number[], reference: [number, number]): void {
  expect(interval[0]).toBeCloseTo(reference[0], 6);
  expect(interval[1]).toBeCloseTo(reference[1], 6);
}
// ---------------------------------------------------------------------------------------------------

/** A finished reproduction's evaluation rows, read back from the lab store it wrote in its folder. */
function storedRows(cwd: string, experiment: string): { baseline: EvaluationRow[]; optimized: EvaluationRow[] } {
  const lab = LabStore.open(join(cwd, ".typelm", "lab.sqlite"));
  try {
    const rowsOf = (name: string) => {
      const [summary, ...more] = lab.runs().filter((r) => r.kind === "evaluation" && r.name === name);
      expect(summary).toBeDefined();
      expect(more).toEqual([]);
      const run = lab.run(summary!.id);
      return run?.kind === "evaluation" ? run.rows : [];
    };
    return { baseline: rowsOf(`${experiment} baseline`), optimized: rowsOf(`${experiment} optimized`) };
  } finally {
    lab.close();
  }
}

/** The gold value of `field` for each example id, from the bundled dataset's test split. */
function goldAnswers(experiment: string, field: string): Map<string, unknown> {
  const lines = readFileSync(join("datasets", experiment, "test.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "");
  return new Map(lines.map((l) => JSON.parse(l) as Record<string, unknown>).map((r) => [String(r.id), r[field]]));
}

describe("typelm reproduce: the numbers in results.json, recomputed from the rows", () => {
  it(`poem-sentiment --limit 40: accuracy, macro-F1, confusion, per-label scores, McNemar p-values, differences and (${INTERVAL_METHOD}) intervals`, async () => {
    const cwd = join(dir, "numbers-poem-40");
    mkdirSync(cwd, { recursive: true });
    expect(await runBuiltCli(["reproduce", "poem-sentiment", "--limit", "40"], cwd)).toMatchObject({ code: 0 });
    const r = JSON.parse(readFileSync(join(cwd, "reports", "poem-sentiment", "results.json"), "utf8")) as ReproduceResults;
    const rows = storedRows(cwd, "poem-sentiment");
    const gold = goldAnswers("poem-sentiment", "label");
    const LABELS = ["negative", "no_impact", "positive", "mixed"]; // the dataset's signature.json

    // The same 40 test examples on both sides: the first 40 of the test split, gold labels as in the file.
    const ids = rows.baseline.map((row) => row.exampleId!);
    expect(ids).toEqual(Array.from({ length: 40 }, (_, i) => `test-${i}`));
    expect(rows.optimized.map((row) => row.exampleId)).toEqual(ids);
    for (const row of [...rows.baseline, ...rows.optimized]) expect(row.expected.label).toBe(gold.get(row.exampleId!));
    const goldLabels = ids.map((id) => String(gold.get(id)));

    const side = (which: "baseline" | "optimized") => {
      const predicted = rows[which].map((row) => (row.error === null && row.prediction !== null ? String(row.prediction.label) : null));
      const right = predicted.map((p, i) => (p === goldLabels[i] ? 1 : 0));
      return { predicted, right, accuracy: right.reduce((a: number, b) => a + b, 0) / right.length };
    };
    const base = side("baseline");
    const opt = side("optimized");
    // A run where the optimizer changed something, so the checks below compare different numbers.
    expect(opt.accuracy).not.toBe(base.accuracy);

    for (const [which, s] of [["baseline", base], ["optimized", opt]] as const) {
      const e = r[which]!;
      expect(e.examples).toBe(40);
      expect(e.failures).toBe(s.predicted.filter((p) => p === null).length);
      expect(e.metrics.accuracy).toBeCloseTo(s.accuracy, 12);
      expect(e.metrics.f1_score).toBeCloseTo(macroF1(goldLabels, s.predicted), 12);
      // Confusion: rows gold, columns predicted, in the signature's label order.
      expect(e.confusion!.labels).toEqual(LABELS);
      const matrix = LABELS.map((g) => LABELS.map((p) => goldLabels.filter((x, i) => x === g && s.predicted[i] === p).length));
      expect(e.confusion!.matrix).toEqual(matrix);
      expect(e.confusion!.unanswered).toEqual(LABELS.map((g) => goldLabels.filter((x, i) => x === g && s.predicted[i] === null).length));
      const counts = labelCounts(goldLabels, s.predicted);
      for (const label of LABELS) {
        const expected = f1Of(counts.get(label) ?? { hits: 0, predicted: 0, gold: 0 });
        const got = e.perLabel![label]!;
        expect(got.support).toBe(expected.support);
        for (const k of ["precision", "recall", "f1"] as const) expect(got[k]).toBeCloseTo(expected[k], 12);
      }
      const hits = s.right.reduce((a: number, b) => a + b, 0);
      expectInterval(e.ci.accuracy!, wilson(hits, 40));
      expect(e.ciMethod).toMatchObject({ accuracy: "wilson", f1_score: "bootstrap-bca" });
    }

    // The comparison: pairs by example, examples that went 0 → 1 and 1 → 0, the exact McNemar p-value.
    const better = ids.filter((_, i) => opt.right[i]! > base.right[i]!).length;
    const worse = ids.filter((_, i) => opt.right[i]! < base.right[i]!).length;
    expect(better + worse).toBeGreaterThan(0);
    const p = mcnemarP(better, worse);
    const c = r.comparison.accuracy!;
    expect(c).toMatchObject({ n: 40, better, worse, test: "mcnemar-exact", ciMethod: "clopper-pearson", confidence: 0.95 });
    expect(c.pValue).toBeCloseTo(p, 12);
    expect(c.significant).toBe(p < 0.05);
    // f1_score: the permutation test of macro-F1 (swap the two predictions of an example). Exact when at
    // most 16 examples changed their prediction: enumerate every swap pattern here.
    const f1c = r.comparison.f1_score!;
    expect(f1c.test).toBe("permutation-macro-f1");
    const differ = ids.map((_, i) => i).filter((i) => base.predicted[i] !== opt.predicted[i]);
    if (differ.length <= 16) {
      const observed = Math.abs(macroF1(goldLabels, opt.predicted) - macroF1(goldLabels, base.predicted));
      let extreme = 0;
      for (let mask = 0; mask < 2 ** differ.length; mask++) {
        const a = [...base.predicted], b = [...opt.predicted];
        differ.forEach((i, bit) => { if (mask & (1 << bit)) [a[i], b[i]] = [b[i]!, a[i]!]; });
        if (Math.abs(macroF1(goldLabels, b) - macroF1(goldLabels, a)) >= observed - 1e-12) extreme++;
      }
      expect(f1c.pValue).toBeCloseTo(extreme / 2 ** differ.length, 12);
    }
    const acc = r.comparison.accuracy!;
    expect(acc.a).toBeCloseTo(base.accuracy, 12);
    expect(acc.b).toBeCloseTo(opt.accuracy, 12);
    expect(acc.diff).toBeCloseTo(opt.accuracy - base.accuracy, 12);
    expect(acc.diff).toBeCloseTo((better - worse) / 40, 12);
    const f1 = r.comparison.f1_score!;
    expect(f1.diff).toBeCloseTo(macroF1(goldLabels, opt.predicted) - macroF1(goldLabels, base.predicted), 12);
    expectInterval(acc.ci, pairedDifferenceInterval(better, worse, 40));
  }, 90000);
});
