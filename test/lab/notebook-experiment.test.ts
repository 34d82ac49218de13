// Notebook 07 runs the experiment file named by one variable at its top, and the README says how to
// open the notebooks. The notebook's code cells run here as a Node module (TypeScript stripped by
// esbuild, as tslab compiles them), from a notebooks/ folder beside a project that imports "typelm".
import { afterAll, describe, expect, it } from "@jest/globals";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transformSync } from "esbuild";
import { LabStore } from "../../lib/index.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { offline, runCliHere } from "../helpers/cli.js";

const REPOSITORY = process.cwd();
const dir = mkdtempSync(join(tmpdir(), "typelm-notebook-07-"));
const opened: string[] = [];
afterAll(() => {
  for (const path of opened) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});


function codeCells(file: string): string[] {
  const notebook = JSON.parse(readFileSync(join(REPOSITORY, "notebooks", file), "utf8")) as { cells: { cell_type: string; source: string[] }[] };
  return notebook.cells.filter((c) => c.cell_type === "code").map((c) => c.source.join(""));
}

const VARIABLE = /^const experimentFile = "([^"]+)";$/m;

describe("notebook 07 runs the experiment named at its top", () => {
  it("names the experiment file in one variable in its first code cell, and nowhere else", () => {
    const cells = codeCells("07-your-experiment.ipynb");
    expect(VARIABLE.exec(cells[0]!)?.[1]).toBe("../experiments/poem-sentiment.ts");
    // Nothing else in the cells is tied to the bundled experiment: no other path, name or metric.
    const rest = cells.join("\n").replace(VARIABLE, "");
    expect(rest).not.toMatch(/experiments\/|poem-sentiment|\.accuracy\b/);
  });

  it("with the variable set to an experiment of one's own, its cells run that experiment and record it in the root's store", async () => {
    const project = join(dir, "project");
    mkdirSync(join(project, "node_modules"), { recursive: true });
    mkdirSync(join(project, "notebooks"));
    // As scripts/setup-notebooks.sh links node_modules/typelm for the notebooks.
    symlinkSync(REPOSITORY, join(project, "node_modules", "typelm"), "dir");
    symlinkSync(join(REPOSITORY, "node_modules", "zod"), join(project, "node_modules", "zod"), "dir");
    expect((await runCliHere(["init", "support"], project)).code).toBe(0);

    const code = codeCells("07-your-experiment.ipynb").join("\n").replace(VARIABLE, 'const experimentFile = "../experiments/support.ts";');
    const { code: js } = transformSync(code, { loader: "ts", format: "esm" });
    writeFileSync(join(project, "notebooks", "07.mjs"), js);
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(process.execPath, ["07.mjs"], { cwd: join(project, "notebooks"), env: offline }, (error, stdout, stderr) => {
        done({ code: error === null ? 0 : 1, stdout, stderr });
      });
    });
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('name: "support"'); // the file itself, printed by the first cell
    expect(run.stdout).toContain("experiment support, model: simulated/stand-in");
    expect(run.stdout).toMatch(/^accuracy: baseline \d\.\d{3}, optimized \d\.\d{3}$/m);
    expect(run.stdout).toContain('"file": "experiments/support.ts"'); // the manifest, from the repository root

    const path = join(project, ".typelm/lab.sqlite");
    opened.push(path);
    expect(existsSync(join(project, "notebooks/.typelm"))).toBe(false);
    expect(LabStore.open(path).runs().map((r) => r.name)).toEqual(["support optimized", "MIPROv2", "support baseline"]);
  }, 60000);
});

describe("the README", () => {
  it("says how to open the notebooks, with the install line the notebooks guide gives, in under 300 lines", () => {
    const readme = readFileSync(join(REPOSITORY, "README.md"), "utf8");
    const guide = readFileSync(join(REPOSITORY, "docs/notebooks.md"), "utf8");
    const apt = /^apt-get install .*jupyter-notebook.*$/m.exec(guide)![0];
    const section = readme.split(/^## /m).find((s) => s.startsWith("Notebooks\n"));
    expect(section).toBeDefined();
    expect(section).toContain(apt);
    expect(section).toContain("npm run lab");
    expect(section).toContain("(docs/notebooks.md)");
    expect(readme.split("\n").length).toBeLessThan(300);
  });
});
