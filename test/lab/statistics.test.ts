import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ModelChoice } from "../../lib/lab/model-choice.js";
import { renderReport } from "../../lib/lab/report-md.js";
import type { ComparisonResult, ReproduceResults } from "../../lib/lab/reproduce.js";
import { runBuiltCli } from "../helpers/cli.js";

// The reproductions run in child processes (the built CLI): nothing here opens a store or configures an LM.
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
      "**accuracy**, optimized − baseline: +0.269 (95% CI +0.183 to +0.356), p = 0.0001, McNemar exact: significant at the 5% level (33 examples better, 5 worse, of 104).",
    );
    expect(md).toContain(
      "**f1_score**, optimized − baseline: +0.100 (95% CI -0.012 to +0.200), p = 0.071, sign-flip permutation: not significant at the 5% level (12 examples better, 7 worse, of 104).",
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
      expect(Object.keys(c).sort()).toEqual(["a", "b", "better", "ci", "confidence", "diff", "n", "pValue", "significant", "test", "worse"]);
      expect(c).toMatchObject({ a: r.baseline.metrics[metric], b: r.optimized!.metrics[metric], n: 12, confidence: 0.95, test: "McNemar exact" });
      expect(c.diff).toBeCloseTo(c.b - c.a, 12);
      expect(c.ci[0]).toBeLessThanOrEqual(c.ci[1]);
      expect(c.significant).toBe(c.pValue < 0.05);
      expect(r.baseline.ci[metric]!.length).toBe(2);
      expect(md).toMatch(new RegExp(`\\*\\*${metric}\\*\\*, optimized − baseline: [+-]?\\d\\.\\d{3} \\(95% CI [+-]?\\d\\.\\d{3} to [+-]?\\d\\.\\d{3}\\), p [=<] [\\d.]+, McNemar exact: (not )?significant at the 5% level \\(${c.better} examples better, ${c.worse} worse, of 12\\)\\.`));
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
    expect(md).toMatch(/\*\*accuracy\*\*, optimized − baseline: [+-]?\d\.\d{3} \(95% CI [+-]?\d\.\d{3} to [+-]?\d\.\d{3}\), p = [\d.]+, McNemar exact: not significant at the 5% level \(\d examples better, \d worse, of 4\)\./);
    expect(md).toMatch(/\| accuracy \| \d\.\d{3} \(\d\.\d{3}–\d\.\d{3}\) \| \d\.\d{3} \(\d\.\d{3}–\d\.\d{3}\) \|/);
  }, 60000);
});
