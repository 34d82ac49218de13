/**
 * Media in the lab store: an evaluation of N rows (default 1,000) whose inputs share 10 images (PNGs
 * of the bundled shapes dataset), run through `Evaluation` with its model calls recorded, into the
 * SQLite file and, where PostgreSQL's server binaries are found, into a PostgreSQL server started for
 * the bench. Reported: the media values stored and their bytes (target: the 10 images once), the
 * bytes per row of the row's own columns (inputs, expected, prediction, scores, calls), the file's
 * size per row against the same evaluation with a text input instead of the image, and what the rows
 * would hold if each kept its image as base64 text.
 *
 * Run with `npm run bench:media-store` (builds to dist/, then runs dist/bench/media-store.js).
 * Options (environment variables): BENCH_MEDIA_ROWS (1000), BENCH_MEDIA_IMAGES (10).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { Evaluation, FewShotExample, Image, LabStore, Predict, Signature, t } from "../lib/index.js";
import type { Lab } from "../lib/store/lab-store.js";
import { closeStoreSync, openStoreSync } from "../lib/store/db.js";
import { closePostgresPools } from "../lib/store/pg.js";
import { ScriptedLM } from "../lib/testing/index.js";
import { queryRows } from "../test/helpers/postgres.js";
import { intFromEnv } from "./env.js";
import { startBenchPostgres } from "./evaluate-postgres.js";

const ROWS = intFromEnv("BENCH_MEDIA_ROWS", 1000);
const IMAGES = intFromEnv("BENCH_MEDIA_IMAGES", 10);
const SHAPES = join(dirname(fileURLToPath(import.meta.url)), "../../datasets/shapes/images");

class CountShapes extends Signature {
  static override description = "Count the shapes in the picture.";
  static override input = { image: t.image(), question: z.string() };
  static override output = { count: z.number().int() };
}
class CountText extends Signature {
  static override description = "Count the shapes in the picture.";
  static override input = { image: z.string(), question: z.string() };
  static override output = { count: z.number().int() };
}

const pictures = Array.from({ length: IMAGES }, (_, i) => readFileSync(join(SHAPES, `${String(i + 1).padStart(3, "0")}.png`)));

function examples(media: boolean): FewShotExample[] {
  return Array.from({ length: ROWS }, (_, i) => new FewShotExample({
    // Each row its own Image value (as a dataset loader makes them), the bytes shared by every 10th row.
    input: { image: media ? Image.fromBytes(pictures[i % IMAGES]!) : `picture ${String((i % IMAGES) + 1).padStart(3, "0")}.png`, question: `How many shapes? (#${i})` },
    output: { count: (i % 7) + 1 }, id: `row-${i}`,
  }));
}

async function evaluate(lab: Lab, media: boolean, recordCalls = true): Promise<{ ms: number }> {
  const lm = new ScriptedLM(() => ({ count: 3 }));
  const program = (media ? new Predict(CountShapes) : new Predict(CountText)).configure((c) => { c.lm = lm; });
  const started = performance.now();
  await new Evaluation({ lab, progress: false, recordCalls, name: media ? "media" : "text" }).evaluate({ moduleInstance: program, testExamples: examples(media) });
  return { ms: performance.now() - started };
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;

/** One evaluation into a fresh file: the file's size, the row columns' bytes per row, the media table. */
async function intoFile(dir: string, name: string, media: boolean, recordCalls: boolean) {
  const path = join(dir, `${name}.sqlite`);
  const lab = LabStore.open(path);
  const { ms } = await evaluate(lab, media, recordCalls);
  const db = openStoreSync(path);
  db.pragma("wal_checkpoint(TRUNCATE)");
  const file = statSync(path).size;
  const row = db.prepare(`SELECT AVG(length(inputs_json) + length(expected_json) + length(prediction_json) + length(scores_json) + coalesce(length(calls_json), 0)) AS perRow,
    AVG(length(inputs_json)) AS inputs, AVG(coalesce(length(calls_json), 0)) AS calls FROM lab_rows`).get() as { perRow: number; inputs: number; calls: number };
  const stored = db.prepare("SELECT COUNT(*) AS n, coalesce(SUM(size), 0) AS bytes FROM media").get() as { n: number; bytes: number };
  lab.close();
  closeStoreSync(path);
  return { ms, file, row, stored };
}

async function sqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "typelm-bench-media-"));
  try {
    const shared = pictures.reduce((s, p) => s + p.length, 0);
    const base64 = pictures.reduce((s, p) => s + p.toString("base64").length, 0) / IMAGES;
    console.log(`SQLite: ${ROWS} rows sharing ${IMAGES} images (PNGs of the shapes dataset, ${kb(shared)} in all, ${kb(shared / IMAGES)} each on average)`);
    for (const [name, media, calls] of [["text input, rows only", false, false], ["image input, rows only", true, false], ["text input, with calls", false, true], ["image input, with calls", true, true]] as const) {
      const r = await intoFile(dir, name.replace(/\W+/g, "-"), media, calls);
      console.log(`  ${name}: ${(r.ms / 1000).toFixed(2)} s; row columns ${r.row.perRow.toFixed(0)} B per row (inputs ${r.row.inputs.toFixed(0)} B, calls ${r.row.calls.toFixed(0)} B); ` +
        `media table ${r.stored.n} values, ${kb(r.stored.bytes)}${media ? ` (the ${IMAGES} images once: ${r.stored.n === IMAGES && r.stored.bytes === shared ? "yes" : "NO"})` : ""}; file ${kb(r.file)} = ${(r.file / ROWS).toFixed(0)} B per row`);
    }
    console.log(`  each row keeping its image as base64 text instead would hold ${base64.toFixed(0)} B more per row (${kb(base64 * ROWS)} in all)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<void> {
  const server = await startBenchPostgres();
  if (typeof server === "string") {
    console.log(`PostgreSQL: skipped (${server})`);
    return;
  }
  try {
    const lab = LabStore.open({ url: server.url });
    const { ms } = await evaluate(lab, true, false);
    await lab.close();
    const [stored] = await queryRows(server.url, "SELECT COUNT(*)::int AS n, SUM(size)::bigint AS bytes FROM media");
    const [rows] = await queryRows(server.url, `SELECT AVG(length(inputs_json) + length(expected_json) + length(prediction_json) + length(scores_json) + coalesce(length(calls_json), 0))::float AS per_row,
      pg_total_relation_size('lab_rows')::bigint AS rows_bytes, pg_total_relation_size('media')::bigint AS media_bytes FROM lab_rows`);
    console.log(`PostgreSQL, image input, rows only, ${ROWS} rows in ${(ms / 1000).toFixed(2)} s: media table ${String(stored!["n"])} values, ${kb(Number(stored!["bytes"]))} of bytes ` +
      `(${kb(Number(rows!["media_bytes"]))} on disk); row columns ${Number(rows!["per_row"]).toFixed(0)} B per row; lab_rows on disk ${(Number(rows!["rows_bytes"]) / ROWS).toFixed(0)} B per row`);
  } finally {
    await closePostgresPools();
    server.stop();
  }
}

await sqlite();
await postgres();
