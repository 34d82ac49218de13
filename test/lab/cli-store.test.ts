import { afterAll, describe, expect, it } from "@jest/globals";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { LabStore } from "../../lib/index.js";
import { display } from "../../lib/notebook/index.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { offline, runCliHere } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-cli-store-"));
const opened: string[] = [];
afterAll(() => {
  for (const path of opened) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

const cli = runCliHere;
const REPOSITORY = process.cwd();
const NOTEBOOKS = join(REPOSITORY, "notebooks");

/** A notebook's code cells, in order, as one text. */
function codeOf(file: string): string {
  const notebook = JSON.parse(readFileSync(join(NOTEBOOKS, file), "utf8")) as { cells: { cell_type: string; source: string[] | string }[] };
  return notebook.cells.filter((c) => c.cell_type === "code").map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source)).join("\n");
}

/** What records runs or reads the configured store: an evaluation, an optimizer, the registry, the store itself. */
const RECORDS = /\bnew Evaluation\(|\bnew MIPROv2\(|\bnew GEPA\(|\bnew Registry\(|\bLabStore\.open\(|\bdisplay\.runs\(/;
/** The notebooks' own line that moves the lab store (the store, the registry and the LM cache follow it). */
const STORE_LINE = /^configure\(\(c\) => \{ c\.lab = \{ path: "([^"]+)" \}; \}\);$/m;

describe("typelm runs, show and compare name the store they read", () => {
  it("print the store file on their first line", async () => {
    const cwd = join(dir, "named");
    const path = join(cwd, ".typelm/lab.sqlite");
    opened.push(path);
    const lab = LabStore.open(path);
    const ids = ["a", "b"].map((name) => {
      const id = lab.startRun({ kind: "evaluation", name });
      lab.recordExample(id, {
        index: 0, exampleId: "x", inputs: { q: "?" }, expected: { a: "yes" }, prediction: { a: "yes" }, scores: { accuracy: 1 },
        error: null, durationMs: 1, inputTokens: 1, outputTokens: 1, cost: 0,
      });
      lab.finishRun(id, { status: "completed", score: 1, summary: { metrics: { accuracy: 1 } } });
      return id;
    });
    for (const args of [["runs"], ["show", ids[0]!], ["compare", ids[0]!, ids[1]!]]) {
      const r = await cli(args, cwd);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout.split("\n")[0]).toBe(`lab store: ${path}`);
    }
    // A folder without a store says which file it looked for.
    expect((await cli(["runs"], join(dir, "empty"))).stdout).toBe(`No lab store at ${join(dir, "empty/.typelm/lab.sqlite")} (typelm reproduce creates it).\n`);
  });

  it("display.runs names the store too", async () => {
    const path = join(dir, "display/.typelm/lab.sqlite");
    opened.push(path);
    const lab = LabStore.open(path);
    lab.finishRun(lab.startRun({ kind: "evaluation", name: "one" }), { status: "completed", score: 1 });
    const bundle = (await display.runs(lab))!;
    // The shorter of the absolute path and the path from the working directory (which one depends on
    // where the repository and the temporary folder are).
    const fromHere = relative(process.cwd(), path);
    const shown = fromHere.length < path.length ? fromHere : path;
    expect(bundle["text/plain"].split("\n")[0]).toBe(`1 run in the lab store at ${shown}`);
  });
});

describe("the notebooks record their runs in the repository root's lab store", () => {
  const files = readdirSync(NOTEBOOKS).filter((f) => f.endsWith(".ipynb")).sort();

  it("every notebook that records runs sets the store before its first recording call, to the root's .typelm/lab.sqlite", () => {
    const recording = files.filter((f) => RECORDS.test(codeOf(f)) || /\brunExperiment\(/.test(codeOf(f)));
    expect(recording).toEqual(["01-quickstart.ipynb", "03-evaluation.ipynb", "04-optimization.ipynb", "07-your-experiment.ipynb", "08-judges.ipynb", "09-images.ipynb"]);
    for (const file of recording) {
      const code = codeOf(file);
      const first = code.search(RECORDS);
      if (first >= 0) {
        const line = STORE_LINE.exec(code);
        expect([file, line?.[1]]).toEqual([file, expect.any(String)]);
        expect(line!.index).toBeLessThan(first);
        // A relative path is read from the kernel's working directory, the notebook's folder.
        expect(resolve(NOTEBOOKS, line![1]!)).toBe(join(REPOSITORY, ".typelm/lab.sqlite"));
      }
      // runExperiment records in <cwd>/.typelm/lab.sqlite: every call gives the root as its cwd.
      for (const call of code.matchAll(/\brunExperiment\(([^;]*)\);/g)) {
        const cwd = /\bcwd: "([^"]+)"/.exec(call[1]!);
        expect([file, cwd?.[1]]).toEqual([file, expect.any(String)]);
        expect(resolve(NOTEBOOKS, cwd![1]!)).toBe(REPOSITORY);
      }
    }
  });

  it("an evaluation run under the notebooks' store line, from a notebooks/ folder, is what typelm runs lists at the root", async () => {
    const root = join(dir, "repository");
    const notebooks = join(root, "notebooks");
    mkdirSync(notebooks, { recursive: true });
    opened.push(join(root, ".typelm/lab.sqlite"));
    const storeLine = STORE_LINE.exec(codeOf("03-evaluation.ipynb"))![0];
    const lib = pathToFileURL(join(REPOSITORY, "dist/pkg/index.js")).href;
    const testing = pathToFileURL(join(REPOSITORY, "dist/pkg/testing.js")).href;
    // As a notebook's setup cell and evaluation do, in the kernel's working directory (the notebook's folder).
    const script = `
      import { configure, Evaluation, Predict, loadDataset } from ${JSON.stringify(lib)};
      import { SimulatedLM } from ${JSON.stringify(testing)};
      configure((c) => { c.lm = new SimulatedLM({ model: "stand-in" }); });
      ${storeLine}
      const { test, signature } = await loadDataset("poem-sentiment");
      await new Evaluation({ name: "from a notebook", progress: false }).evaluate({ moduleInstance: new Predict(signature), testExamples: test.slice(0, 3) });
    `;
    await new Promise<void>((done, fail) => {
      execFile(process.execPath, ["--input-type=module", "-e", script], { cwd: notebooks, env: offline }, (error, _out, stderr) => (error ? fail(new Error(stderr)) : done()));
    });
    expect(existsSync(join(notebooks, ".typelm"))).toBe(false);
    const r = await cli(["runs"], root);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`lab store: ${join(root, ".typelm/lab.sqlite")}`);
    expect(lines.slice(2).map((l) => l.split(/\s{2,}/)[2])).toEqual(["from a notebook"]);
  }, 30000);
});
