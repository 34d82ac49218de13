/**
 * `npm run bench:traces`: what production traces (`c.traces`) cost the caller, and whether the
 * store keeps up. (1) Per call on the caller's path: a Predict answered by a scripted model (no
 * latency), awaited one after another, without tracing, at sample 0 and at sample 1 (with the
 * writer, and with it off: the caller's path alone), on the SQLite file and on PostgreSQL; rounds
 * alternate the modes and the median round is reported, as CPU µs per call of this process (the
 * writer's work included when it is on, until the round's traces are flushed). (2) The store under 1,000 calls/s for
 * BENCH_SECONDS (default 60) at sample 1: every trace written, none dropped or failed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { configure, flushTraces, LabStore, Predict, Signature, traceCounters } from "../lib/index.js";
import { ScriptedLM } from "../lib/testing/index.js";
import { closePostgresPools } from "../lib/store/pg.js";
import { setTraceSink } from "../lib/traces/recorder.js";
import { startBenchPostgres } from "./evaluate-postgres.js";

const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);

/** "sample 1, writer off": traces captured and queued, then discarded (the caller's path alone). */
type Mode = "off" | "sample 0" | "sample 1" | "sample 1, writer off";

function program() {
  return new Predict(Upper).configure((c) => { c.lm = new ScriptedLM((req) => ({ loud: String(req.inputs?.word ?? "").toUpperCase() })); });
}

function setMode(mode: Mode): void {
  configure((c) => { c.traces = mode === "off" ? undefined : { sample: mode === "sample 0" ? 0 : 1 }; });
  setTraceSink(mode === "sample 1, writer off" ? { write() {} } : undefined);
}

async function round(p: Predict, mode: Mode): Promise<number> {
  setMode(mode);
  // CPU time (user + system) of this process, not wall time: other processes on a loaded machine
  // stretch wall time but not this process's CPU time. The writer's work is counted when it is on.
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await p.call({ word: `w${i % 50}` });
  await flushTraces();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function perCall(label: string): Promise<void> {
  const p = program();
  const modes: Mode[] = ["off", "sample 0", "sample 1", "sample 1, writer off"];
  for (const m of modes) await round(p, m); // warm-up
  const times: Record<Mode, number[]> = { off: [], "sample 0": [], "sample 1": [], "sample 1, writer off": [] };
  for (let r = 0; r < ROUNDS; r++) for (const m of r % 2 === 0 ? modes : [...modes].reverse()) times[m].push(await round(p, m));
  const off = median(times.off);
  console.log(`${label}: CPU per call (median of ${ROUNDS} rounds of ${CALLS} calls): off ${off.toFixed(1)} µs; ` +
    `sample 0 ${median(times["sample 0"]).toFixed(1)} µs (${(median(times["sample 0"]) - off).toFixed(1)}); ` +
    `sample 1 ${median(times["sample 1"]).toFixed(1)} µs (+${(median(times["sample 1"]) - off).toFixed(1)}, the writer's work on this thread included); ` +
    `sample 1 with the writer off (the caller's path) ${median(times["sample 1, writer off"]).toFixed(1)} µs (+${(median(times["sample 1, writer off"]) - off).toFixed(1)}); ` +
    `spread of off rounds (CPU) ${Math.min(...times.off).toFixed(1)}-${Math.max(...times.off).toFixed(1)} µs`);
}

async function sustained(label: string, countRows: () => Promise<number>): Promise<void> {
  setMode("sample 1");
  const p = program();
  const before = traceCounters();
  const rowsBefore = await countRows();
  let issued = 0, failedCalls = 0;
  const pending = new Set<Promise<unknown>>();
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(SECONDS * 1000, Math.floor(performance.now() - started)) - issued;
      for (let i = 0; i < due; i++) {
        const call = p.call({ word: `s${issued++}` }).catch(() => { failedCalls++; });
        pending.add(call);
        void call.finally(() => pending.delete(call));
      }
      if (issued >= SECONDS * 1000) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  await Promise.all(pending);
  const elapsed = (performance.now() - started) / 1000;
  const flushStart = performance.now();
  await flushTraces();
  const flushMs = performance.now() - flushStart;
  const after = traceCounters();
  const rows = (await countRows()) - rowsBefore;
  console.log(`${label}: ${issued} calls in ${elapsed.toFixed(1)} s (${(issued / elapsed).toFixed(0)}/s), ${rows} traces stored, ` +
    `dropped ${after.dropped - before.dropped}, failed ${after.failed - before.failed}, failed calls ${failedCalls}, flush at the end ${flushMs.toFixed(0)} ms` +
    (rows === issued ? " — nothing lost" : " — TRACES MISSING"));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "typelm-bench-traces-"));
  try {
    const path = join(dir, "lab.sqlite");
    configure((c) => { c.lab = { path }; });
    await perCall("SQLite");
    const sqliteRows = async () => {
      const lab = LabStore.open(path);
      let n = 0;
      for (const r of lab.runs({ kind: "traces" })) n += lab.rows(r.id).length;
      return n;
    };
    await sustained("SQLite", sqliteRows);
    const pg = await startBenchPostgres();
    if (typeof pg === "string") {
      console.log(`PostgreSQL: skipped (${pg})`);
      return;
    }
    try {
      configure((c) => { c.lab = { url: pg.url }; });
      await perCall("PostgreSQL");
      const lab = LabStore.open({ url: pg.url });
      const pgRows = async () => {
        let n = 0;
        for (const r of await lab.runs({ kind: "traces" })) n += (await lab.rows(r.id)).length;
        return n;
      };
      await sustained("PostgreSQL", pgRows);
    } finally {
      await closePostgresPools();
      pg.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
