import { afterAll, describe, expect, it } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/index.js";
import { runCli } from "../../lib/lab/cli/index.js";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-cli-errors-"));
const opened: string[] = [];
afterAll(() => {
  for (const path of opened) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

const offline: NodeJS.ProcessEnv = { ...process.env, TYPELM_LM: "", OLLAMA_HOST: "http://127.0.0.1:9" };

async function cli(args: string[], cwd: string, stdout: (t: string) => void = () => {}) {
  let out = "";
  let stderr = "";
  const code = await runCli(args, {
    stdout: (t) => { stdout(t); out += t; }, stderr: (t) => { stderr += t; }, cwd, env: offline, ollamaProbeMs: 200,
  });
  opened.push(join(cwd, ".typelm/lab.sqlite"));
  return { code, stdout: out, stderr };
}

/** A failure as the command line should give it: one line, saying what and where, no stack trace. */
function expectOneSentence(stderr: string): void {
  expect(stderr.endsWith("\n")).toBe(true);
  expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at |\bat .*\.(js|ts):\d+/m);
}

describe("typelm runs on a damaged lab store", () => {
  it("lists a run whose stored summary is not JSON, marked unreadable, instead of failing with a SyntaxError", async () => {
    const cwd = join(dir, "damaged");
    const path = join(cwd, ".typelm/lab.sqlite");
    const lab = LabStore.open(path);
    const good = lab.startRun({ kind: "optimization", name: "good run" });
    lab.finishRun(good, { status: "completed", score: 0.75 });
    const bad = lab.startRun({ kind: "evaluation", name: "damaged run" });
    lab.finishRun(bad, { status: "completed", score: 0.5 });
    openStoreSync(path).prepare("UPDATE lab_runs SET summary_json = '{\"accuracy\": 0.' WHERE id = ?").run(bad);

    const r = await cli(["runs"], cwd);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n").slice(1); // after the line naming the store
    expect(lines[0]).toMatch(/^id\s+kind\s+name\s+status\s+started\s+score$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(new RegExp(`^${bad}\\s+evaluation\\s+damaged run\\s+completed \\(summary unreadable\\)\\s+\\S+\\s+0\\.500$`));
    expect(lines[2]).toMatch(new RegExp(`^${good}\\s+optimization\\s+good run\\s+completed\\s+\\S+\\s+0\\.750$`));
    // --kind and --limit still apply.
    const only = await cli(["runs", "--kind", "evaluation", "--limit", "1"], cwd);
    expect(only.stdout.trimEnd().split("\n").slice(2).map((l) => l.split(/\s{2,}/)[2])).toEqual(["damaged run"]);
    // show and compare name the damaged run in one sentence; the good one still shows.
    const shown = await cli(["show", bad], cwd);
    expect(shown.code).toBe(1);
    expectOneSentence(shown.stderr);
    expect(shown.stderr).toContain(`typelm show: run "${bad}" in ${path} is damaged (its stored JSON does not parse:`);
    expect(await cli(["show", good], cwd)).toMatchObject({ code: 0, stdout: expect.stringContaining(`optimization run ${good}: good run`) });
  });
});

describe("typelm reproduce with a report file it cannot write", () => {
  it("report.md being a directory stops the command before the run, in one sentence naming it", async () => {
    const cwd = join(dir, "report-dir");
    mkdirSync(join(cwd, "reports/poem-sentiment/report.md"), { recursive: true });
    const r = await cli(["reproduce", "poem-sentiment", "--limit", "3"], cwd);
    expect(r.code).toBe(1);
    expectOneSentence(r.stderr);
    expect(r.stderr).toContain(
      `typelm reproduce: Cannot write the report to ${join(cwd, "reports/poem-sentiment")}: ${join(cwd, "reports/poem-sentiment/report.md")} is a directory, not a file;`,
    );
    // Nothing ran: no evaluation was recorded and no results were written.
    expect(existsSync(join(cwd, "reports/poem-sentiment/results.json"))).toBe(false);
    const lab = join(cwd, ".typelm/lab.sqlite");
    expect(existsSync(lab) ? LabStore.open(lab).runs() : []).toEqual([]);
  });

  it("a results.json that cannot be written stops it before the run too", async () => {
    const cwd = join(dir, "results-dir");
    mkdirSync(join(cwd, "reports/poem-sentiment/results.json"), { recursive: true });
    const r = await cli(["reproduce", "poem-sentiment", "--limit", "3"], cwd);
    expect(r.code).toBe(1);
    expectOneSentence(r.stderr);
    expect(r.stderr).toContain(`${join(cwd, "reports/poem-sentiment/results.json")} is a directory, not a file`);
  });

  it("the check changes none of the files it checks", async () => {
    const cwd = join(dir, "existing");
    mkdirSync(join(cwd, "reports/poem-sentiment/metrics.png"), { recursive: true });
    writeFileSync(join(cwd, "reports/poem-sentiment/report.md"), "old report");
    writeFileSync(join(cwd, "reports/poem-sentiment/results.json"), "{}");
    // results.json and report.md are checked before metrics.png, which stops the command.
    const r = await cli(["reproduce", "poem-sentiment", "--limit", "3"], cwd);
    expect(r.stderr).toContain("metrics.png is a directory, not a file");
    expect(r.code).toBe(1);
    expectOneSentence(r.stderr);
    expect(readFileSync(join(cwd, "reports/poem-sentiment/report.md"), "utf8")).toBe("old report");
    expect(readFileSync(join(cwd, "reports/poem-sentiment/results.json"), "utf8")).toBe("{}");
  });
});

describe("an unexpected error in the command line", () => {
  it("is exit code 1 with one line naming the command and the error, not a stack trace", async () => {
    const cwd = join(dir, "unexpected");
    const r = await cli(["runs"], cwd, () => { throw new TypeError("Cannot read properties of undefined (reading 'write')"); });
    expect(r.code).toBe(1);
    expectOneSentence(r.stderr);
    expect(r.stderr).toContain("typelm runs: unexpected TypeError: Cannot read properties of undefined (reading 'write')");
  });
});
