import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { planExperiment } from "../../lib/lab/experiment/plan.js";
import { sourceFiles } from "../../scripts/layout.js";

const LAB = join(dirname(fileURLToPath(import.meta.url)), "../../lib/lab");

describe("an experiment's plan", () => {
  it("is resolved once from the options and the environment given", () => {
    const log = () => {};
    const plan = planExperiment({
      lm: ["openai/a", "anthropic/b"], limit: 5, seed: 3, seeds: 2, cache: false, batch: true, cwd: "/srv/exp", log, modelCheckMs: 1000, ollamaProbeMs: 50,
      env: { TYPELM_LM: "ollama/c", OLLAMA_HOST: "http://127.0.0.1:9", TYPELM_LAB_URL: "postgres://lab@db/typelm", GITHUB_STEP_SUMMARY: "/tmp/summary.md", OTHER: "x" },
      gate: { baseline: "reports/x/results.json", tolerance: 0.02 },
    });
    expect(plan).toEqual({
      cwd: "/srv/exp", limit: 5, seed: 3, seeds: 2,
      models: { ids: ["openai/a", "anthropic/b"], env: { TYPELM_LM: "ollama/c", OLLAMA_HOST: "http://127.0.0.1:9" }, ollamaProbeMs: 50, checkMs: 1000 },
      store: { team: "postgres://lab@db/typelm", file: "/srv/exp/.typelm/lab.sqlite", cache: undefined, register: true },
      resume: { batch: true, markers: "/srv/exp/.typelm/running" },
      gate: { baseline: "reports/x/results.json", tolerance: 0.02, summaryFile: "/tmp/summary.md" },
      log, checkDataset: undefined,
    });
  });

  it("keeps the response cache in the working folder's file without a team's lab, and checks counts at the door", () => {
    const plan = planExperiment({ cwd: "/srv/other", env: {}, register: false });
    expect(plan.store).toEqual({ team: undefined, file: "/srv/other/.typelm/lab.sqlite", cache: "/srv/other/.typelm/lab.sqlite", register: false });
    expect(plan.models).toEqual({ ids: [], env: { TYPELM_LM: undefined, OLLAMA_HOST: undefined }, ollamaProbeMs: undefined, checkMs: 120_000 });
    expect(() => planExperiment({ env: {}, limit: 0 })).toThrow("--limit expects a whole number ≥ 1; received 0");
  });

  it("is the only place below the command line where lib/lab reads the process's environment", () => {
    // The doors: the command line (cli/index.ts) and the plan; load.ts hands the environment to `node --check` as it is.
    const doors = new Set(["cli/index.ts", "experiment/plan.ts", "experiment/load.ts"]);
    const readers = sourceFiles(LAB).filter((f) => /process\.env\b/.test(readFileSync(join(LAB, f), "utf8")));
    expect(readers.filter((f) => !doors.has(f))).toEqual([]);
  });
});
