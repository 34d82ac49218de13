/**
 * Evaluation throughput and recording cost:
 *   (a) a model of fixed latency L at concurrency C over N examples: wall time ÷ the ideal N·L/C;
 *   (b) the fake provider enforcing R requests/s (429 + retry-after), bursts 5 and 1: throughput ÷ R,
 *       429 answers, failed examples;
 *   (c) the lab store: µs per recorded example and bytes per example in the file, without and with the
 *       example's model call (`recordCalls`), and an evaluation unrecorded, recorded without its calls
 *       and recorded with them;
 *   (d) the same evaluation recording into a PostgreSQL server on 127.0.0.1 (started for the bench, default
 *       durability) against recording into the SQLite file and unrecorded: µs per recorded row; skipped,
 *       saying why, when no PostgreSQL server binaries are found.
 *
 * Run with `npm run bench:evaluate` (builds to dist/, then runs dist/bench/evaluate.js).
 * Options (environment variables): BENCH_LATENCY_MS (50), BENCH_CONCURRENCY (8), BENCH_EXAMPLES (400),
 * BENCH_RATE (50), BENCH_BURST (5), BENCH_RATE_EXAMPLES (300), BENCH_RATE_RUNS (3), BENCH_STORE_ROWS (5000),
 * BENCH_PARTS (abcd: which of the four to run). See bench/README.md.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Evaluation, FewShotExample, LabStore, LM, Predict } from "../lib/index.js";
import type { EvaluationRow } from "../lib/index.js";
import { ScriptedLM, startFakeProvider } from "../lib/testing/index.js";
import { closePostgresPools } from "../lib/store/pg.js";
import type { Lab } from "../lib/store/lab-store.js";
import type { ModelCall } from "../lib/lm/usage-scope.js";
import { intFromEnv } from "./env.js";
import { startBenchPostgres } from "./evaluate-postgres.js";
import { Classify, LABELS, labelFor } from "./review-task.js";

const LATENCY_MS = intFromEnv("BENCH_LATENCY_MS", 50);
const CONCURRENCY = intFromEnv("BENCH_CONCURRENCY", 8);
const EXAMPLES = intFromEnv("BENCH_EXAMPLES", 400);
const RATE = intFromEnv("BENCH_RATE", 50);
const BURST = intFromEnv("BENCH_BURST", 5);
const RATE_EXAMPLES = intFromEnv("BENCH_RATE_EXAMPLES", 300);
const RATE_RUNS = intFromEnv("BENCH_RATE_RUNS", 3);
const PARTS = process.env["BENCH_PARTS"] || "abcd";
const STORE_ROWS = intFromEnv("BENCH_STORE_ROWS", 5000);
/** What the fake provider takes to answer an admitted request (ms). */
const PROVIDER_LATENCY_MS = 20;


function examples(count: number): FewShotExample[] {
  return Array.from({ length: count }, (_, i) => new FewShotExample({
    input: { review: `Review #${i}: the product arrived on time and works as described.` },
    output: { sentiment: LABELS[i % 3]! }, id: `bench-${i}`,
  }));
}


// ---------------------------------------------------------------------------------------------
// (a) fixed latency

async function fixedLatency(): Promise<number> {
  const lm = new ScriptedLM((req) => ({ sentiment: labelFor(String(req.inputs?.["review"])) }), { latencyMs: LATENCY_MS });
  const m = new Predict(Classify).configure((c) => { c.lm = lm; });
  const started = performance.now();
  const report = await new Evaluation({ concurrency: CONCURRENCY, record: false, progress: false })
    .evaluate({ moduleInstance: m, testExamples: examples(EXAMPLES) });
  const wall = performance.now() - started;
  const ideal = (EXAMPLES * LATENCY_MS) / CONCURRENCY;
  if (report.accuracy !== 1) throw new Error(`(a) expected every prediction right, got accuracy ${report.accuracy}`);
  console.log(`(a) fixed latency L=${LATENCY_MS} ms, C=${CONCURRENCY}, N=${EXAMPLES}: wall ${wall.toFixed(0)} ms, ideal N*L/C ${ideal.toFixed(0)} ms`);
  const ratio = wall / ideal;
  console.log(`    wall / ideal: ${ratio.toFixed(3)}  target <= 1.1: ${ratio <= 1.1 ? "PASS" : "MISS"}`);
  return ratio;
}

// ---------------------------------------------------------------------------------------------
// (b) rate-limited provider

interface RateRun {
  burst: number;
  /** Examples per second ÷ R. */
  ratio: number;
  /** Answers that were 429. */
  refused: number;
  failed: number;
}

async function rateLimited(burst: number): Promise<RateRun> {
  const fake = await startFakeProvider({
    defaultReply: async (req) => {
      await new Promise((r) => setTimeout(r, PROVIDER_LATENCY_MS));
      return { sentiment: labelFor(req.messages.at(-1)?.content ?? "") };
    },
  });
  try {
    const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-bench-000000000000", baseURL: fake.openaiBaseURL });
    const m = new Predict(Classify).configure((c) => { c.lm = lm; });
    await m.call({ review: "Review #0: warm-up" }); // loads the SDK outside the timing
    fake.rateLimit({ requestsPerSecond: RATE, burst });
    const started = performance.now();
    const report = await new Evaluation({ concurrency: 16, record: false, progress: false })
      .evaluate({ moduleInstance: m, testExamples: examples(RATE_EXAMPLES) });
    const seconds = (performance.now() - started) / 1000;
    const throughput = RATE_EXAMPLES / seconds;
    const ratio = throughput / RATE;
    console.log(
      `(b) provider limited to R=${RATE} req/s (token bucket, burst ${burst}, ${PROVIDER_LATENCY_MS} ms per answer), C=16, N=${RATE_EXAMPLES}: ` +
        `${seconds.toFixed(2)} s, ${throughput.toFixed(1)} examples/s, ${fake.rateLimited} answers were 429, ` +
        `${report.failures.length} failed examples, accuracy ${report.accuracy}`,
    );
    console.log(`    throughput / R: ${ratio.toFixed(3)}  target >= 0.85 with 0 failed: ${ratio >= 0.85 && report.failures.length === 0 ? "PASS" : "MISS"}`);
    return { burst, ratio, refused: fake.rateLimited, failed: report.failures.length };
  } finally {
    await fake.close();
  }
}

// ---------------------------------------------------------------------------------------------
// (c) lab store

function sampleRow(index: number): EvaluationRow {
  return {
    index, exampleId: `bench-${index}`,
    inputs: { review: `Review #${index}: the product arrived on time and works as described.` },
    expected: { sentiment: "positive" }, prediction: { sentiment: index % 2 === 0 ? "positive" : "neutral" },
    scores: { accuracy: index % 2 === 0 ? 1 : 0, f1_score: index % 2 === 0 ? 1 : 0 }, error: null,
    durationMs: 512.25, inputTokens: 180, outputTokens: 12, cost: 0.0000342,
  };
}

async function store(dir: string): Promise<void> {
  const path = join(dir, "lab.sqlite");
  const lab = LabStore.open(path);
  const runId = lab.startRun({ kind: "evaluation", name: "bench", config: {} });
  const warm = lab.startRun({ kind: "evaluation", name: "warm-up" });
  for (let i = 0; i < 200; i++) lab.recordExample(warm, sampleRow(i));
  const sizeBefore = fileBytes(path);
  const started = performance.now();
  for (let i = 0; i < STORE_ROWS; i++) lab.recordExample(runId, sampleRow(i));
  const perRowUs = ((performance.now() - started) * 1000) / STORE_ROWS;
  const bytes = (fileBytes(path) - sizeBefore) / STORE_ROWS;
  const json = Buffer.byteLength(JSON.stringify(sampleRow(1)));
  console.log(`(c) lab store, ${STORE_ROWS} rows, one autocommit insert each (WAL): ${perRowUs.toFixed(1)} us per recorded example`);
  console.log(`    file growth after checkpoint: ${bytes.toFixed(0)} bytes per example (the row as JSON: ${json} bytes)`);

  // The same rows with the model call each made (Classify's real prompt: the system message is the
  // same in every call and stored once).
  const sent = new Predict(Classify).prompt();
  const system = sent.system();
  const withCalls = lab.startRun({ kind: "evaluation", name: "bench-calls", config: {} });
  const callOf = (i: number) => [{
    provider: "openai", model: "gpt-4o-mini",
    messages: [{ role: "system" as const, content: system }, { role: "user" as const, content: `review: Review #${i}: the product arrived on time and works as described.` }],
    reply: `{"sentiment":"${i % 2 === 0 ? "positive" : "neutral"}"}`, inputTokens: 180, outputTokens: 12, cost: 0.0000342, latencyMs: 512.25, cached: false,
  }];
  const sizeBeforeCalls = fileBytes(path);
  const startedCalls = performance.now();
  for (let i = 0; i < STORE_ROWS; i++) lab.recordExample(withCalls, sampleRow(i), callOf(i));
  const perRowCallsUs = ((performance.now() - startedCalls) * 1000) / STORE_ROWS;
  const bytesCalls = (fileBytes(path) - sizeBeforeCalls) / STORE_ROWS;
  console.log(`    with its model call (system prompt ${system.length} characters, stored once): ${perRowCallsUs.toFixed(1)} us and ${bytesCalls.toFixed(0)} bytes per example ` +
    `(${(perRowCallsUs / perRowUs).toFixed(2)}x and ${(bytesCalls / bytes).toFixed(2)}x the row alone)`);

  // The same evaluation with and without recording, instant model: the difference per example.
  const lm = new ScriptedLM((req) => ({ sentiment: labelFor(String(req.inputs?.["review"])) }));
  const m = new Predict(Classify).configure((c) => { c.lm = lm; });
  const testExamples = examples(2000);
  const timed = async (record: boolean, recordCalls = false): Promise<number> => {
    const t = performance.now();
    await new Evaluation({ concurrency: 8, record, recordCalls, lab: record ? lab : null, progress: false }).evaluate({ moduleInstance: m, testExamples });
    return performance.now() - t;
  };
  await timed(false);
  await timed(true);
  await timed(true, true);
  const offs: number[] = [], ons: number[] = [], calls: number[] = [];
  for (let round = 0; round < 5; round++) {
    offs.push(await timed(false));
    ons.push(await timed(true));
    calls.push(await timed(true, true));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const off = (median(offs) * 1000) / testExamples.length;
  const on = (median(ons) * 1000) / testExamples.length;
  const withModelCalls = (median(calls) * 1000) / testExamples.length;
  console.log(`    Evaluation with an instant model, N=2000, median of 5: ${off.toFixed(1)} us/example unrecorded, ${on.toFixed(1)} recorded (+${(on - off).toFixed(1)} us), ` +
    `${withModelCalls.toFixed(1)} recorded with its model calls (+${(withModelCalls - off).toFixed(1)} us, ${((withModelCalls - off) / (on - off)).toFixed(2)}x the recording without them)`);
}

// ---------------------------------------------------------------------------------------------
// (d) a team's lab on PostgreSQL over loopback

async function postgres(dir: string): Promise<void> {
  const server = await startBenchPostgres();
  if (typeof server === "string") {
    console.log(`(d) PostgreSQL over loopback: skipped, ${server}`);
    return;
  }
  try {
    const team = LabStore.open({ url: server.url });
    const file = LabStore.open(join(dir, "lab-d.sqlite"));
    await team.runs(); // connects and creates the tables outside the timing
    // The store alone: rows queued and sent in bursts, then flushed; with and without each row's call.
    const sent = new Predict(Classify).prompt();
    const system = sent.system();
    const callOf = (i: number): ModelCall[] => [{
      provider: "openai", model: "gpt-4o-mini",
      messages: [{ role: "system", content: system }, { role: "user", content: `review: Review #${i}: the product arrived on time and works as described.` }],
      reply: `{"sentiment":"${i % 2 === 0 ? "positive" : "neutral"}"}`, inputTokens: 180, outputTokens: 12, cost: 0.0000342, latencyMs: 512.25, cached: false,
    }];
    const perRow = async (withCalls: boolean): Promise<number> => {
      const runId = team.startRun({ kind: "evaluation", name: withCalls ? "bench-calls" : "bench" });
      await team.flush();
      const started = performance.now();
      for (let i = 0; i < STORE_ROWS; i++) {
        team.recordExample(runId, sampleRow(i), withCalls ? callOf(i) : undefined);
        // An evaluation's rows arrive over many turns, not in one.
        if (i % 8 === 7) await new Promise((resolve) => setImmediate(resolve));
      }
      await team.flush();
      return ((performance.now() - started) * 1000) / STORE_ROWS;
    };
    await perRow(false);
    const rowUs = await perRow(false);
    const callsUs = await perRow(true);
    console.log(`(d) PostgreSQL on 127.0.0.1 (fsync and synchronous commit on), ${STORE_ROWS} rows queued 8 per turn then flushed: ` +
      `${rowUs.toFixed(1)} us per row, ${callsUs.toFixed(1)} us with its model call`);

    // The evaluation of part (c) with an instant model, recording (with its calls) into each store in turn.
    const lm = new ScriptedLM((req) => ({ sentiment: labelFor(String(req.inputs?.["review"])) }));
    const m = new Predict(Classify).configure((c) => { c.lm = lm; });
    const testExamples = examples(2000);
    const timed = async (lab: Lab | null, recordCalls = true): Promise<number> => {
      const t = performance.now();
      await new Evaluation({ concurrency: 8, record: lab !== null, recordCalls, lab, progress: false }).evaluate({ moduleInstance: m, testExamples });
      return performance.now() - t;
    };
    await timed(null);
    await timed(file);
    await timed(team);
    const offs: number[] = [], sqlite: number[] = [], pg: number[] = [], pgNoCalls: number[] = [];
    for (let round = 0; round < 5; round++) {
      offs.push(await timed(null));
      sqlite.push(await timed(file));
      pg.push(await timed(team));
      pgNoCalls.push(await timed(team, false));
    }
    const median = (xs: number[]) => ([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! * 1000) / testExamples.length;
    const off = median(offs);
    console.log(`    Evaluation with an instant model, N=2000, C=8, median of 5 (us per example): unrecorded ${off.toFixed(1)}, ` +
      `SQLite ${median(sqlite).toFixed(1)} (+${(median(sqlite) - off).toFixed(1)}), PostgreSQL ${median(pg).toFixed(1)} (+${(median(pg) - off).toFixed(1)}), ` +
      `PostgreSQL without the calls ${median(pgNoCalls).toFixed(1)} (+${(median(pgNoCalls) - off).toFixed(1)}); all recorded with their model calls unless said`);
  } finally {
    await closePostgresPools();
    server.stop();
  }
}

/** Bytes of the main file after folding the WAL into it (a second connection may checkpoint). */
function fileBytes(path: string): number {
  const Database = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
  const db = new Database(path);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return statSync(path).size;
}

/** Each burst's runs side by side: throughput ÷ R, 429 answers and failed examples. */
function rateTable(runs: readonly RateRun[]): void {
  console.log(`\n(b) summary, R=${RATE} req/s, N=${RATE_EXAMPLES} examples per run, ${RATE_RUNS} run(s) per burst:`);
  console.log("burst  throughput/R per run         min    429 answers per run   failed");
  for (const burst of [...new Set(runs.map((r) => r.burst))]) {
    const mine = runs.filter((r) => r.burst === burst);
    const ratios = mine.map((r) => r.ratio.toFixed(3)).join(" ");
    const min = Math.min(...mine.map((r) => r.ratio));
    const refused = mine.map((r) => String(r.refused)).join(" ");
    const failed = mine.reduce((sum, r) => sum + r.failed, 0);
    console.log(`${String(burst).padStart(5)}  ${ratios.padEnd(27)}  ${min.toFixed(3)}  ${refused.padEnd(20)}  ${failed}`);
  }
  console.log("");
}

async function main(): Promise<void> {
  if (PARTS.includes("a")) await fixedLatency();
  if (PARTS.includes("b")) {
    const runs: RateRun[] = [];
    // Interleaved, so a busy moment of the machine does not fall on one burst only.
    for (let run = 0; run < RATE_RUNS; run++) {
      runs.push(await rateLimited(BURST));
      if (BURST !== 1) runs.push(await rateLimited(1));
    }
    rateTable(runs);
  }
  if (!PARTS.includes("c") && !PARTS.includes("d")) return;
  const dir = mkdtempSync(join(tmpdir(), "typelm-bench-"));
  try {
    if (PARTS.includes("c")) await store(dir);
    if (PARTS.includes("d")) await postgres(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
