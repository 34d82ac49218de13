/**
 * Cold import time: milliseconds for `await import("typelm")` (dist/lib/index.js) in a fresh Node
 * process, against zod alone (which every typelm user loads anyway) measured in the same run,
 * runs interleaved. Also counts the modules each import loads, since on Node 20 that count,
 * not any one heavy dependency, is what the time is made of.
 *
 * Run with `npm run build && node dist/bench/import.js`. Option: BENCH_RUNS (default 15).
 * See bench/README.md.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const RUNS = Number.parseInt(process.env.BENCH_RUNS ?? "15", 10);
if (!Number.isFinite(RUNS) || RUNS < 1) throw new Error(`BENCH_RUNS must be a positive integer, got ${process.env.BENCH_RUNS}`);

const TYPELM = new URL("../lib/index.js", import.meta.url).href;
const targets: Record<string, string> = { zod: "zod", typelm: TYPELM };

// The child times only the import (not Node's own start-up) and reports how many modules were
// resolved, through a resolve hook registered before the timed import.
const CHILD = `
const { register } = await import("node:module");
const seen = new Set();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => seen.add(url));
port1.unref();
register("data:text/javascript," + encodeURIComponent(
  "let port; export function initialize(d) { port = d.port; }" +
  "export async function resolve(s, c, n) { const r = await n(s, c); port.postMessage(r.url); return r; }"),
  { data: { port: port2 }, transferList: [port2] });
const started = performance.now();
await import(process.argv[1]);
const ms = performance.now() - started;
await new Promise((r) => setTimeout(r, 20));
console.log(JSON.stringify({ ms, modules: [...seen].filter((u) => !u.startsWith("node:")).length }));
`;

// Timing without the hook (the hook itself slows resolution), counting with it.
// CPU time (user + system) is reported too: on a shared machine it moves much less than wall time.
const TIME_ONLY = `const c = process.cpuUsage(); const s = performance.now(); await import(process.argv[1]);
const ms = performance.now() - s; const u = process.cpuUsage(c);
console.log(JSON.stringify({ ms, cpuMs: (u.user + u.system) / 1000 }));`;

function run(code: string, spec: string): { ms: number; cpuMs?: number; modules?: number } {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", code, spec], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    encoding: "utf8",
  });
  return JSON.parse(out.trim().split("\n").pop() as string) as { ms: number; cpuMs?: number; modules?: number };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const times: Record<string, number[]> = { zod: [], typelm: [] };
const cpu: Record<string, number[]> = { zod: [], typelm: [] };
for (let i = 0; i < RUNS; i++) {
  for (const [name, spec] of Object.entries(targets)) {
    const r = run(TIME_ONLY, spec);
    times[name]!.push(r.ms);
    cpu[name]!.push(r.cpuMs ?? Number.NaN);
  }
}
const modules = Object.fromEntries(Object.entries(targets).map(([name, spec]) => [name, run(CHILD, spec).modules]));

console.log("import          median ms  min ms  max ms  median CPU ms  modules loaded");
for (const name of Object.keys(targets)) {
  const t = times[name]!;
  console.log(
    `${name.padEnd(14)}  ${median(t).toFixed(1).padStart(9)}  ${Math.min(...t).toFixed(1).padStart(6)}  ${Math.max(...t).toFixed(1).padStart(6)}` +
      `  ${median(cpu[name]!).toFixed(1).padStart(13)}  ${String(modules[name]).padStart(14)}`,
  );
}
const own = median(times.typelm!) - median(times.zod!);
const ownCpu = median(cpu.typelm!) - median(cpu.zod!);
console.log(`\ntypelm beyond zod: ${own.toFixed(1)} ms wall, ${ownCpu.toFixed(1)} ms CPU (median differences, ${RUNS} interleaved runs each)`);
