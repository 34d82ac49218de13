import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Signature, ValidationError, loadDataset } from "../../lib/index.js";

// What a dataset file can say that used to be read silently as something else: each is now an error naming file and line.

const dir = mkdtempSync(join(tmpdir(), "typelm-datasets-strict-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function folderWith(name: string, files: Record<string, string>): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(join(path, file), content);
  return path;
}

const Scored = Signature.define({ name: "Scored", description: "Score a text.", input: { text: z.string(), weight: z.number() }, output: { label: z.enum(["a", "b"]) } });
const HEADER = "id,text,weight,label";
const splitsOf = (train: string, dev = `${HEADER}\nd1,x,1,a\n`, test = `${HEADER}\nx1,x,1,a\n`) => ({ "train.csv": train, "dev.csv": dev, "test.csv": test });

describe("a CSV header that names a column twice", () => {
  it("is an error naming the file, the header's line and both columns (before, the last column silently won)", async () => {
    const path = folderWith("duplicate-column", splitsOf("id,text,weight,text,label\nt1,first,1,second,a\n"));
    await expect(loadDataset(path, { signature: Scored })).rejects.toThrow(ValidationError);
    await expect(loadDataset(path, { signature: Scored })).rejects.toThrow(
      `${join(path, "train.csv")}:1: the header names the column "text" twice (columns 2 and 4); give each column its own name`,
    );
  });

  it("counts the header's line after blank lines, and a duplicated id column too", async () => {
    const path = folderWith("duplicate-id-column", splitsOf(HEADER + "\nt1,x,1,a\n", `\n\nid,text,weight,label,id\nd1,x,1,a,d2\n`));
    await expect(loadDataset(path, { signature: Scored })).rejects.toThrow(`${join(path, "dev.csv")}:3: the header names the column "id" twice (columns 1 and 5)`);
  });
});

describe("the same id in two splits", () => {
  it("train and test: an error at the second one, naming where the first is", async () => {
    const path = folderWith("train-test", splitsOf(`${HEADER}\nt1,x,1,a\nshared,y,2,b\n`, undefined, `${HEADER}\nx1,x,1,a\nshared,y,2,b\n`));
    await expect(loadDataset(path, { signature: Scored })).rejects.toThrow(
      `${join(path, "test.csv")}:3: id "shared" is also in another split, at ${join(path, "train.csv")}:3; an example belongs to one split only (train, dev or test)`,
    );
  });

  it("train and dev in JSON Lines, and an id written as a number in one and text in the other", async () => {
    const row = (id: unknown) => JSON.stringify({ id, text: "x", weight: 1, label: "a" });
    const path = folderWith("train-dev", {
      "train.jsonl": `${row("t1")}\n${row(7)}\n`, "dev.jsonl": `${row("d1")}\n\n${row("7")}\n`, "test.jsonl": `${row("x1")}\n`,
    });
    await expect(loadDataset(path, { signature: Scored })).rejects.toThrow(`${join(path, "dev.jsonl")}:3: id "7" is also in another split, at ${join(path, "train.jsonl")}:2`);
  });

  it("distinct ids in each split, and rows without ids in every split, still load", async () => {
    const path = folderWith("no-ids", splitsOf("text,weight,label\nx,1,a\ny,2,b\n", "text,weight,label\nz,1,a\n", "text,weight,label\nw,1,b\n"));
    const data = await loadDataset(path, { signature: Scored });
    expect([data.train, data.dev, data.test].map((s) => s.map((e) => e.id))).toEqual([["train-1", "train-2"], ["dev-1"], ["test-1"]]);
  });
});

describe("numbers are read in decimal only", () => {
  it.each(["0x10", "0b101", "0o17", "1_000", "Infinity", "0x"])("%s in a number field is an error naming file and line (before, 0x10 was read as 16)", async (cell) => {
    const path = folderWith(`number-${cell}`, splitsOf(`${HEADER}\nt1,x,1,a\nt2,y,${cell},b\n`));
    await expect(loadDataset(path, { signature: Scored })).rejects.toThrow(
      `${join(path, "train.csv")}:3: row "t2" field "weight": expected a number; received ${JSON.stringify(cell)} (numbers are read in decimal, such as 12, -3.5 or 1e3)`,
    );
  });

  it("a JSON Lines string \"0x10\" for a number field is refused the same way", async () => {
    const row = (id: string, weight: unknown) => JSON.stringify({ id, text: "x", weight, label: "a" });
    const path = folderWith("number-jsonl", { "train.jsonl": `${row("t1", "0x10")}\n`, "dev.jsonl": `${row("d1", 1)}\n`, "test.jsonl": `${row("x1", 1)}\n` });
    await expect(loadDataset(path, { signature: Scored })).rejects.toThrow(`${join(path, "train.jsonl")}:1: row "t1" field "weight": expected a number; received "0x10"`);
  });

  it("decimal forms are read as written: 12, -3.5, .5, 5., +2, 1e3, 2.5E-2, and padded with spaces", async () => {
    const cells = ["12", "-3.5", ".5", "5.", "+2", "1e3", "2.5E-2", " 7 "];
    const path = folderWith("number-decimal", splitsOf(`${HEADER}\n${cells.map((c, i) => `t${i},x,${c},a`).join("\n")}\n`));
    const data = await loadDataset(path, { signature: Scored });
    expect(data.train.map((e) => e.input.weight)).toEqual([12, -3.5, 0.5, 5, 2, 1000, 0.025, 7]);
  });

  it("an enum of numbers takes a decimal cell as the number, and keeps 0x10 as text (then refused by the enum; before, it was read as 16)", async () => {
    const Level = Signature.define({ name: "Level", description: "Rate.", input: { text: z.string() }, output: { level: z.enum({ low: 1, high: 16 }) } });
    const ok = folderWith("enum-numbers", { "train.csv": "id,text,level\nt1,x,16\n", "dev.csv": "id,text,level\nd1,x,1\n", "test.csv": "id,text,level\nx1,x,1\n" });
    expect((await loadDataset(ok, { signature: Level })).train[0]!.output.level).toBe(16);
    const hex = folderWith("enum-hex", { "train.csv": "id,text,level\nt1,x,0x10\n", "dev.csv": "id,text,level\nd1,x,1\n", "test.csv": "id,text,level\nx1,x,1\n" });
    await expect(loadDataset(hex, { signature: Level })).rejects.toThrow(`${join(hex, "train.csv")}:2: row "t1" field "level"`);
  });
});

describe("fields named like the properties every object has", () => {
  const signature = (name: string) => JSON.stringify({
    name: "Odd", description: "d", input: { [name]: { type: "string" } }, output: { label: { type: "enum", values: ["a", "b"] } },
  });

  it.each(["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf"])(
    "a row without the declared field %s is missing it, named with file and line (before: \"received function\")",
    async (name) => {
      const row = (id: string) => JSON.stringify({ id, label: "a" });
      const path = folderWith(`missing-${name}`, { "signature.json": signature(name), "train.jsonl": `${row("t1")}\n`, "dev.jsonl": `${row("d1")}\n`, "test.jsonl": `${row("x1")}\n` });
      await expect(loadDataset(path)).rejects.toThrow(`${join(path, "train.jsonl")}:1: row "t1" is missing the field "${name}" the task signature declares (signature.json)`);
    },
  );

  it.each(["constructor", "__proto__"])("a CSV without a %s column says it has no such column", async (name) => {
    const path = folderWith(`no-column-${name}`, { "signature.json": signature(name), "train.csv": "id,label\nt1,a\n", "dev.csv": "id,label\nd1,a\n", "test.csv": "id,label\nx1,a\n" });
    await expect(loadDataset(path)).rejects.toThrow(`${join(path, "train.csv")}:1: the header has no column "${name}" the task signature declares (signature.json); columns found: id, label`);
  });

  it("a row that has the field is read as its value", async () => {
    const path = folderWith("has-constructor", {
      "signature.json": signature("constructor"), "train.csv": "id,constructor,label\nt1,built,a\n", "dev.csv": "id,constructor,label\nd1,x,a\n", "test.csv": "id,constructor,label\nx1,y,b\n",
    });
    const data = await loadDataset(path);
    expect(Object.getOwnPropertyDescriptor(data.train[0]!.input, "constructor")?.value).toBe("built");
  });
});
