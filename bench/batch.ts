/**
 * An evaluation of N examples through the fake provider's OpenAI batch endpoint against the same
 * evaluation run live at the fake's rate limit: wall time, peak RSS of the evaluating process, and
 * lab-store bytes per example, with the ratios. The fake provider runs in a process of its own, and
 * each measured run in a fresh process, so peak RSS is the evaluation's alone. Peak RSS is also
 * measured at N/4 to show how it grows with the batch size.
 *
 * Run with `npm run bench:batch` (builds to dist/, then runs dist/bench/batch.js).
 * Options (environment variables): BENCH_BATCH_EXAMPLES (20000), BENCH_RATE (500 requests/s for the
 * live run), BENCH_BURST (50).
 */
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Evaluation, FewShotExample, LabStore, LM, Predict } from "../lib/index.js";
import { startFakeProvider } from "../lib/testing/index.js";
import { intFromEnv } from "./env.js";
import { Classify, LABELS, labelFor } from "./review-task.js";

const EXAMPLES = intFromEnv("BENCH_BATCH_EXAMPLES", 20_000);
const RATE = intFromEnv("BENCH_RATE", 500);
const BURST = intFromEnv("BENCH_BURST", 50);
const self = fileURLToPath(import.meta.url);


interface Measured { mode: string; examples: number; wallMs: number; peakRssMB: number; storeBytesPerExample: number; accuracy: number; failures: number }

/** One measured evaluation, in this (fresh) process. */
async function measure(mode: "batch" | "live", count: number, baseURL: string): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), "typelm-bench-batch-"));
  try {
    const lab = LabStore.open(join(dir, "lab.sqlite"));
    const lm = new LM("openai/gpt-4o-mini", { apiKey: "sk-bench-batch-key", baseURL, temperature: 0 });
    const program = new Predict(Classify).configure((c) => { c.lm = lm; });
    const examples = Array.from({ length: count }, (_, i) => new FewShotExample({
      input: { review: `Review #${i}: the product arrived on time and works as described.` }, output: { sentiment: LABELS[i % 3]! }, id: `b-${i}`,
    }));
    const started = performance.now();
    const report = await new Evaluation({ lab, progress: false, concurrency: 32, ...(mode === "batch" ? { batch: { pollInterval: 0.05 } } : {}) })
      .evaluate({ moduleInstance: program, testExamples: examples });
    const wallMs = performance.now() - started;
    const bytes = ["lab.sqlite", "lab.sqlite-wal"].reduce((n, f) => { try { return n + statSync(join(dir, f)).size; } catch { return n; } }, 0);
    return {
      mode, examples: count, wallMs, peakRssMB: process.resourceUsage().maxRSS / 1024, storeBytesPerExample: bytes / count,
      accuracy: report.metrics.accuracy!, failures: report.failures.length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const role = process.env.BENCH_BATCH_ROLE;
if (role === "fake") {
  // The fake provider, alone in its process: it keeps every batch line in memory.
  const fake = await startFakeProvider({
    defaultReply: (request) => ({ sentiment: labelFor(String(request.messages[request.messages.length - 1]?.content ?? "")) }),
    rateLimit: { requestsPerSecond: RATE, burst: BURST },
  });
  process.send!({ url: fake.openaiBaseURL });
} else if (role === "measure") {
  const result = await measure(process.env.BENCH_MODE as "batch" | "live", Number(process.env.BENCH_COUNT), process.env.BENCH_URL!);
  process.stdout.write(JSON.stringify(result));
} else {
  const fakeProcess: ChildProcess = fork(self, [], { env: { ...process.env, BENCH_BATCH_ROLE: "fake" }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const url = await new Promise<string>((resolve) => fakeProcess.once("message", (m) => resolve((m as { url: string }).url)));
  const run = (mode: string, count: number): Measured => JSON.parse(execFileSync(process.execPath, [self], {
    env: { ...process.env, BENCH_BATCH_ROLE: "measure", BENCH_MODE: mode, BENCH_COUNT: String(count), BENCH_URL: url }, maxBuffer: 1 << 20,
  }).toString()) as Measured;
  try {
    const quarter = run("batch", Math.round(EXAMPLES / 4));
    const batch = run("batch", EXAMPLES);
    const live = run("live", EXAMPLES);
    console.log(`Evaluation of ${EXAMPLES} examples, one-step Predict, fake OpenAI provider (own process); live at ${RATE} requests/s (burst ${BURST})`);
    console.log("| run | examples | wall s | peak RSS MB | store bytes / example | accuracy | failed |");
    console.log("|---|---|---|---|---|---|---|");
    for (const m of [quarter, batch, live]) {
      console.log(`| ${m.mode} | ${m.examples} | ${(m.wallMs / 1000).toFixed(1)} | ${m.peakRssMB.toFixed(0)} | ${m.storeBytesPerExample.toFixed(0)} | ${m.accuracy.toFixed(3)} | ${m.failures} |`);
    }
    console.log(`batch / live: wall ${(batch.wallMs / live.wallMs).toFixed(3)}, peak RSS ${(batch.peakRssMB / live.peakRssMB).toFixed(2)}, store bytes ${(batch.storeBytesPerExample / live.storeBytesPerExample).toFixed(2)}`);
    console.log(`batch peak RSS at ${EXAMPLES} / at ${quarter.examples}: ${(batch.peakRssMB / quarter.peakRssMB).toFixed(2)}`);
  } finally {
    fakeProcess.kill();
  }
}
