import { afterAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Predict, ValidationError, loadDataset } from "../../lib/index.js";
import { compiled } from "../../lib/signature/compile.js";

const root = process.cwd();
/** The SOURCE_COMMIT files of the raw datasets folder, copied here so a fresh clone can run this test. */
const SOURCE_COMMITS: Record<string, string> = {
  "poem-sentiment": "612e9a1f86799126c68f0c5d9c3f1fc28f88068f",
  banking77: "57ec275d8078af65b7731c2a98be812d844a6d6b",
  restaurant8k: "57ec275d8078af65b7731c2a98be812d844a6d6b",
  gsm8k: "3101c7d5072418e28b9008a6636bde82a006892c",
  "squality-ratings": "dc08d4f574639d773bc64ef3ab3527043108fb4e",
};
const dir = mkdtempSync(join(tmpdir(), "typelm-datasets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small dataset folder in the bundled layout, for the bad-input tests. */
function folder(name: string, lines: Record<"train" | "dev" | "test", string[]>): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, "signature.json"), JSON.stringify({
    name: "Tiny", description: "Say the label.",
    input: { text: { type: "string" } },
    output: { label: { type: "enum", values: ["a", "b"] }, note: { type: "string", nullable: true }, n: { type: "number" } },
  }));
  for (const split of ["train", "dev", "test"] as const) writeFileSync(join(path, `${split}.jsonl`), lines[split].join("\n") + "\n");
  return path;
}
const good = (id: string) => JSON.stringify({ id, text: "x", label: "a", note: null, n: 1 });

describe("bundled datasets", () => {
  it.each(["poem-sentiment", "banking77", "gsm8k", "restaurant8k", "squality-ratings"])("%s: split hashes match ATTRIBUTION.md and the files", async (name) => {
    const data = await loadDataset(name);
    const attribution = readFileSync(join(root, "datasets", name, "ATTRIBUTION.md"), "utf8");
    for (const split of ["train", "dev", "test"] as const) {
      const text = readFileSync(join(root, "datasets", name, `${split}.jsonl`));
      const sha = createHash("sha256").update(text).digest("hex");
      expect(attribution).toContain(`| ${split}.jsonl | ${data[split].length} | \`${sha}\` |`);
      expect(data.info.splits[split]).toEqual({ rows: data[split].length, sha256: sha });
      expect(data[split].length).toBeGreaterThan(0);
      expect(data[split].length).toBeLessThanOrEqual(name === "poem-sentiment" ? 892 : 200);
      // Ids are <split>-<n>, unique.
      expect(new Set(data[split].map((e) => e.id)).size).toBe(data[split].length);
      for (const e of data[split]) expect(e.id).toMatch(new RegExp(`^${split}-\\d+$`));
    }
    expect(data.info.name).toBe(name);
    expect(data.info.path).toBe(join(root, "datasets", name));
    expect(data.info.source?.commit).toBe(SOURCE_COMMITS[name]);
    expect(readFileSync(join(root, "datasets", name, "LICENSE"), "utf8")).toContain(name === "gsm8k" ? "MIT License" : "Attribution 4.0 International");
  });

  it("poem-sentiment: every source row, labels as words, ids from the source, the signature an enum", async () => {
    const { train, dev, test, signature, info } = await loadDataset("poem-sentiment");
    expect([train.length, dev.length, test.length]).toEqual([892, 105, 104]);
    // Source train.tsv line 1 is "0 \t with pale blue berries. in these peaceful shades-- \t 1".
    expect(train[0]!.toJSON()).toEqual({ id: "train-0", input: { verse: "with pale blue berries. in these peaceful shades--" }, output: { label: "positive" } });
    expect(new Set(train.map((e) => e.output.label))).toEqual(new Set(["negative", "no_impact", "positive", "mixed"]));
    expect(compiled(signature).outputJsonSchema).toMatchObject({ properties: { label: { enum: ["negative", "no_impact", "positive", "mixed"] } } });
    expect(info.licence).toBe("CC BY 4.0");
    expect(info.source?.repository).toBe("google-research-datasets/poem-sentiment");
    expect(() => new Predict(signature)).not.toThrow();
  });

  it("gsm8k: answers are numbers (commas gone), restaurant8k: slots are nullable strings from the spans", async () => {
    const gsm = await loadDataset("gsm8k");
    expect(gsm.train.every((e) => typeof e.output.answer === "number" && Number.isFinite(e.output.answer))).toBe(true);
    const raw = readFileSync(join(root, "datasets/gsm8k/train.jsonl"), "utf8").split("\n")[0]!;
    const first = JSON.parse(raw) as { answer: number; rationale: string; question: string };
    // The source row (train.jsonl:16) ends "#### 448,000" and has <<...>> annotations.
    expect(first.answer).toBe(448000);
    expect(first.rationale).not.toMatch(/<<|>>/);
    expect(gsm.train[0]!.toJSON()).toEqual({ id: "train-0", input: { question: first.question }, output: { answer: 448000 } });
    const r8k = await loadDataset("restaurant8k");
    // train_5.json[0]: "There will be 5 adults and 1 child." with people = characters 14..34.
    expect(r8k.train[0]!.toJSON()).toEqual({
      id: "train-0", input: { utterance: "There will be 5 adults and 1 child.", requested_slots: ["people"] },
      output: { people: "5 adults and 1 child", date: null, time: null, first_name: null, last_name: null },
    });
    expect(compiled(r8k.signature).outputs.map((f) => [f.name, f.optional])).toEqual([
      ["people", true], ["date", true], ["time", true], ["first_name", true], ["last_name", true],
    ]);
    const bank = await loadDataset("banking77");
    expect(new Set([...bank.train, ...bank.dev, ...bank.test].map((e) => e.output.intent)).size).toBe(10);
    const trainTexts = new Set(bank.train.map((e) => e.input.text));
    expect(bank.dev.filter((e) => trainTexts.has(e.input.text))).toEqual([]);
  });

  it("squality-ratings: people's verdicts on summaries, split by story, the verdict from the mean rating", async () => {
    const { train, dev, test, signature, info } = await loadDataset("squality-ratings");
    expect([train.length, dev.length, test.length]).toEqual([120, 60, 120]);
    expect(info.licence).toBe("CC BY 4.0");
    expect(info.source?.repository).toBe("nyu-mll/SQuALITY");
    expect(compiled(signature).outputJsonSchema).toMatchObject({ properties: { verdict: { enum: ["pass", "fail"] } } });
    const rows = (split: string) => readFileSync(join(root, `datasets/squality-ratings/${split}.jsonl`), "utf8").trim().split("\n")
      .map((l) => JSON.parse(l) as { id: string; verdict: string; correctness: number; ratings: number[]; system: string; source: string; summary: string; reference: string });
    // The source's first rated summary (all-responses.jsonl line 1, story 50827, question 0, BART): reviewers gave 10, 60 and 40.
    const first = rows("test").find((r) => r.source === "all-responses.jsonl:1 passage 50827 question 0 bart")!;
    expect(first.ratings).toEqual([10, 60, 40]);
    expect(first.verdict).toBe("fail");
    expect(first.summary.startsWith("The story begins with the executive officer of the Mapping Command")).toBe(true);
    const stories: Record<string, Set<string>> = {};
    for (const split of ["train", "dev", "test"]) {
      for (const r of rows(split)) {
        // pass exactly when the reviewers' mean correctness is at least 50.
        const mean = r.ratings.reduce((a, b) => a + b, 0) / r.ratings.length;
        expect(r.correctness).toBeCloseTo(mean, 9);
        expect(r.verdict).toBe(mean >= 50 ? "pass" : "fail");
        // The reference is another person's answer, never the judged summary itself.
        expect(r.reference).not.toBe(r.summary);
        (stories[split] ??= new Set()).add(/passage (\d+)/.exec(r.source)![1]!);
      }
    }
    expect([stories.train!.size, stories.dev!.size, stories.test!.size]).toEqual([8, 4, 8]);
    const all = [...stories.train!, ...stories.dev!, ...stories.test!];
    expect(new Set(all).size).toBe(20);
    expect(readFileSync(join(root, "datasets/squality-ratings/LICENSE"), "utf8")).toContain("Creative Commons Attribution 4.0 International Public License");
  });

  it("ids are stable: the same example has the same id on every load", async () => {
    const a = await loadDataset("banking77");
    const b = await loadDataset(join(root, "datasets/banking77"));
    expect(b.test.map((e) => [e.id, e.input.text])).toEqual(a.test.map((e) => [e.id, e.input.text]));
    expect(a.test[7]!.id).toBe("test-7");
    expect(b.info.name).toBe("banking77");
  });
});

describe("bad input", () => {
  it("an unknown name lists the bundled datasets", async () => {
    await expect(loadDataset("poems")).rejects.toThrow(ValidationError);
    await expect(loadDataset("poems")).rejects.toThrow(/Unknown dataset "poems": the bundled ones are poem-sentiment, banking77, gsm8k, restaurant8k, squality-ratings, shapes;/);
    await expect(loadDataset(join(dir, "nowhere"))).rejects.toThrow(/does not exist/);
  });

  it("a malformed JSONL line names the file and the line", async () => {
    const path = folder("malformed", { train: [good("train-0"), good("train-1")], dev: [good("dev-0"), "{\"id\": \"dev-1\", \"text\": "], test: [good("test-0")] });
    await expect(loadDataset(path)).rejects.toThrow(`${join(path, "dev.jsonl")}:2: line 2 is not valid JSON`);
  });

  it("a row missing a field, a value of the wrong type and a repeated id are named with file and line", async () => {
    const missing = folder("missing", { train: [good("train-0"), JSON.stringify({ id: "train-1", text: "x", note: null, n: 1 })], dev: [good("dev-0")], test: [good("test-0")] });
    await expect(loadDataset(missing)).rejects.toThrow(`${join(missing, "train.jsonl")}:2: row "train-1" is missing the field "label"`);
    const wrong = folder("wrong", { train: [good("train-0")], dev: [good("dev-0")], test: [JSON.stringify({ id: "test-0", text: "x", label: "c", note: null, n: 1 })] });
    await expect(loadDataset(wrong)).rejects.toThrow(new RegExp(`test\\.jsonl:1: row "test-0" field "label" does not fit the signature: .*received "c"`));
    const repeated = folder("repeated", { train: [good("train-0"), good("train-0")], dev: [good("dev-0")], test: [good("test-0")] });
    await expect(loadDataset(repeated)).rejects.toThrow(/train\.jsonl:2: id "train-0" was already used on line 1/);
    const noId = folder("no-id", { train: [JSON.stringify({ text: "x", label: "a", note: null, n: 1 })], dev: [good("dev-0")], test: [good("test-0")] });
    // A row without an id gets one from its split and position (API: "train-<n>"-style ids).
    expect((await loadDataset(noId)).train.map((e) => e.id)).toEqual(["train-1"]);
  });

  it("a folder without ATTRIBUTION.md still loads, with a null licence; nullable fields accept null", async () => {
    const path = folder("plain", { train: [good("train-0")], dev: [good("dev-0")], test: [good("test-0")] });
    const data = await loadDataset(path);
    expect(data.info).toMatchObject({ name: "plain", licence: null, source: null });
    expect(data.train[0]!.output).toEqual({ label: "a", note: null, n: 1 });
  });

  it("a signature.json with an unknown type names the field", async () => {
    const path = folder("badsig", { train: [good("train-0")], dev: [good("dev-0")], test: [good("test-0")] });
    writeFileSync(join(path, "signature.json"), JSON.stringify({ input: { text: { type: "text" } }, output: { label: { type: "string" } } }));
    await expect(loadDataset(path)).rejects.toThrow(/signature\.json: input\.text: unknown type "text"/);
  });
});
