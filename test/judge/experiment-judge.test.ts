import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FewShotExample, Judge, Predict, defineExperiment, type Metric } from "../../lib/index.js";
import { runExperiment } from "../../lib/lab/experiment/run.js";
import { ScriptedLM } from "../../lib/testing/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-experiment-judge-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function folder(): string {
  const path = join(dir, "mood");
  mkdirSync(path, { recursive: true });
  const rows = [["the sun is warm", "happy"], ["the rain will not stop", "sad"], ["a plain day", "calm"]];
  for (const split of ["train", "dev", "test"]) {
    writeFileSync(join(path, `${split}.jsonl`), rows.map(([line, label], i) => JSON.stringify({ id: `${split}-${i}`, line, label })).join("\n") + "\n");
  }
  writeFileSync(join(path, "signature.json"), JSON.stringify({
    name: "Mood", description: "Say the mood of a line.", input: { line: { type: "string" } }, output: { label: { type: "enum", values: ["happy", "sad", "calm"] } },
  }));
  return path;
}

describe("a judge as an experiment's first metric", () => {
  it("scores the evaluations and is the metric the experiment's optimizer is given", async () => {
    const judgeLM = new ScriptedLM(() => ({ rationale: "fine", verdict: "pass" }));
    const judge = new Judge({ name: "plausible", criteria: "A mood word.", lm: judgeLM });
    let given: Metric | undefined;
    const experiment = defineExperiment({
      name: "mood", dataset: folder(), program: ({ signature }) => new Predict(signature), metrics: [judge, "accuracy"],
      optimizer: ({ metric }) => ({ compile: async ({ moduleInstance }) => { given = metric; return moduleInstance; } }),
    });
    const run = await runExperiment(experiment, { cwd: dir, env: { OLLAMA_HOST: "http://127.0.0.1:9" }, ollamaProbeMs: 50 });
    expect(run.models[0]!.result.baseline.metrics["plausible"]).toBe(1);
    expect(given?.name).toBe("plausible");
    const example = new FewShotExample({ input: { line: "x" }, output: { label: "sad" } });
    await expect(Promise.resolve(given!(example, { label: "happy" }))).resolves.toMatchObject({ score: 1, feedback: "fine" });
  }, 60_000);
});
