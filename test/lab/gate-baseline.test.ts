import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/store/lab-store.js";
import { runBuiltCli } from "../helpers/cli.js";

// The gate refuses a baseline that is not this experiment on this data, or that cannot be trusted:
// through the built command line, on two experiments whose data files have no `id` column (both get
// row-<n> ids, so their rows would pair), with the offline stand-in and no optimizer.

const root = process.cwd();
const dir = mkdtempSync(join(tmpdir(), "typelm-gate-base-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, "node_modules"), { recursive: true });
symlinkSync(root, join(dir, "node_modules", "typelm"), "dir");
symlinkSync(join(root, "node_modules", "zod"), join(dir, "node_modules", "zod"), "dir");

/** 30 rows without ids; `flip` changes the wording so the two data files differ. */
function csv(flip: boolean): string {
  const rows = ["text,label"];
  for (let i = 0; i < 30; i++) rows.push(`${flip ? "note" : "item"} number ${i},${i % 3 === 0 ? "yes" : "no"}`);
  return rows.join("\n") + "\n";
}

function experiment(name: string, data: string): string {
  return `import { z } from "zod";
import { defineExperiment, Predict, Signature } from "typelm";
const Task = Signature.define({ name: "Task", description: "Say yes or no.", input: { text: z.string() }, output: { label: z.enum(["yes", "no"]) } });
export default defineExperiment({ name: ${JSON.stringify(name)}, dataset: ${JSON.stringify(data)}, signature: Task, program: ({ signature }) => new Predict(signature), metrics: ["accuracy"], optimizer: "none" });
`;
}

for (const [folder, flip] of [["alpha", false], ["beta", true], ["alpha2", true]] as const) {
  mkdirSync(join(dir, "data", folder), { recursive: true });
  writeFileSync(join(dir, "data", folder, "data.csv"), csv(flip));
}
mkdirSync(join(dir, "experiments"), { recursive: true });
writeFileSync(join(dir, "experiments", "alpha.mjs"), experiment("alpha", "../data/alpha"));
writeFileSync(join(dir, "experiments", "beta.mjs"), experiment("beta", "../data/beta"));
// The same experiment name on other data (same row count, so the same row-<n> ids).
writeFileSync(join(dir, "experiments", "alpha-other-data.mjs"), experiment("alpha", "../data/alpha2"));

const alphaResults = join(dir, "reports", "alpha", "results.json");
const gate = (file: string, baseline: string, ...more: string[]) =>
  runBuiltCli(["run", `experiments/${file}`, "--out", "gated", "--baseline", baseline, "--allow-underpowered", ...more], dir);

describe("typelm run --baseline: the baseline must be this experiment on this data, completed, untouched", () => {
  it("refuses another experiment's results.json or run id, and the same experiment on other data (exit 2, before any model call)", async () => {
    expect(await runBuiltCli(["run", "experiments/alpha.mjs"], dir)).toMatchObject({ code: 0 });
    const saved = JSON.parse(readFileSync(alphaResults, "utf8"));
    expect(saved.experiment).toBe("alpha");
    expect(saved.dataset.splits.test.sha256).toMatch(/^[0-9a-f]{64}$/);
    // The rows would pair: both test splits hold row-<n> ids.
    expect(saved.models["simulated/stand-in"].baseline.rows[0].id).toMatch(/^row-\d+$/);

    const other = await gate("beta.mjs", alphaResults);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/--baseline: results\.json at .* is experiment "alpha", this run is "beta"; the baseline must be the same experiment/);
    expect(other.stderr).not.toContain("baseline: evaluating");

    const data = await gate("alpha-other-data.mjs", alphaResults);
    expect(data.code).toBe(2);
    expect(data.stderr).toMatch(/ran on other test data .* the baseline must be the same dataset/);

    const lab = LabStore.open(join(dir, ".typelm", "lab.sqlite"));
    const runId = lab.runs({ kind: "evaluation" }).find((r) => r.name === "alpha baseline")!.id;
    lab.close();
    const byId = await gate("beta.mjs", runId);
    expect(byId.code).toBe(2);
    expect(byId.stderr).toContain(`--baseline: run ${runId} is experiment "alpha", this run is "beta"`);
    // The right baseline passes these checks and runs the gate: 6 unchanged test examples cannot rule out
    // a drop of 0.05, so the verdict is inconclusive: exit 0 with --allow-underpowered, else exit 1.
    const same = await gate("alpha.mjs", runId);
    expect(same.stderr).toContain("gate: inconclusive (allowed by --allow-underpowered: exit 0)");
    expect(same.code).toBe(0);
    const strict = await runBuiltCli(["run", "experiments/alpha.mjs", "--out", "gated", "--baseline", runId, "--junit", "gate.xml"], dir);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/warning: inconclusive: simulated\/stand-in accuracy: .*about 52 examples \(this run has 6\) would make it conclusive/);
    expect(strict.stderr.trimEnd().split("\n").at(-2)).toBe("gate: inconclusive");
    expect(readFileSync(join(dir, "gate.xml"), "utf8")).toMatch(/<failure message="inconclusive: [^"]*" type="inconclusive">/);
  }, 240_000);

  it("refuses a failed run, a run or results.json with failed rows, and a summary that disagrees with its rows (exit 2)", async () => {
    const saved = JSON.parse(readFileSync(alphaResults, "utf8"));
    const evaluation = saved.models["simulated/stand-in"].baseline;

    const tampered = structuredClone(saved);
    tampered.models["simulated/stand-in"].baseline.metrics.accuracy = Math.min(1, evaluation.metrics.accuracy + 0.2);
    writeFileSync(join(dir, "tampered.json"), JSON.stringify(tampered));
    const t = await gate("alpha.mjs", "tampered.json");
    expect(t.code).toBe(2);
    expect(t.stderr).toMatch(/metric "accuracy" says [\d.]+ but its rows give [\d.]+; the summary was changed/);

    const withFailure = structuredClone(saved);
    const part = withFailure.models["simulated/stand-in"].baseline;
    part.rows[0].prediction = null;
    part.rows[0].scores.accuracy = 0;
    part.metrics.accuracy = part.rows.reduce((s: number, r: { scores: { accuracy: number } }) => s + r.scores.accuracy, 0) / part.rows.length;
    writeFileSync(join(dir, "failed-row.json"), JSON.stringify(withFailure));
    const f = await gate("alpha.mjs", "failed-row.json");
    expect(f.code).toBe(2);
    expect(f.stderr).toMatch(/has 1 failed row .*a baseline is a run without failed rows/);

    // Runs made by hand in the lab store: the same experiment and data as recorded by typelm run.
    const lab = LabStore.open(join(dir, ".typelm", "lab.sqlite"));
    const source = lab.runs({ kind: "evaluation" }).find((r) => r.name === "alpha baseline")!;
    const full = lab.run(source.id)!;
    if (full.kind !== "evaluation") throw new Error("not an evaluation");
    const copy = (status: "failed" | "completed", breakRow: boolean) => {
      const id = lab.startRun({ kind: "evaluation", name: "alpha baseline", config: full.config });
      full.rows.forEach((row, i) => lab.recordExample(id, breakRow && i === 0 ? { ...row, prediction: null, error: "LMError: down", scores: { accuracy: 0 } } : row));
      const accuracy = full.rows.reduce((s, r, i) => s + (breakRow && i === 0 ? 0 : r.scores["accuracy"]!), 0) / full.rows.length;
      lab.finishRun(id, { status, score: accuracy, summary: { metrics: { accuracy } }, ...(status === "failed" ? { error: "interrupted" } : {}) });
      return id;
    };
    const failedRun = copy("failed", false);
    const rowFailed = copy("completed", true);
    lab.close();
    const fr = await gate("alpha.mjs", failedRun);
    expect(fr.code).toBe(2);
    expect(fr.stderr).toContain(`--baseline: run ${failedRun} is failed, not completed`);
    const rf = await gate("alpha.mjs", rowFailed);
    expect(rf.code).toBe(2);
    expect(rf.stderr).toMatch(/run [0-9a-f-]+ has 1 failed row \(first: example "row-\d+"\)/);
  }, 240_000);

  it("--max-drop or --tolerance outside [0, 1) is a usage error (exit 2, with a sentence)", async () => {
    for (const value of ["NaN", "5", "1", "-0.1"]) {
      const r = await runBuiltCli(["run", "experiments/alpha.mjs", "--baseline", alphaResults, `--max-drop=${value}`], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--max-drop expects the largest drop to tolerate, a number from 0 up to (not including) 1, e.g. 0.05 for 5 points; received "${value}"`);
    }
    const t = await runBuiltCli(["run", "experiments/alpha.mjs", "--baseline", alphaResults, "--tolerance", "5"], dir);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('--tolerance expects the largest drop to tolerate');
    const both = await runBuiltCli(["run", "experiments/alpha.mjs", "--baseline", alphaResults, "--tolerance", "0.1", "--max-drop", "0.2"], dir);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--tolerance 0.1 and --max-drop 0.2 are the same option with two values; give one");
  }, 120_000);
});
