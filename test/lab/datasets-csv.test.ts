import { afterAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Signature, loadDataset } from "../../lib/index.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-csv-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const Ticket = Signature.define({
  name: "Ticket",
  description: "Route a ticket.",
  input: { text: z.string(), priority: z.number().int(), urgent: z.boolean() },
  output: { team: z.enum(["billing", "technical"]), note: z.string().nullable(), tags: z.array(z.string()) },
});

function folderWith(name: string, files: Record<string, string | Buffer>): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(join(path, file), content);
  return path;
}

const HEADER = "id,text,priority,urgent,team,note,tags";
const simple = (id: string) => `${id},plain,1,false,billing,,[]`;

describe("loadDataset: CSV splits", () => {
  it("reads quoted commas, quotes, newlines inside quotes, a BOM and CRLF, and converts each cell to its field's type", async () => {
    const train = "\uFEFF" + [
      HEADER,
      't1,"Refund, please ""now""",2,true,billing,"two\r\nlines","[""refund"",""card""]"',
      "t2,Cannot log in,1,no,technical,,[]",
    ].join("\r\n") + "\r\n";
    const path = folderWith("quoted", { "train.csv": train, "dev.csv": `${HEADER}\n${simple("d1")}\n`, "test.csv": `${HEADER}\n${simple("x1")}\n` });
    const data = await loadDataset(path, { signature: Ticket });
    expect(data.train.map((e) => ({ id: e.id, input: e.input, output: e.output }))).toEqual([
      { id: "t1", input: { text: 'Refund, please "now"', priority: 2, urgent: true }, output: { team: "billing", note: "two\r\nlines", tags: ["refund", "card"] } },
      { id: "t2", input: { text: "Cannot log in", priority: 1, urgent: false }, output: { team: "technical", note: null, tags: [] } },
    ]);
    // The reported hash is of the file's bytes, BOM included (as sha256sum prints it).
    expect(data.info.splits.train.sha256).toBe(createHash("sha256").update(train).digest("hex"));
    expect(data.info.files["train.csv"]).toBe(data.info.splits.train.sha256);
    expect(Object.keys(data.info.files).sort()).toEqual(["dev.csv", "test.csv", "train.csv"]);
  });

  it("mixes .jsonl and .csv splits, and gives rows without an id <split>-<n> ids", async () => {
    const path = folderWith("mixed", {
      "train.csv": "text,priority,urgent,team,note,tags\nfirst,1,true,billing,,[]\nsecond,2,false,technical,x,[]\n",
      "dev.jsonl": JSON.stringify({ id: "d1", text: "t", priority: 1, urgent: false, team: "billing", note: null, tags: [] }) + "\n",
      "test.csv": `${HEADER}\n${simple("x1")}\n`,
    });
    const data = await loadDataset(path, { signature: Ticket });
    expect(data.train.map((e) => e.id)).toEqual(["train-1", "train-2"]);
    expect(data.dev.map((e) => e.id)).toEqual(["d1"]);
  });

  it("names the file and the line of each bad row", async () => {
    const badNumber = folderWith("bad-number", {
      "train.csv": `${HEADER}\n${simple("t1")}\n"t2","multi\nline",lots,false,billing,,[]\n`,
      "dev.csv": `${HEADER}\n${simple("d1")}\n`, "test.csv": `${HEADER}\n${simple("x1")}\n`,
    });
    // The record starts on line 3 (its text spans lines 3-4).
    await expect(loadDataset(badNumber, { signature: Ticket })).rejects.toThrow(/train\.csv:3: row "t2" field "priority": expected a number; received "lots"/);
    const badEnum = folderWith("bad-enum", {
      "train.csv": `${HEADER}\n${simple("t1")}\n\nt2,x,1,false,sales,,[]\n`,
      "dev.csv": `${HEADER}\n${simple("d1")}\n`, "test.csv": `${HEADER}\n${simple("x1")}\n`,
    });
    await expect(loadDataset(badEnum, { signature: Ticket })).rejects.toThrow(/train\.csv:4: row "t2" field "team" does not fit the signature/);
    const badQuote = folderWith("bad-quote", {
      "train.csv": `${HEADER}\n${simple("t1")}\nt2,"unclosed"x,1,false,billing,,[]\n`,
      "dev.csv": `${HEADER}\n${simple("d1")}\n`, "test.csv": `${HEADER}\n${simple("x1")}\n`,
    });
    await expect(loadDataset(badQuote, { signature: Ticket })).rejects.toThrow(/train\.csv:3: not valid CSV/);
    const missingColumn = folderWith("missing-column", {
      "train.csv": "id,text,priority,urgent,team,note\nt1,x,1,false,billing,\n",
      "dev.csv": `${HEADER}\n${simple("d1")}\n`, "test.csv": `${HEADER}\n${simple("x1")}\n`,
    });
    await expect(loadDataset(missingColumn, { signature: Ticket })).rejects.toThrow(/train\.csv:1: the header has no column "tags"/);
    const badUtf8 = folderWith("bad-utf8", {
      "train.csv": Buffer.concat([Buffer.from(`${HEADER}\n${simple("t1")}\nt2,caf`), Buffer.from([0xe9]), Buffer.from(",1,false,billing,,[]\n")]),
      "dev.csv": `${HEADER}\n${simple("d1")}\n`, "test.csv": `${HEADER}\n${simple("x1")}\n`,
    });
    await expect(loadDataset(badUtf8, { signature: Ticket })).rejects.toThrow(/train\.csv:3: line 3 is not valid UTF-8/);
  });

  it("refuses a folder without a signature unless one is given, two files for one split, and a missing split", async () => {
    const noSignature = folderWith("no-signature", { "train.csv": `${HEADER}\n${simple("t1")}\n`, "dev.csv": `${HEADER}\n${simple("d1")}\n`, "test.csv": `${HEADER}\n${simple("x1")}\n` });
    await expect(loadDataset(noSignature)).rejects.toThrow(/has no signature\.json: pass the task signature/);
    const both = folderWith("both", { "train.csv": `${HEADER}\n`, "train.jsonl": "", "dev.csv": `${HEADER}\n`, "test.csv": `${HEADER}\n` });
    await expect(loadDataset(both, { signature: Ticket })).rejects.toThrow(/both train\.jsonl and train\.csv/);
    const noTest = folderWith("no-test", { "train.csv": `${HEADER}\n${simple("t1")}\n`, "dev.csv": `${HEADER}\n${simple("d1")}\n` });
    await expect(loadDataset(noTest, { signature: Ticket })).rejects.toThrow(/no test split/);
    const empty = folderWith("empty", { "notes.txt": "nothing" });
    await expect(loadDataset(empty, { signature: Ticket })).rejects.toThrow(/holds no data/);
  });
});

describe("loadDataset: one data file split 60/20/20", () => {
  const rows = Array.from({ length: 50 }, (_, i) => `r${i},text ${i},${i % 3},${i % 2 === 0},${i % 2 === 0 ? "billing" : "technical"},,[]`);

  it("splits by a seeded hash of the id: 30/10/10, disjoint, independent of row order, different for another seed", async () => {
    const a = folderWith("data-a", { "data.csv": `${HEADER}\n${rows.join("\n")}\n` });
    const b = folderWith("data-b", { "data.csv": `${HEADER}\n${[...rows].reverse().join("\n")}\n` });
    const first = await loadDataset(a, { signature: Ticket });
    expect([first.train.length, first.dev.length, first.test.length]).toEqual([30, 10, 10]);
    const ids = (d: typeof first) => ({ train: d.train.map((e) => e.id).sort(), dev: d.dev.map((e) => e.id).sort(), test: d.test.map((e) => e.id).sort() });
    const all = [...ids(first).train, ...ids(first).dev, ...ids(first).test];
    expect(new Set(all).size).toBe(50);
    expect(ids(await loadDataset(b, { signature: Ticket }))).toEqual(ids(first));
    expect(ids(await loadDataset(a, { signature: Ticket, seed: 1 }))).not.toEqual(ids(first));
    expect(Object.keys(first.info.files)).toEqual(["data.csv"]);
  });

  it("reads data.jsonl the same way, with row-<n> ids for rows without one", async () => {
    const lines = Array.from({ length: 10 }, (_, i) => JSON.stringify({ text: `t${i}`, priority: 1, urgent: false, team: "billing", note: null, tags: [] }));
    const path = folderWith("data-jsonl", { "data.jsonl": lines.join("\n") + "\n" });
    const data = await loadDataset(path, { signature: Ticket });
    expect([data.train.length, data.dev.length, data.test.length]).toEqual([6, 2, 2]);
    expect([...data.train, ...data.dev, ...data.test].map((e) => e.id).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `row-${i + 1}`).sort());
  });
});

describe("loadDataset: what a newcomer's CSV gets wrong is named with its file and the right line", () => {
  const splits = (name: string, train: string) =>
    folderWith(name, { "train.csv": train, "dev.csv": `${HEADER}\n${simple("d1")}\n`, "test.csv": `${HEADER}\n${simple("x1")}\n` });
  const EXPECTED = "text, priority, urgent, team, note, tags (and an optional id)";

  it("an empty file, or one of blank lines only, names the file and the columns it should start with (before: loaded as no rows)", async () => {
    for (const [name, text] of [["empty-file", ""], ["blank-lines", "\n\r\n  \n"]] as const) {
      const path = splits(name, text);
      await expect(loadDataset(path, { signature: Ticket })).rejects.toThrow(
        `${join(path, "train.csv")}: the file is empty; a CSV file starts with a header row naming its columns: ${EXPECTED}`,
      );
    }
    // One data file to split: before, the run said only "The test split is empty".
    const single = folderWith("empty-data", { "data.csv": "" });
    await expect(loadDataset(single, { signature: Ticket })).rejects.toThrow(`${join(single, "data.csv")}: the file is empty`);
    const headerOnly = folderWith("header-only-data", { "data.csv": `${HEADER}\n` });
    await expect(loadDataset(headerOnly, { signature: Ticket })).rejects.toThrow(`${join(headerOnly, "data.csv")}: the file has no examples, only its header; add one row per example`);
    const noLines = folderWith("empty-data-jsonl", { "data.jsonl": "\n" });
    await expect(loadDataset(noLines, { signature: Ticket })).rejects.toThrow(`${join(noLines, "data.jsonl")}: the file has no examples; add one line per example`);
  });

  it("a missing column points at the header's line and lists the columns found and expected (before: line 2, no columns)", async () => {
    const path = splits("misnamed", "id,txt,priority,urgent,team,note,tags\nt1,x,1,false,billing,,[]\n");
    await expect(loadDataset(path, { signature: Ticket })).rejects.toThrow(
      `${join(path, "train.csv")}:1: the header has no column "text" the task signature declares; columns found: id, txt, priority, urgent, team, note, tags; expected: ${EXPECTED}`,
    );
    // The header after two blank lines is on line 3; and it is checked even when no row follows it.
    const late = splits("late-header", "\n\nid,text,priority,urgent,team,note\n");
    await expect(loadDataset(late, { signature: Ticket })).rejects.toThrow(
      `${join(late, "train.csv")}:3: the header has no column "tags" the task signature declares; columns found: id, text, priority, urgent, team, note; expected: ${EXPECTED}`,
    );
  });

  it("an unclosed quote is reported on the line where it opens (before: the file's last line)", async () => {
    const cases: [string, string, number][] = [
      // The quote opens on line 3; two more lines follow it.
      ["open-early", `${HEADER}\n${simple("t1")}\nt2,"open,1,false,billing,,[]\n${simple("t3")}\n${simple("t4")}\n`, 3],
      // A quoted field over lines 2-3 is closed; the quote that is not opens on line 3, in the same record.
      ["open-in-record", `${HEADER}\nt1,"two\nlines",1,false,billing,"note\n${simple("t2")}\n`, 3],
      // CRLF line ends, a closed field over lines 2-3 before, the open quote on line 6.
      ["open-crlf", [HEADER, 't1,"a\r\nb",1,false,billing,,[]', simple("t2"), simple("t3"), 't4,"x ""quoted"" and open,1,false,billing,,[]', simple("t5")].join("\r\n") + "\r\n", 6],
    ];
    for (const [name, text, line] of cases) {
      const path = splits(name, text);
      await expect(loadDataset(path, { signature: Ticket })).rejects.toThrow(
        `${join(path, "train.csv")}:${line}: not valid CSV: the quote that opens on line ${line} is never closed; end the field with a quote (write "" for a quote inside it)`,
      );
    }
  });
});
