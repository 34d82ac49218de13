/**
 * The run viewer over evaluations of 1,000, 20,000 and 200,000 rows: how long its pages take (the
 * first load of a run's page; the runs page, asked while a deferred bootstrap interval is computed on
 * the worker thread (past 20,000 rows); when that interval is ready; the run's page again; a late page;
 * the failed filter; a text search; one example; a live poll; a comparison of the run with itself) and
 * the server's peak RSS. The viewer
 * runs in a process of its own (`typelm view`'s `startViewer`), so the RSS is the server's alone.
 * Budget (DESIGN.md): a 200,000-row run's first page within 1 s, the server under 300 MB.
 *
 * Run with `npm run bench:view`.
 * Options (environment variables): BENCH_VIEW_SIZES (comma-separated, default 1000,20000,200000);
 * BENCH_VIEW_METRIC=quality for a graded metric (scores 0, 0.5, 1: a BCa bootstrap interval) instead of
 * accuracy (a share: the Wilson interval from two counts); BENCH_VIEW_METRIC=f1_score for the built-in
 * f1_score (macro-F1 recomputed on each resample: the labels and predictions read as codes). BENCH_VIEW_PG_URL=postgres://... times the
 * same pages on a team's lab in that (empty, scratch) database as well, at BENCH_VIEW_PG_SIZES (default
 * 1000,20000): each run is written to the file, then copied there as `typelm lab copy` copies it.
 * Then the matrix (`/matrix?runs=…`) of BENCH_VIEW_MATRIX (default 20000x4: 4 runs of 20,000 rows, on
 * the file; "" skips it): its first page, again, the disagreeing rows, the last page, the pairwise tests.
 * Budget: the 20,000 × 4 matrix's first page within 1 s.
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { closeStoreSync, openStoreSync } from "../lib/store/db.js";
import { LabStore } from "../lib/store/lab-store.js";
import { copyLab } from "../lib/store/copy/lab-copy.js";
import { closePostgresPools } from "../lib/store/pg.js";
import { shownUrl } from "../lib/instrument/redact.js";
import { inferFields } from "../lib/evaluate/fields.js";
import { f1Statistic } from "../lib/evaluate/stats/f1-statistic.js";
import { allIndices } from "../lib/evaluate/stats/statistic.js";
import type { EvaluationRow } from "../lib/store/records.js";

const self = fileURLToPath(import.meta.url);
const GRADED = process.env["BENCH_VIEW_METRIC"] === "quality";
const F1 = process.env["BENCH_VIEW_METRIC"] === "f1_score";
const METRIC = GRADED ? "quality" : F1 ? "f1_score" : "accuracy";
const sizes = (text: string) => text.split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);
const SIZES = sizes(process.env["BENCH_VIEW_SIZES"] ?? "1000,20000,200000");
const PG_URL = process.env["BENCH_VIEW_PG_URL"] ?? "";
const PG_SIZES = sizes(process.env["BENCH_VIEW_PG_SIZES"] ?? "1000,20000");
/** The matrix measured: rows × runs (BENCH_VIEW_MATRIX, default 20000x4; "" skips it). */
const MATRIX = ((m) => (m === null ? undefined : { rows: Number(m[1]), runs: Number(m[2]) }))(/^(\d+)x(\d+)$/.exec(process.env["BENCH_VIEW_MATRIX"] ?? "20000x4"));

/**
 * An evaluation of `rows` rows (every 10th failed, 30% wrong), written in one transaction; `variant`
 * moves which rows are wrong (the runs of a matrix differ on some rows).
 */
function buildStore(path: string, rows: number, variant = 0): string {
  const lab = LabStore.open(path);
  const runId = lab.startRun({ kind: "evaluation", name: `bench-${rows}${variant === 0 ? "" : `-v${variant}`}`, config: { metrics: [METRIC], models: ["openai/gpt-4o-mini"], examples: rows } });
  const db = openStoreSync(path);
  const insert = db.prepare(
    `INSERT INTO lab_rows (run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const labels = ["positive", "negative", "neutral"];
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const label = labels[i % 3]!;
      const failed = i % 10 === 9;
      const right = !failed && (i + 3 * variant) % 10 < 7;
      insert.run(runId, i, `ex-${i}`, JSON.stringify({ review: `Review #${i}: the product arrived on time and works as described, mostly.` }),
        JSON.stringify({ sentiment: label }), failed ? null : JSON.stringify({ sentiment: right ? label : labels[(i + 1) % 3] }),
        JSON.stringify({ [METRIC]: right ? 1 : GRADED && !failed ? 0.5 : 0 }), failed ? "ProviderError: 503 Service Unavailable" : null, 300 + (i % 50), 120, 5, 0.00002);
    }
  })();
  let score = Array.from({ length: rows }, (_, i) => (i % 10 !== 9 && (i + 3 * variant) % 10 < 7 ? 1 : GRADED && i % 10 !== 9 ? 0.5 : 0) as number).reduce((a, b) => a + b, 0) / rows;
  if (F1) {
    // The built-in f1_score's value is macro-F1 over the run (as the evaluation records it), not the rows' mean.
    const shown = Array.from({ length: rows }, (_, i) => {
      const label = labels[i % 3]!, failed = i % 10 === 9, right = !failed && (i + 3 * variant) % 10 < 7;
      return { expected: { sentiment: label }, prediction: failed ? null : { sentiment: right ? label : labels[(i + 1) % 3] }, error: failed ? "x" : null } as unknown as EvaluationRow;
    });
    score = f1Statistic(shown, inferFields(shown))(allIndices(rows));
  }
  lab.finishRun(runId, { status: "completed", score, summary: { metrics: { [METRIC]: score } } });
  closeStoreSync(path);
  return runId;
}

interface Timing { page: string; ms: number; bytes: number }

async function timed(url: string, page: string): Promise<Timing> {
  const started = performance.now();
  const response = await fetch(url);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${page}: HTTP ${response.status}: ${body.slice(0, 200)}`);
  return { page, ms: performance.now() - started, bytes: body.length };
}

/** Asks for the run's metrics every 50 ms until no interval is pending: how long after the first page it was ready. */
async function intervalReady(api: string): Promise<Timing> {
  const started = performance.now();
  for (;;) {
    const body = await (await fetch(api)).json() as { metrics: { pending?: boolean }[] };
    if (body.metrics.every((m) => m.pending !== true)) return { page: "interval ready (polled every 50 ms)", ms: performance.now() - started, bytes: 0 };
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function measure(rows: number, pgUrl?: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "typelm-bench-view-"));
  try {
    const path = join(dir, "lab.sqlite");
    const built = performance.now();
    const runId = buildStore(path, rows);
    if (pgUrl !== undefined) await copyLab(path, pgUrl);
    const buildMs = performance.now() - built;
    const child = fork(self, ["serve", pgUrl ?? path], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const url = await new Promise<string>((resolve, reject) => {
      child.once("message", (m) => resolve(String((m as { url: string }).url)));
      child.once("exit", (code) => reject(new Error(`the viewer exited with ${code}`)));
    });
    const base = `${url}runs/${runId}`;
    const last = Math.ceil(rows / 50);
    const timings = [
      await timed(base, "run page, first load"),
      // Past 20,000 rows a bootstrap interval is computed after the first answer, on a worker thread.
      await timed(url, "runs page (while it is computed)"),
      await intervalReady(`${url}api/runs/${runId}`),
      await timed(base, "run page again (interval kept)"),
      await timed(`${base}?page=${last}`, `run page ${last} (the last)`),
      await timed(`${base}?failed=1`, "failed only"),
      await timed(`${base}?text=${encodeURIComponent(`#${rows - 1}:`)}`, "text search (one match)"),
      await timed(`${base}/rows/${rows - 1}`, "one example"),
      await timed(`${url}api/runs/${runId}/rows?after=${rows - 10}`, "live poll (api rows after)"),
    ];
    const peakRss = () => new Promise<number>((resolve) => {
      child.once("message", (m) => resolve(Number((m as { peakRssMB: number }).peakRssMB)));
      child.send("rss");
    });
    const before = await peakRss();
    timings.push(await timed(`${url}compare/${runId}/${runId}`, "comparison (the run with itself)"));
    const rss = await peakRss();
    child.kill("SIGTERM");
    const where = pgUrl === undefined ? `store ${(statSync(path).size / 1e6).toFixed(1)} MB` : `PostgreSQL ${shownUrl(pgUrl)}`;
    console.log(`\n${rows.toLocaleString("en-US")} rows (${where}, written in ${(buildMs / 1000).toFixed(1)} s); viewer peak RSS ${rss.toFixed(0)} MB (${before.toFixed(0)} MB before the comparison)`);
    for (const t of timings) console.log(`  ${t.page.padEnd(42)} ${t.ms.toFixed(1).padStart(8)} ms  ${(t.bytes / 1024).toFixed(0).padStart(5)} KB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The matrix of `runs` evaluations of `rows` rows each (the same examples, wrong on different rows):
 * its first page (the runs' scores lined up, their metrics and intervals), again (the line-up kept),
 * the disagreeing rows only, the last page, and the pairwise tests.
 */
async function measureMatrix(rows: number, runs: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "typelm-bench-view-"));
  try {
    const path = join(dir, "lab.sqlite");
    const built = performance.now();
    const ids = Array.from({ length: runs }, (_, v) => buildStore(path, rows, v));
    const buildMs = performance.now() - built;
    const child = fork(self, ["serve", path], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const url = await new Promise<string>((resolve, reject) => {
      child.once("message", (m) => resolve(String((m as { url: string }).url)));
      child.once("exit", (code) => reject(new Error(`the viewer exited with ${code}`)));
    });
    const base = `${url}matrix?runs=${ids.join(",")}`;
    const timings = [
      await timed(base, "matrix, first page (first load)"),
      await timed(base, "matrix again (line-up kept)"),
      await timed(`${base}&disagree=1`, "disagreeing rows only"),
      await timed(`${base}&page=${Math.ceil(rows / 50)}`, "the last page"),
      await timed(`${url}matrix/tests?runs=${ids.join(",")}`, `pairwise tests (${(runs * (runs - 1)) / 2} pairs)`),
    ];
    const rss = await new Promise<number>((resolve) => {
      child.once("message", (m) => resolve(Number((m as { peakRssMB: number }).peakRssMB)));
      child.send("rss");
    });
    child.kill("SIGTERM");
    console.log(`\nmatrix of ${runs} runs × ${rows.toLocaleString("en-US")} rows (store ${(statSync(path).size / 1e6).toFixed(1)} MB, written in ${(buildMs / 1000).toFixed(1)} s); viewer peak RSS ${rss.toFixed(0)} MB`);
    for (const t of timings) console.log(`  ${t.page.padEnd(42)} ${t.ms.toFixed(1).padStart(8)} ms  ${(t.bytes / 1024).toFixed(0).padStart(5)} KB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function serve(path: string): Promise<void> {
  const { startViewer } = await import("../lib/view/server.js");
  const viewer = await startViewer({ store: path, port: 0 });
  process.on("message", () => process.send!({ peakRssMB: process.resourceUsage().maxRSS / 1024 }));
  process.on("SIGTERM", () => { void viewer.close().then(() => process.exit(0)); });
  process.send!({ url: viewer.url });
}

if (process.argv[2] === "serve") {
  await serve(process.argv[3]!);
} else {
  console.log(`typelm view: page times over one evaluation run, metric ${METRIC} (Node ${process.version}); budget: 200,000 rows' first page ≤ 1 s, server < 300 MB`);
  for (const rows of SIZES) await measure(rows);
  if (MATRIX !== undefined) await measureMatrix(MATRIX.rows, MATRIX.runs);
  if (PG_URL !== "") {
    console.log(`\nOn PostgreSQL (${shownUrl(PG_URL)}):`);
    for (const rows of PG_SIZES) await measure(rows, PG_URL);
    await closePostgresPools();
  }
}
