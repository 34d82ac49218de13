import { describe, expect, it } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "../../lib/store/registry/registry.js";
import { offline, runBuiltCli } from "../helpers/cli.js";

/** The gate through the built command line on the bundled poem-sentiment experiment and the offline stand-in. */
describe("typelm run/reproduce --baseline: the regression gate's exit codes and files", () => {
  const dir = mkdtempSync(join(tmpdir(), "typelm-gate-cli-"));
  const baselineFile = join(dir, "base", "poem-sentiment", "results.json");

  it("the same program against its own results.json passes (exit 0) at a tolerance 40 examples can rule out, writes JUnit and the step summary, stores no registry version", async () => {
    expect(await runBuiltCli(["reproduce", "poem-sentiment", "--limit", "40", "--out", "base"], dir)).toMatchObject({ code: 0 });
    const versions = async () => (await new Registry({ path: join(dir, ".typelm", "lab.sqlite") }).versions("poem-sentiment")).length;
    const before = await versions();
    expect(before).toBeGreaterThanOrEqual(1); // a plain run registers its optimized program
    const summary = join(dir, "summary.md");
    writeFileSync(summary, "earlier steps\n");
    // (Contract change: 40 unchanged examples cannot rule out a drop of 0.05, the default tolerance; they can rule out 0.1.)
    const r = await runBuiltCli(
      ["reproduce", "poem-sentiment", "--limit", "40", "--out", "again", "--baseline", baselineFile, "--junit", "gate.xml", "--tolerance", "0.1"], dir,
      { ...offline, GITHUB_STEP_SUMMARY: summary },
    );
    expect(r.code).toBe(0);
    // A gate run stores no registry version.
    expect(await versions()).toBe(before);
    expect(r.stderr).toMatch(/simulated\/stand-in accuracy \(primary\): baseline \d\.\d{3}, this run \d\.\d{3}, difference 0\.000/);
    expect(r.stderr).toContain("gate: passed");
    const xml = readFileSync(join(dir, "gate.xml"), "utf8");
    expect(xml).toContain('<testsuite name="poem-sentiment" tests="2" failures="0"');
    const md = readFileSync(summary, "utf8");
    expect(md.startsWith("earlier steps\n### typelm gate: poem-sentiment passed")).toBe(true);
    expect(md).toMatch(/\| simulated\/stand-in \| accuracy \(primary\) \| (\d\.\d{3}) \| \1 \| 0\.000 \|/);
  }, 120_000);

  it("a baseline that got every example right makes this run a significant regression: exit 1, a JUnit failure", async () => {
    const base = JSON.parse(readFileSync(baselineFile, "utf8"));
    const part = base.models["simulated/stand-in"];
    const evaluation = part.optimized ?? part.baseline;
    const wrongNow = evaluation.rows.filter((r: { scores: { accuracy: number } }) => r.scores.accuracy === 0).length;
    expect(wrongNow).toBeGreaterThanOrEqual(6); // enough discordant pairs for p < 0.05 (2/2^6 = 0.031)
    for (const row of evaluation.rows) {
      row.scores.accuracy = 1;
      row.scores.f1_score = 1;
      row.prediction = { ...row.expected };
    }
    // Every metric agrees with the rows (a summary that disagrees with its rows is refused).
    evaluation.metrics.accuracy = 1;
    evaluation.metrics.f1_score = 1;
    writeFileSync(join(dir, "perfect.json"), JSON.stringify(base));
    const r = await runBuiltCli(["reproduce", "poem-sentiment", "--limit", "40", "--out", "third", "--baseline", "perfect.json", "--junit", "fail.xml"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/REGRESSION: accuracy fell significantly/);
    expect(r.stderr).toContain("gate: failed");
    // The report is still written: the run itself succeeded.
    expect(existsSync(join(dir, "third", "poem-sentiment", "report.md"))).toBe(true);
    const parsed = execFileSync("python3", ["-c", `
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for c in root.iter("testcase"):
    f = c.find("failure")
    print(c.get("name"), "|", f.get("message") if f is not None else "ok")
`, join(dir, "fail.xml")], { encoding: "utf8" });
    // (Contract change: the message starts with the verdict word and the p-value is one-sided.)
    expect(parsed).toMatch(/^accuracy \(primary\) \| failed: accuracy fell significantly: -0\.\d{3}, one-sided p [=<] [\d.]+$/m);
    expect(parsed).toMatch(/^f1_score \| ok$/m);
  }, 120_000);

  it("stops before any model call when the baseline holds other examples, and refuses gate options without --baseline", async () => {
    const r = await runBuiltCli(["reproduce", "poem-sentiment", "--limit", "8", "--out", "fourth", "--baseline", baselineFile], dir);
    // (Contract change: a baseline of other examples is a wrong baseline, exit 2; so are gate options without --baseline.)
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--baseline: results\.json at .* holds other test examples than this run: "test-8" is in the baseline but not in this run's test split/);
    expect(r.stderr).not.toContain("baseline: evaluating");
    expect(existsSync(join(dir, "fourth", "poem-sentiment", "results.json"))).toBe(false);
    const noBase = await runBuiltCli(["reproduce", "poem-sentiment", "--max-drop", "0.02"], dir);
    expect(noBase.code).toBe(2);
    expect(noBase.stderr).toContain("--tolerance (--max-drop), --allow-underpowered and --junit need --baseline");
    const badDrop = await runBuiltCli(["reproduce", "poem-sentiment", "--baseline", baselineFile, "--max-drop", "two"], dir);
    expect(badDrop.code).toBe(2);
    expect(badDrop.stderr).toContain('--max-drop expects the largest drop to tolerate, a number from 0 up to (not including) 1, e.g. 0.05 for 5 points; received "two"');
    const missing = await runBuiltCli(["reproduce", "poem-sentiment", "--baseline", "nowhere/results.json"], dir);
    expect(missing.stderr).toMatch(/--baseline: no file at .*nowhere\/results\.json/);
  }, 120_000);
});
