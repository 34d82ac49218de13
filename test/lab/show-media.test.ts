// `typelm show` on an evaluation whose rows hold media: one line per media value (kind, media type,
// size, full sha256, and the rows and fields holding it), each value once however many rows share it.
import { afterAll, describe, expect, it } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/store/lab-store.js";
import { closeStoreSync } from "../../lib/store/db.js";
import { runCliHere } from "../helpers/cli.js";
import { mediaRow, PDF_BYTES, shapePng, wavBytes } from "../store/media-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-show-media-"));
const path = join(dir, ".typelm/lab.sqlite");
afterAll(() => {
  closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("typelm show with media", () => {
  it("prints a line per media value: kind, type, size, hash, rows and fields", async () => {
    mkdirSync(join(dir, ".typelm"));
    const lab = LabStore.open(path);
    const id = lab.startRun({ kind: "evaluation", name: "shapes" });
    for (let i = 0; i < 4; i++) lab.recordExample(id, mediaRow(i, i < 3 ? 1 : 9));
    lab.finishRun(id, { status: "completed", score: 1, summary: { metrics: { accuracy: 1 } } });
    const r = await runCliHere(["show", id], dir);
    expect(r.stderr).toBe("");
    const lines = r.stdout.split("\n");
    const at = lines.indexOf("media: 6 values, each stored once (typelm view shows them)");
    expect(at).toBeGreaterThan(0);
    const size = (b: Buffer) => b.length.toLocaleString("en-US");
    expect(lines.slice(at + 1, at + 7).sort()).toEqual([
      `  image image/png ${size(shapePng(1))} bytes sha256 ${sha(shapePng(1))} (3 rows: inputs.image)`,
      `  image image/png ${size(shapePng(2))} bytes sha256 ${sha(shapePng(2))} (4 rows: inputs.more[])`,
      `  image image/png ${size(shapePng(3))} bytes sha256 ${sha(shapePng(3))} (4 rows: inputs.more[])`,
      `  audio audio/wav ${size(wavBytes())} bytes sha256 ${sha(wavBytes())} (4 rows: inputs.clip)`,
      `  document application/pdf ${size(PDF_BYTES)} bytes sha256 ${sha(PDF_BYTES)} (4 rows: inputs.paper)`,
      `  image image/png ${size(shapePng(9))} bytes sha256 ${sha(shapePng(9))} (1 row: inputs.image)`,
    ].sort());
  });
});
