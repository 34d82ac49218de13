import { afterAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Predict, defineExperiment, loadDataset } from "../../lib/index.js";
import { runExperiment } from "../../lib/lab/experiment/run.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-dataset-manifest-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const signature = (values: string[]) => JSON.stringify({
  name: "Mood", description: "Say the mood of a line.", input: { line: { type: "string" } }, output: { label: { type: "enum", values } },
}, null, 2) + "\n";

function folder(name: string): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  const rows = [["the sun is warm", "happy"], ["the rain will not stop", "sad"], ["a plain day", "calm"], ["an empty house", "sad"]];
  for (const split of ["train", "dev", "test"]) {
    writeFileSync(join(path, `${split}.jsonl`), rows.map(([line, label], i) => JSON.stringify({ id: `${split}-${i}`, line, label })).join("\n") + "\n");
  }
  writeFileSync(join(path, "signature.json"), signature(["happy", "sad", "calm"]));
  return path;
}

describe("the manifest hashes signature.json with the data", () => {
  it("reordering signature.json's enum values changes the manifest (the stand-in's first label, and so the accuracy, changes with it)", async () => {
    const path = folder("mood");
    const experiment = defineExperiment({ name: "mood", dataset: path, program: ({ signature: s }) => new Predict(s), optimizer: "none" });
    const options = { cwd: dir, env: { OLLAMA_HOST: "http://127.0.0.1:9" }, ollamaProbeMs: 50 };
    const before = await runExperiment(experiment, options);
    expect(before.manifest.dataset.files).toEqual({
      "train.jsonl": sha(join(path, "train.jsonl")), "dev.jsonl": sha(join(path, "dev.jsonl")), "test.jsonl": sha(join(path, "test.jsonl")),
      "signature.json": sha(join(path, "signature.json")),
    });
    writeFileSync(join(path, "signature.json"), signature(["sad", "happy", "calm"]));
    const after = await runExperiment(experiment, options);
    expect(after.manifest.dataset.files["signature.json"]).toBe(sha(join(path, "signature.json")));
    expect(after.manifest.dataset.files["signature.json"]).not.toBe(before.manifest.dataset.files["signature.json"]);
    // What the probe saw: the same data files, another accuracy.
    expect(after.models[0]!.result.baseline.metrics.accuracy).not.toBe(before.models[0]!.result.baseline.metrics.accuracy);
  }, 60_000);

  it("loadDataset lists signature.json among the files read only when the signature came from it", async () => {
    const path = folder("given");
    const read = await loadDataset(path);
    expect(read.info.files["signature.json"]).toBe(sha(join(path, "signature.json")));
    const given = await loadDataset(path, { signature: read.signature });
    expect(Object.keys(given.info.files)).toEqual(["train.jsonl", "dev.jsonl", "test.jsonl"]);
  });
});
