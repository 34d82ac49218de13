// Media in the lab store, on both engines (a temporary SQLite file, a fresh database of a PostgreSQL
// server this suite starts): each value stored once by sha256 in the `media` table, rows and recorded
// calls keeping a reference in its place (never base64 text), `lab.media(sha256)` giving the value
// back, and `typelm lab copy` carrying the values both ways.
import { describe, expect, it } from "@jest/globals";
import { Image } from "../../lib/media/media.js";
import { copyLab } from "../../lib/store/copy/lab-copy.js";
import { openStoreSync } from "../../lib/store/db.js";
import { bothEngines, settle, sqlIn, sqlOn } from "./lab-engines.js";
import { createHash, mediaCall, mediaRow, PDF_BYTES, shapePng, wavBytes } from "./media-fixture.js";

const { sqlite, postgres, withPostgres, engines } = bothEngines("the lab store's media");

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe.each(engines)("media in the lab store (%s)", (_name, engine) => {
  it("keeps each value once by sha256, the rows holding references, never base64", async () => {
    const location = engine.fresh();
    const lab = engine.open(location);
    const runId = lab.startRun({ kind: "evaluation", name: "shapes" });
    for (let i = 0; i < 5; i++) lab.recordExample(runId, mediaRow(i, 1));
    lab.recordExample(runId, mediaRow(5, 7));
    await settle(lab);
    const media = await sqlIn(engine, location, "SELECT sha256, media_type, kind, size FROM media ORDER BY sha256");
    const expected = [
      [shapePng(1), "image/png", "image"], [shapePng(2), "image/png", "image"], [shapePng(3), "image/png", "image"],
      [shapePng(7), "image/png", "image"], [wavBytes(), "audio/wav", "audio"], [PDF_BYTES, "application/pdf", "document"],
    ].map(([bytes, type, kind]) => ({ sha256: sha(bytes as Buffer), media_type: type, kind, size: (bytes as Buffer).length }))
      .sort((a, b) => a.sha256.localeCompare(b.sha256));
    expect(media.map((m) => ({ ...m, size: Number(m.size) }))).toEqual(expected);

    const stored = await sqlIn(engine, location, "SELECT inputs_json FROM lab_rows ORDER BY idx");
    for (const r of stored) {
      expect(String(r.inputs_json)).not.toContain(shapePng(2).toString("base64").slice(0, 40));
      expect(String(r.inputs_json).length).toBeLessThan(1200);
    }
    const rows = await lab.rows(runId);
    expect(rows[0]!.inputs).toEqual({
      image: { $media: sha(shapePng(1)), kind: "image", mediaType: "image/png", size: shapePng(1).length },
      more: [2, 3].map((n) => ({ $media: sha(shapePng(n)), kind: "image", mediaType: "image/png", size: shapePng(n).length })),
      clip: { $media: sha(wavBytes()), kind: "audio", mediaType: "audio/wav", size: wavBytes().length },
      paper: { $media: sha(PDF_BYTES), kind: "document", mediaType: "application/pdf", size: PDF_BYTES.length },
      question: "How many shapes?",
    });
    const back = await lab.media(sha(shapePng(7)));
    expect(back).toBeInstanceOf(Image);
    expect(Buffer.from(back!.bytes!).equals(shapePng(7))).toBe(true);
    expect(back!.mediaType).toBe("image/png");
    expect(await lab.media("0".repeat(64))).toBeUndefined();
  }, 60_000);

  it("records a call's media (a data URL in the text, an Image part, a provider's base64 part) as references", async () => {
    const location = engine.fresh();
    const lab = engine.open(location);
    const runId = lab.startRun({ kind: "evaluation", name: "calls" });
    lab.recordExample(runId, mediaRow(0), [mediaCall(), mediaCall()]);
    await settle(lab);
    const [{ calls_json: json }] = await sqlIn(engine, location, "SELECT calls_json FROM lab_rows") as [{ calls_json: string }];
    for (const n of [4, 5, 6]) expect(json).not.toContain(shapePng(n).toString("base64").slice(0, 40));
    expect(json.length).toBeLessThan(3000);
    const hashes = (await sqlIn(engine, location, "SELECT sha256 FROM media")).map((m) => m.sha256);
    for (const n of [4, 5, 6]) expect(hashes).toContain(sha(shapePng(n)));
    const [call] = await lab.calls(runId, 0);
    const user = call!.messages[1] as unknown as Record<string, unknown>;
    const ref = (n: number) => ({ $media: sha(shapePng(n)), kind: "image", mediaType: "image/png", size: shapePng(n).length });
    expect(user.content).toBe(`Count the shapes. ${JSON.stringify(ref(4))} Answer with a number.`);
    expect(user.media).toEqual([{ name: "image", value: ref(5) }]);
    expect(user.parts).toEqual([{ type: "image", source: { type: "base64", media_type: "image/png", data: ref(6) } }]);
    expect(call!.messages[0]).toEqual({ role: "system", content: "You count shapes." });
  }, 60_000);
});

(withPostgres ? describe : describe.skip)("lab copy carries media", () => {
  it("copies a file's media into a team's lab and back, each value once", async () => {
    const file = sqlite.fresh();
    const lab = sqlite.open(file);
    const runId = lab.startRun({ kind: "evaluation", name: "copied" });
    lab.recordExample(runId, mediaRow(0, 8), [mediaCall()]);
    lab.recordExample(runId, mediaRow(1, 8));
    const url = postgres.fresh();
    const there = await copyLab(file, url);
    expect(there.rows).toBe(2);
    const want = [8, 2, 3, 4, 5, 6].map((n) => sha(shapePng(n))).concat([sha(wavBytes()), sha(PDF_BYTES)]).sort();
    expect((await sqlOn(url, "SELECT sha256 FROM media ORDER BY sha256")).map((m) => m.sha256)).toEqual(want);
    const [copied] = await sqlOn(url, "SELECT bytes FROM media WHERE sha256 = $1", [sha(shapePng(8))]);
    expect(Buffer.from(copied!.bytes as Buffer).equals(shapePng(8))).toBe(true);
    expect((await copyLab(file, url)).rows).toBe(0);

    const back = sqlite.fresh();
    await copyLab(url, back);
    const local = openStoreSync(back).prepare("SELECT sha256, bytes FROM media ORDER BY sha256").all() as { sha256: string; bytes: Buffer }[];
    expect(local.map((m) => m.sha256)).toEqual(want);
    for (const m of local) expect(sha(m.bytes)).toBe(m.sha256);
  }, 90_000);
});
