import { describe, expect, it } from "@jest/globals";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/store/lab-store.js";
import type { EvaluationRun, OptimizationRun } from "../../lib/store/records.js";
import { runBuiltCli } from "../helpers/cli.js";

describe("typelm reproduce --seeds N", () => {
  it("runs the optimizer from seeds s..s+N-1, each optimized program on the test split, and the gain's mean, sd, min and max", async () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-seeds-"));
    const r = await runBuiltCli(["reproduce", "poem-sentiment", "--limit", "30", "--seed", "5", "--seeds", "3"], dir);
    expect(r.code).toBe(0);
    const results = JSON.parse(readFileSync(join(dir, "reports/poem-sentiment/results.json"), "utf8"));
    const part = results.models["simulated/stand-in"];
    expect(part.seeds.map((s: { seed: number }) => s.seed)).toEqual([5, 6, 7]);
    expect(results.manifest.seeds).toBe(3);

    // Each seed's numbers against the lab store: its optimization run used that seed; its test evaluation's accuracy.
    const lab = LabStore.open(join(dir, ".typelm", "lab.sqlite"));
    try {
      const optimizations = lab.runs({ kind: "optimization" }).map((s) => lab.run(s.id) as OptimizationRun);
      expect(optimizations.map((o) => o.config.seed).sort()).toEqual([5, 6, 7]);
      const evaluations = lab.runs({ kind: "evaluation" }).map((s) => lab.run(s.id) as EvaluationRun);
      const accuracyOf = (name: string) => {
        const run = evaluations.find((e) => e.name === name)!;
        expect(run).toBeDefined();
        return run.rows.filter((row) => row.scores.accuracy === 1).length / run.rows.length;
      };
      const base = accuracyOf("poem-sentiment baseline");
      const names = ["poem-sentiment optimized", "poem-sentiment optimized seed 6", "poem-sentiment optimized seed 7"];
      part.seeds.forEach((s: { baseline: number; optimized: number; diff: number; pValue: number }, i: number) => {
        expect(s.baseline).toBeCloseTo(base, 12);
        expect(s.optimized).toBeCloseTo(accuracyOf(names[i]!), 12);
        expect(s.diff).toBeCloseTo(s.optimized - s.baseline, 12);
        expect(s.pValue).toBeGreaterThan(0);
        expect(s.pValue).toBeLessThanOrEqual(1);
      });
      // The first seed's program is the reported one.
      expect(part.seeds[0].optimized).toBeCloseTo(part.optimized.metrics.accuracy, 12);
    } finally {
      lab.close();
    }
    const diffs: number[] = part.seeds.map((s: { diff: number }) => s.diff);
    const mean = (diffs[0]! + diffs[1]! + diffs[2]!) / 3;
    const sd = Math.sqrt(((diffs[0]! - mean) ** 2 + (diffs[1]! - mean) ** 2 + (diffs[2]! - mean) ** 2) / 2);
    expect(part.gain.mean).toBeCloseTo(mean, 12);
    expect(part.gain.sd).toBeCloseTo(sd, 12);
    expect(part.gain.min).toBe(Math.min(...diffs));
    expect(part.gain.max).toBe(Math.max(...diffs));
    const md = readFileSync(join(dir, "reports/poem-sentiment/report.md"), "utf8");
    expect(md).toContain("## Seeds");
    expect(md).toMatch(/^\| 7 \| \d\.\d{3} \| \d\.\d{3} \| [+-]?\d\.\d{3} \| [<=]? ?[\d.]+ \|$/m);
    expect(md).toMatch(/Gain over the seeds: mean [+-]?\d\.\d{3}, sd \d\.\d{3}, min [+-]?\d\.\d{3}, max [+-]?\d\.\d{3}\./);
  }, 180_000);

  it("refuses a bad --seeds", async () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-seeds-bad-"));
    const zero = await runBuiltCli(["reproduce", "poem-sentiment", "--seeds", "0"], dir);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain("--seeds expects a whole number ≥ 1; received 0");
  });
});
