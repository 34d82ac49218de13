import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { z } from "zod";
import { Image, Signature, ValidationError, loadDataset, t } from "../../lib/index.js";

const root = mkdtempSync(join(tmpdir(), "typelm-media-datasets-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const pngOf = (colour: string) =>
  new Resvg(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="${colour}"/></svg>`).render().asPng();
const red = pngOf("red");
const blue = pngOf("blue");
const signatureJson = JSON.stringify({ name: "Colour", description: "Name the colour.", input: { picture: { type: "image" } }, output: { colour: { type: "string" } } });

/** A dataset folder with images/red.png and images/blue.png, the given files, and signature.json. */
function folder(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "images"), { recursive: true });
  writeFileSync(join(dir, "images", "red.png"), red);
  writeFileSync(join(dir, "images", "blue.png"), blue);
  writeFileSync(join(dir, "signature.json"), signatureJson);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
const rows = (n: number, file: (i: number) => string = (i: number) => (i % 2 === 0 ? "images/red.png" : "images/blue.png")) =>
  Array.from({ length: n }, (_, i) => ({ id: `r${i}`, picture: { file: file(i) }, colour: i % 2 === 0 ? "red" : "blue" }));

async function refusal(dir: string, options = {}): Promise<ValidationError> {
  try {
    await loadDataset(dir, options);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error("the dataset loaded");
}

describe("datasets with media", () => {
  it('loads JSONL {"file": …} values as media from beside the data file', async () => {
    const ds = await loadDataset(folder("jsonl", { "data.jsonl": jsonl(rows(10)) }));
    const all = [...ds.train, ...ds.dev, ...ds.test];
    expect(all).toHaveLength(10);
    for (const example of all) {
      const picture = example.input.picture as Image;
      expect(picture).toBeInstanceOf(Image);
      expect(picture.mediaType).toBe("image/png");
      expect(Buffer.from(picture.bytes!).equals(example.output.colour === "red" ? red : blue)).toBe(true);
    }
  });

  it("loads CSV path columns declared t.image() as media", async () => {
    const csv = "id,picture,colour\n" + ["a,images/red.png,red", "b,images/blue.png,blue", "c,images/red.png,red", "d,images/blue.png,blue", "e,images/red.png,red"].join("\n") + "\n";
    const ds = await loadDataset(folder("csv", { "data.csv": csv }));
    const byId = new Map([...ds.train, ...ds.dev, ...ds.test].map((e) => [e.id, e.input.picture as Image]));
    expect(Buffer.from(byId.get("b")!.bytes!).equals(blue)).toBe(true);
    expect(Buffer.from(byId.get("e")!.bytes!).equals(red)).toBe(true);
  });

  it("loads lists of media for z.array(t.image())", async () => {
    const Pair = Signature.define({ name: "Pair", description: "Same colour?", input: { pictures: z.array(t.image()) }, output: { same: z.boolean() } });
    const lines = jsonl(Array.from({ length: 5 }, (_, i) => ({ pictures: [{ file: "images/red.png" }, { file: i % 2 ? "images/red.png" : "images/blue.png" }], same: i % 2 === 1 })));
    const ds = await loadDataset(folder("arrays", { "data.jsonl": lines }), { signature: Pair });
    const pictures = [...ds.train, ...ds.dev, ...ds.test].map((e) => e.input.pictures as Image[]);
    expect(pictures.every((p) => p.length === 2 && p.every((i) => i instanceof Image))).toBe(true);
  });

  it("refuses a path that climbs out of the dataset folder", async () => {
    writeFileSync(join(root, "outside.png"), red);
    const e = await refusal(folder("climb", { "data.jsonl": jsonl(rows(3, (i) => (i === 2 ? "../outside.png" : "images/red.png"))) }));
    expect(e.message).toMatch(/data\.jsonl:3: row "r2" field "picture": the media path "\.\.\/outside\.png" leads outside the dataset's folder/);
    const sneaky = await refusal(folder("climb2", { "data.jsonl": jsonl(rows(1, () => "images/../../outside.png")) }));
    expect(sneaky.message).toContain("leads outside the dataset's folder");
  });

  it("refuses an absolute path", async () => {
    const e = await refusal(folder("absolute", { "data.jsonl": jsonl(rows(1, () => join(root, "absolute", "images", "red.png"))) }));
    expect(e.message).toContain("is absolute");
  });

  it("refuses a symbolic link leading outside the folder", async () => {
    const dir = folder("link", { "data.jsonl": jsonl(rows(1, () => "images/escape.png")) });
    writeFileSync(join(root, "secret.png"), red);
    symlinkSync(join(root, "secret.png"), join(dir, "images", "escape.png"));
    const e = await refusal(dir);
    expect(e.message).toContain("is a symbolic link leading outside the dataset's folder");
  });

  it("refuses a file that is not an image, naming the row and field", async () => {
    const dir = folder("not-image", { "data.jsonl": jsonl(rows(1, () => "images/notes.png")) });
    writeFileSync(join(dir, "images", "notes.png"), "just text");
    const e = await refusal(dir);
    expect(e.message).toMatch(/data\.jsonl:1: row "r0" field "picture" does not fit the signature: its 9 bytes are in no known format/);
  });

  it("refuses a JSONL media value that is not {file}", async () => {
    const e = await refusal(folder("bare", { "data.jsonl": jsonl([{ picture: "images/red.png", colour: "red" }]) }));
    expect(e.message).toContain('a media value in a JSONL file is {"file": "<path relative to the dataset\'s folder>"}');
  });
});
