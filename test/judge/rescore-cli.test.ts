import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, LabStore, Predict, Signature } from "../../lib/index.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { runBuiltCli } from "../helpers/cli.js";

const root = process.cwd();
const dir = mkdtempSync(join(tmpdir(), "typelm-rescore-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A user's project folder with typelm (this repository, built) installed. */
function project(name: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, "node_modules"), { recursive: true });
  mkdirSync(join(path, ".typelm"), { recursive: true });
  symlinkSync(root, join(path, "node_modules", "typelm"), "dir");
  return path;
}

class Capital extends Signature {
  static override input = { country: z.string() };
  static override output = { answer: z.string() };
}

/** Records an evaluation of 4 examples (odd ones wrong) in the project's lab store; returns its run id. */
async function sourceRun(cwd: string): Promise<string> {
  const lm = new ScriptedLM((req) => {
    const n = Number(/(\d+)/.exec(String(req.inputs?.["country"]))![1]);
    return { answer: n % 2 === 0 ? `Capital ${n}` : `Nowhere ${n}` };
  });
  const examples = Array.from({ length: 4 }, (_, n) => new FewShotExample({ input: { country: `country ${n}` }, output: { answer: `Capital ${n}` }, id: `c-${n}` }));
  const report = await new Evaluation({ lab: LabStore.open(join(cwd, ".typelm", "lab.sqlite")), progress: false, name: "capitals" })
    .evaluate({ moduleInstance: new Predict(Capital).configure((c) => { c.lm = lm; }), testExamples: examples, metrics: ["accuracy"] });
  return report.runId!;
}

const JUDGE = `import { Judge } from "typelm";
import { ScriptedLM } from "typelm/testing";

export default new Judge({
  name: "correct",
  criteria: "The answer names the same city as the reference.",
  reference: true,
  lm: new ScriptedLM((req) => ({
    rationale: "compared with the reference",
    verdict: req.inputs.answer.answer === req.inputs.reference.answer ? "pass" : "fail",
  })),
});
`;

describe("typelm rescore", () => {
  it("scores a stored run with a judge file and a metric file, and records a new run linked to it", async () => {
    const cwd = project("ok");
    const source = await sourceRun(cwd);
    writeFileSync(join(cwd, "judge.ts"), JUDGE.replace("(req) =>", "(req: any) =>"));
    writeFileSync(join(cwd, "starts-right.mjs"), `export default (example, prediction) => prediction.answer.startsWith("Capital");\n`);
    const out = await runBuiltCli(["rescore", source.slice(0, 8), "--metric", "judge.ts", "--metric", "starts-right.mjs"], cwd);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`rescored from ${source} (its stored predictions; no program call)`);
    expect(out.stdout).toMatch(/judge calls 4, tokens \d+ in \/ \d+ out, cost \$0\.0000/);
    expect(out.stdout).toMatch(/correct\s+0\.500/);
    expect(out.stdout).toMatch(/starts_right\s+0\.500/);

    const lab = LabStore.open(join(cwd, ".typelm", "lab.sqlite"));
    const runs = lab.runs({ kind: "evaluation" });
    expect(runs).toHaveLength(2);
    const rescored = runs.find((r) => r.id !== source)!;
    expect(rescored.config).toMatchObject({ rescoredFrom: source, module: "Predict", metrics: ["correct", "starts_right"] });
    expect(out.stdout).toContain(rescored.id);
  });

  it("warns on the terminal and in what it prints when the judge gave every row one verdict", async () => {
    const cwd = project("one-verdict");
    const source = await sourceRun(cwd);
    writeFileSync(join(cwd, "judge.mjs"), JUDGE.replace(/verdict: req[^\n]*/, 'verdict: "pass",'));
    const out = await runBuiltCli(["rescore", source, "--metric", "judge.mjs"], cwd);
    expect(out.code).toBe(0);
    const sentence = 'Judge "correct" gave every one of the 4 rows it judged the same verdict (pass)';
    expect(out.stderr).toContain(`TypelmWarning: ${sentence}`);
    expect(out.stdout).toContain(`warning: ${sentence}`);
  });

  it("refuses a source run that is still running, and exits 1", async () => {
    const cwd = project("running");
    const lab = LabStore.open(join(cwd, ".typelm", "lab.sqlite"));
    const id = lab.startRun({ kind: "evaluation", name: "capitals", config: { examples: 4 } });
    lab.recordExample(id, {
      index: 0, exampleId: "c-0", inputs: { country: "country 0" }, expected: { answer: "Capital 0" }, prediction: { answer: "Capital 0" },
      scores: { accuracy: 1 }, error: null, durationMs: 1, inputTokens: 0, outputTokens: 0, cost: 0,
    });
    writeFileSync(join(cwd, "judge.mjs"), JUDGE);
    const out = await runBuiltCli(["rescore", id, "--metric", "judge.mjs"], cwd);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`typelm rescore: evaluation run ${id} is still running (started `);
    expect(lab.runs()).toHaveLength(1);
  });

  it("says what a metric file must export, and exits 1 (2 without --metric: a usage error)", async () => {
    const cwd = project("bad");
    const source = await sourceRun(cwd);
    writeFileSync(join(cwd, "nothing.mjs"), "export default 42;\n");
    const out = await runBuiltCli(["rescore", source, "--metric", "nothing.mjs"], cwd);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/nothing\.mjs must default-export a metric function .* or a Judge/);
    const none = await runBuiltCli(["rescore", source], cwd);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/rescore needs at least one --metric <file>/);
  });
});
