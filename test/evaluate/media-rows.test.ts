// An evaluation whose examples hold images records each image once in the lab store's media table,
// its rows referring to it by sha256 (the row keeps the value itself until the store makes the reference).
import { afterAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Evaluation, FewShotExample, Image, LabStore, Predict, Signature, t } from "../../lib/index.js";
import { closeStoreSync, openStoreSync } from "../../lib/store/db.js";
import { ScriptedLM } from "../../lib/testing/index.js";
import { shapePng } from "../store/media-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-eval-media-"));
const path = join(dir, "lab.sqlite");
afterAll(() => {
  closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

class CountShapes extends Signature {
  static override description = "Count the shapes in the picture.";
  static override input = { image: t.image(), others: z.array(t.image()) };
  static override output = { count: z.number().int() };
}

describe("an evaluation with images", () => {
  it("stores each image once and its rows refer to it", async () => {
    const lab = LabStore.open(path);
    const program = new Predict(CountShapes).configure((c) => { c.lm = new ScriptedLM(() => ({ count: 3 })); });
    const examples = [0, 1, 2, 3].map((i) => new FewShotExample({
      input: { image: Image.fromBytes(shapePng(1 + (i % 2))), others: [Image.fromBytes(shapePng(3))] }, output: { count: 3 }, id: `e${i}`,
    }));
    const report = await new Evaluation({ lab, progress: false }).evaluate({ moduleInstance: program, testExamples: examples });
    expect(report.results.map((r) => r.error)).toEqual([null, null, null, null]);
    const db = openStoreSync(path);
    const sha = (n: number) => createHash("sha256").update(shapePng(n)).digest("hex");
    expect((db.prepare("SELECT sha256 FROM media ORDER BY sha256").all() as { sha256: string }[]).map((m) => m.sha256)).toEqual([sha(1), sha(2), sha(3)].sort());
    const rows = lab.rows(report.runId!);
    expect(rows.map((r) => [(r.inputs["image"] as { $media: string }).$media, (r.inputs["others"] as { $media: string }[])[0]!.$media]))
      .toEqual([[sha(1), sha(3)], [sha(2), sha(3)], [sha(1), sha(3)], [sha(2), sha(3)]]);
    expect(lab.media(sha(2))!.bytes).toEqual(new Uint8Array(shapePng(2)));
  });
});
