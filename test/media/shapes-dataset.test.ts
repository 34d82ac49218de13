import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Image, loadDataset } from "../../lib/index.js";
import { imageName, pngOf, rowOf, shapesOf } from "../../scripts/shapes.js";

const folder = join(import.meta.dirname, "../../datasets/shapes");

describe("the bundled shapes dataset", () => {
  it("is what the generator draws: pictures and rows byte for byte (deterministic)", () => {
    const lines = readFileSync(join(folder, "data.jsonl"), "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(300);
    for (const index of [0, 1, 57, 299]) {
      const shapes = shapesOf(index);
      expect(shapesOf(index)).toEqual(shapes);
      expect(lines[index]).toBe(rowOf(index, shapes));
      expect(pngOf(shapes).equals(readFileSync(join(folder, imageName(index))))).toBe(true);
    }
  });

  it("loads by name as CountShapes over images, every count from the pictures' shapes", async () => {
    const ds = await loadDataset("shapes");
    const all = [...ds.train, ...ds.dev, ...ds.test];
    expect([ds.train.length, ds.dev.length, ds.test.length]).toEqual([180, 60, 60]);
    expect(ds.info.licence).toBe("CC0 1.0");
    for (const example of all) {
      const image = example.input.image as Image;
      expect(image).toBeInstanceOf(Image);
      expect(image.mediaType).toBe("image/png");
      expect(example.output.count).toBe(shapesOf(Number(example.id) - 1).length);
    }
    expect(new Set(all.map((e) => e.output.count))).toEqual(new Set([1, 2, 3, 4, 5, 6, 7]));
  });
});
