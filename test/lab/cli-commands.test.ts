import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, LabStore, LMError, Predict, Signature, resetConfiguration } from "../../lib/index.js";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { offline, runBuiltCli, runCliHere } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-cli-commands-"));
const opened: string[] = [];
afterAll(() => {
  for (const path of opened) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => resetConfiguration());

const cli = runCliHere;

function storeIn(name: string): { cwd: string; path: string; lab: LabStore } {
  const cwd = join(dir, name);
  const path = join(cwd, ".typelm/lab.sqlite");
  opened.push(path);
  return { cwd, path, lab: LabStore.open(path) };
}

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative"]) };
}

/** Ten examples; the scripted model answers "positive" to all but example 7, where the provider fails. */
const examples = Array.from({ length: 10 }, (_, n) => new FewShotExample({
  input: { sentence: `sentence ${n}` }, output: { sentiment: n % 3 === 0 ? "negative" : "positive" }, id: `ex-${n}`,
}));
const scripted = () => new ScriptedLM((req) => {
  if (String(req.inputs?.["sentence"]) === "sentence 7") {
    throw new LMError("openai request failed: HTTP 500 on example seven", { status: 500, retryable: false, provider: "openai", attempts: 1 });
  }
  return { sentiment: "positive" };
}, { model: "sentiment-script" });

describe("typelm show and compare take the start of a run id", () => {
  it("an 8-character prefix finds the run; an ambiguous one lists its candidates; an unknown one says so", async () => {
    const { cwd, path, lab } = storeIn("prefix");
    const program = new Predict(Classify).configure((c) => { c.lm = scripted(); });
    const a = await new Evaluation({ lab, name: "first", progress: false }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
    const b = await new Evaluation({ lab, name: "second", progress: false }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
    const idA = a.runId!;
    const idB = b.runId!;

    const shown = await cli(["show", idA.slice(0, 8)], cwd);
    expect(shown.stderr).toBe("");
    expect(shown).toMatchObject({ code: 0, stdout: expect.stringContaining(`evaluation run ${idA}: first`) });
    const compared = await cli(["compare", idA.slice(0, 8), idB.slice(0, 8)], cwd);
    expect(compared.stderr).toBe("");
    expect(compared.code).toBe(0);
    expect(compared.stdout).toContain(`A: ${idA} first`);
    expect(compared.stdout).toContain(`B: ${idB} second`);

    // Two runs whose ids begin alike (uuids do, now and then): give both the same first 8 characters,
    // and different 10th ones (copied from the uuids, they were the same one time in 16: the 10-character
    // prefix below was then ambiguous too).
    const c = lab.startRun({ kind: "evaluation", name: "third" });
    const d = lab.startRun({ kind: "optimization", name: "MIPROv2" });
    const twinC = `abcdef12-c${c.slice(10)}`;
    const twinD = `abcdef12-d${d.slice(10)}`;
    openStoreSync(path).prepare("UPDATE lab_runs SET id = ? WHERE id = ?").run(twinC, c);
    openStoreSync(path).prepare("UPDATE lab_runs SET id = ? WHERE id = ?").run(twinD, d);
    const ambiguous = await cli(["show", "abcdef12"], cwd);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(ambiguous.stderr).toContain(`typelm show: run id "abcdef12" is the start of 2 runs' ids in ${path}: `);
    expect(ambiguous.stderr).toContain(`${twinD} (optimization "MIPROv2", `);
    expect(ambiguous.stderr).toContain(`${twinC} (evaluation "third", `);
    expect(ambiguous.stderr).toContain("give more of the id");
    // One more character decides it.
    expect(await cli(["show", twinC.slice(0, 10)], cwd)).toMatchObject({ code: 0, stdout: expect.stringContaining(`evaluation run ${twinC}: third`) });

    const unknown = await cli(["show", "0000zzzz"], cwd);
    expect(unknown).toMatchObject({ code: 1 });
    expect(unknown.stderr).toBe(`typelm show: no run whose id is or starts with "0000zzzz" in ${path}; "typelm runs" lists the runs and their ids\n`);
  });
});

describe("typelm errors name the command once", () => {
  it("show, compare and init errors start with the command and do not repeat it", async () => {
    const { cwd, lab } = storeIn("once");
    const program = new Predict(Classify).configure((c) => { c.lm = scripted(); });
    const a = await new Evaluation({ lab, name: "ten", progress: false }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
    const fewer = await new Evaluation({ lab, name: "five", progress: false }).evaluate({ moduleInstance: program, testExamples: examples.slice(0, 5), metrics: ["accuracy"] });
    const optimization = lab.startRun({ kind: "optimization", name: "MIPROv2" });

    const unknown = await cli(["show", "nope"], cwd);
    expect(unknown.stderr).toMatch(/^typelm show: no run whose id/);
    const kind = await cli(["compare", a.runId!, optimization], cwd);
    expect(kind.stderr).toBe(`typelm compare: run ${optimization} is an optimization run; compare takes two evaluation runs (see "typelm runs --kind evaluation")\n`);
    // The library's compare() names itself in its errors; the line says "compare" once.
    const unpaired = await cli(["compare", a.runId!, fewer.runId!], cwd);
    expect(unpaired.code).toBe(1);
    expect(unpaired.stderr).toMatch(/^typelm compare: example "ex-5" is in the first report but not in the second/);
    const badName = await cli(["init", "no/slashes"], cwd);
    expect(badName.stderr).toMatch(/^typelm init: "no\/slashes" is not a usable name/);
    for (const r of [unknown, kind, unpaired, badName]) {
      expect(r.code).toBe(1);
      expect(r.stderr).not.toMatch(/typelm (\w+): \1:/);
    }
  });
});

describe("typelm show of an evaluation", () => {
  it("names the model, gives each metric with its interval and lists the failed rows with id and error", async () => {
    const { cwd, lab } = storeIn("show-evaluation");
    const program = new Predict(Classify).configure((c) => { c.lm = scripted(); });
    const exactMatch = (example: FewShotExample, prediction: Record<string, unknown>) => prediction["sentiment"] === example.output["sentiment"];
    const report = await new Evaluation({ lab, name: "sentiment", progress: false }).evaluate({
      moduleInstance: program, testExamples: examples, metrics: ["accuracy", exactMatch],
    });
    const r = await cli(["show", report.runId!], cwd);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines).toContain("model: scripted/sentiment-script");
    expect(lines).toContain("10 examples, 1 failed");
    // Five of the ten are right: 0, 3, 6 and 9 are negative, and 7 failed.
    expect(report.accuracy).toBeCloseTo(0.5, 12);
    const header = lines.find((l) => l.startsWith("metric"))!;
    expect(header).toMatch(/^metric\s+value\s+95% CI\s+method$/);
    for (const metric of ["accuracy", "exactMatch"]) {
      const [low, high] = report.ci[metric]!;
      expect(low).toBeLessThan(0.5);
      expect(high).toBeGreaterThan(0.5);
      const row = lines.find((l) => l.startsWith(`${metric} `));
      // The interval the evaluation itself reported, read back from the store.
      expect(row).toMatch(new RegExp(`^${metric}\\s+0\\.500\\s+${low.toFixed(3)} to ${high.toFixed(3)}\\s+\\S`));
    }
    expect(r.stdout).toContain("failed rows:");
    const failed = lines.find((l) => /^7\s/.test(l));
    expect(failed).toMatch(/^7\s+ex-7\s+LMError: openai request failed: HTTP 500 on example seven$/);
  });

  it("says the model was not recorded for a run written without one", async () => {
    const { cwd, lab } = storeIn("show-old");
    const id = lab.startRun({ kind: "evaluation", name: "old", config: { module: "Predict" } });
    lab.finishRun(id, { status: "completed", score: 1, summary: { metrics: { accuracy: 1 } } });
    const r = await cli(["show", id], cwd);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("model: not recorded\n");
  });
});

describe("typelm compare", () => {
  it("heads every column, the verdict too", async () => {
    const { cwd, lab } = storeIn("verdict");
    const program = new Predict(Classify).configure((c) => { c.lm = scripted(); });
    const a = await new Evaluation({ lab, name: "a", progress: false }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
    const b = await new Evaluation({ lab, name: "b", progress: false }).evaluate({ moduleInstance: program, testExamples: examples, metrics: ["accuracy"] });
    const r = await cli(["compare", a.runId!, b.runId!], cwd);
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    const header = lines.findIndex((l) => l.startsWith("metric"));
    expect(lines[header]).toMatch(/^metric\s+A\s+B\s+difference\s+95% CI\s+interval\s+p-value\s+p \(Holm\)\s+test\s+verdict\s+mde \(80% power\)$/);
    // The verdict and the mde sit under their headers.
    expect(lines[header + 2]!.indexOf("not significant")).toBe(lines[header]!.indexOf("verdict"));
    expect(lines[header + 2]!.slice(lines[header]!.indexOf("mde")).trim()).toBe("none");
  });
});

describe("typelm runs names an optimization run's experiment", () => {
  let ollama: Server;
  let ollamaCalls: string[] = [];
  afterAll(() => new Promise((done) => ollama.close(done)));

  it("--lm simulated/stand-in chooses the stand-in over a running Ollama; the optimizer's run is listed with the experiment", async () => {
    // A local Ollama that lists a model: without --lm it would be chosen.
    ollama = createServer((req, res) => {
      ollamaCalls.push(req.url ?? "");
      if (req.url === "/api/tags") res.end(JSON.stringify({ models: [{ name: "qwen2.5:0.5b" }] }));
      else res.writeHead(500).end();
    });
    await new Promise<void>((done) => ollama.listen(0, "127.0.0.1", done));
    ollamaCalls = [];
    const env = { ...offline, OLLAMA_HOST: `http://127.0.0.1:${(ollama.address() as AddressInfo).port}` };
    const cwd = join(dir, "standin");
    opened.push(join(cwd, ".typelm/lab.sqlite"));
    mkdirSync(cwd, { recursive: true });
    // The built command line: the bundled experiment file imports "typelm" from dist/.
    const r = await runBuiltCli(["reproduce", "poem-sentiment", "--lm", "simulated/stand-in", "--limit", "4"], cwd, env);
    expect(r.stderr).not.toContain("typelm reproduce:");
    expect(r.code).toBe(0);
    const results = JSON.parse(readFileSync(join(cwd, "reports/poem-sentiment/results.json"), "utf8"));
    expect(results.model).toEqual({ id: "simulated/stand-in", source: "--lm", standIn: true });
    expect(readFileSync(join(cwd, "reports/poem-sentiment/report.md"), "utf8").split("\n")[0]).toMatch(/^Model: the offline stand-in .*not a language model/);
    expect(ollamaCalls).toEqual([]);

    const runs = await cli(["runs", "--kind", "optimization"], cwd);
    expect(runs.code).toBe(0);
    const rows = runs.stdout.trimEnd().split("\n").filter((l) => l.includes("optimization"));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.split(/\s{2,}/)[2]).toBe("poem-sentiment MIPROv2");
    const id = rows[0]!.split(/\s+/)[0]!;
    expect((await cli(["show", id.slice(0, 8)], cwd)).stdout).toContain(`optimization run ${id}: poem-sentiment MIPROv2`);
    // The evaluations name the model they ran on.
    const evaluation = LabStore.open(join(cwd, ".typelm/lab.sqlite")).runs({ kind: "evaluation" })[0]!;
    expect((await cli(["show", evaluation.id], cwd)).stdout).toContain("model: simulated/stand-in\n");
  }, 60000);
});
