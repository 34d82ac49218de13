import { afterAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ValidationError, loadDataset } from "../../lib/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-datasets-encoding-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const line = (id: string, text = "x") => JSON.stringify({ id, text, label: "a" });

/** A dataset folder whose files are the given bytes (signature.json too, when given). */
function folder(name: string, files: { train?: Buffer; dev?: Buffer; test?: Buffer; signature?: Buffer }): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  const signature = JSON.stringify({ name: "Tiny", input: { text: { type: "string" } }, output: { label: { type: "enum", values: ["a", "b"] } } });
  writeFileSync(join(path, "signature.json"), files.signature ?? Buffer.from(signature));
  for (const split of ["train", "dev", "test"] as const) {
    writeFileSync(join(path, `${split}.jsonl`), files[split] ?? Buffer.from(`${line(`${split}-0`)}\n`));
  }
  return path;
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("loadDataset: file encoding", () => {
  it("accepts a UTF-8 byte order mark at the start of a split and of signature.json, and hashes the file's bytes as sha256sum does", async () => {
    const train = Buffer.concat([BOM, Buffer.from(`${line("train-0", "café")}\n${line("train-1")}\n`)]);
    const signature = Buffer.concat([BOM, Buffer.from(JSON.stringify({ input: { text: { type: "string" } }, output: { label: { type: "enum", values: ["a", "b"] } } }))]);
    const data = await loadDataset(folder("bom", { train, signature }));
    expect(data.train.map((e) => e.toJSON())).toEqual([
      { id: "train-0", input: { text: "café" }, output: { label: "a" } },
      { id: "train-1", input: { text: "x" }, output: { label: "a" } },
    ]);
    expect(data.info.splits.train).toEqual({ rows: 2, sha256: sha256(train) });
  });

  it("refuses a split that is not valid UTF-8, naming the file, the line and the byte, instead of reading U+FFFD", async () => {
    // Line 2 holds a Latin-1 "é" (0xE9), which is not UTF-8; line 1 a real U+FFFD, which is.
    const bad = Buffer.concat([Buffer.from(`${line("dev-0", "\ufffd")}\n{"id":"dev-1","text":"caf`), Buffer.from([0xe9]), Buffer.from(`","label":"a"}\n`)]);
    const path = folder("latin1", { dev: bad });
    const error = await loadDataset(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const message = (error as Error).message;
    expect(message).toContain(`${join(path, "dev.jsonl")}:2:`);
    expect(message).toContain("is not valid UTF-8");
    expect(message).toContain(`byte 0xe9 at offset ${bad.indexOf(0xe9)} of the file`);
    expect(message).not.toContain("\ufffd");
  });

  it("refuses a signature.json that is not valid UTF-8, naming the file and line", async () => {
    const signature = Buffer.concat([Buffer.from('{\n"input": { "text": { "type": "string", "description": "'), Buffer.from([0xff, 0xfe]), Buffer.from('" } },\n"output": { "label": { "type": "string" } } }')]);
    const path = folder("bad-signature", { signature });
    await expect(loadDataset(path)).rejects.toThrow(`${join(path, "signature.json")}:2: line 2 is not valid UTF-8`);
  });

  it("a byte order mark anywhere but the very start is not dropped: it stays in the value", async () => {
    const train = Buffer.from(`${line("train-0", "\ufeffx")}\n`);
    const data = await loadDataset(folder("inner-bom", { train }));
    expect(data.train[0]!.input.text).toBe("\ufeffx");
    expect(data.info.splits.train.sha256).toBe(sha256(train));
  });
});
