/**
 * Cold import time against the main peer, `@ax-llm/ax`, measured in one run: each sample is a fresh Node
 * process timing its imports only (not Node's own start-up). Rows, interleaved run by run:
 *   zod              `import "zod"` alone (every typelm program loads it anyway)
 *   zod + typelm     `import "zod"` then `import "typelm"` (the package as a user gets it: the bundled build)
 *   zod + dist/lib   the same with the unbundled tsc output, to show what the bundle buys
 *   @ax-llm/ax       `import "@ax-llm/ax"` alone
 * Prints medians (wall and CPU time), the modules each import loads, the ratios zod + typelm / zod and
 * zod + typelm / Ax, and the bytes of the eager chunk (what `import "typelm"` parses; its budget is in
 * test/package/eager-budget.test.ts) with its largest modules.
 *
 * Run with `npm run bench:import`. Option: BENCH_RUNS (default 15). See bench/README.md.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { eagerBytes, eagerModuleBytes } from "../scripts/eager-chunk.js";

const RUNS = Number.parseInt(process.env.BENCH_RUNS ?? "15", 10);
if (!Number.isFinite(RUNS) || RUNS < 1) throw new Error(`BENCH_RUNS must be a positive integer, got ${process.env.BENCH_RUNS}`);

const UNBUNDLED = new URL("../lib/index.js", import.meta.url).href;
/** Row name → the specifiers imported in order. */
const targets: Record<string, string[]> = {
  zod: ["zod"],
  "zod + typelm": ["zod", "typelm"],
  "zod + dist/lib": ["zod", UNBUNDLED],
  "@ax-llm/ax": ["@ax-llm/ax"],
};

// Counts the modules resolved (not node: built-ins) through a resolve hook registered before the imports.
const COUNT = `
const { register } = await import("node:module");
const seen = new Set();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => seen.add(url));
port1.unref();
register("data:text/javascript," + encodeURIComponent(
  "let port; export function initialize(d) { port = d.port; }" +
  "export async function resolve(s, c, n) { const r = await n(s, c); port.postMessage(r.url); return r; }"),
  { data: { port: port2 }, transferList: [port2] });
for (const spec of JSON.parse(process.argv[1])) await import(spec);
await new Promise((r) => setTimeout(r, 20));
console.log(JSON.stringify({ modules: [...seen].filter((u) => !u.startsWith("node:")).length }));
`;

// Timing without the hook (the hook itself slows resolution). CPU time (user + system) moves much
// less than wall time on a shared machine.
const TIME = `const c = process.cpuUsage(); const s = performance.now();
for (const spec of JSON.parse(process.argv[1])) await import(spec);
const ms = performance.now() - s; const u = process.cpuUsage(c);
console.log(JSON.stringify({ ms, cpuMs: (u.user + u.system) / 1000 }));`;

function run<T>(code: string, specs: string[]): T {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", code, JSON.stringify(specs)], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    encoding: "utf8",
  });
  return JSON.parse(out.trim().split("\n").pop() as string) as T;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const names = Object.keys(targets);
const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < RUNS; i++) {
  for (const name of names) {
    const r = run<{ ms: number; cpuMs: number }>(TIME, targets[name]!);
    wall[name]!.push(r.ms);
    cpu[name]!.push(r.cpuMs);
  }
}
const modules = Object.fromEntries(names.map((name) => [name, run<{ modules: number }>(COUNT, targets[name]!).modules]));

console.log("import            median ms  min ms  max ms  median CPU ms  modules loaded");
for (const name of names) {
  const t = wall[name]!;
  console.log(
    `${name.padEnd(16)}  ${median(t).toFixed(1).padStart(9)}  ${Math.min(...t).toFixed(1).padStart(6)}  ${Math.max(...t).toFixed(1).padStart(6)}` +
      `  ${median(cpu[name]!).toFixed(1).padStart(13)}  ${String(modules[name]).padStart(14)}`,
  );
}
const ratio = median(wall["zod + typelm"]!) / median(wall["@ax-llm/ax"]!);
const cpuRatio = median(cpu["zod + typelm"]!) / median(cpu["@ax-llm/ax"]!);
const own = median(wall["zod + typelm"]!) - median(wall.zod!);
console.log(`\nzod + typelm / @ax-llm/ax: ${ratio.toFixed(2)} wall, ${cpuRatio.toFixed(2)} CPU (medians of ${RUNS} interleaved fresh processes each)`);
console.log(`typelm beyond zod: ${own.toFixed(1)} ms wall; unbundled tree: ${(median(wall["zod + dist/lib"]!) - median(wall.zod!)).toFixed(1)} ms`);
const zodRatio = median(wall["zod + typelm"]!) / median(wall.zod!);
const zodCpuRatio = median(cpu["zod + typelm"]!) / median(cpu.zod!);
console.log(`zod + typelm / zod: ${zodRatio.toFixed(2)} wall, ${zodCpuRatio.toFixed(2)} CPU`);
const pkgDir = fileURLToPath(new URL("../pkg", import.meta.url));
console.log(`eager chunk: ${eagerBytes(pkgDir).toLocaleString("en")} bytes; largest modules: ${eagerModuleBytes(pkgDir).slice(0, 8).map((m) => `${m.module} ${m.bytes}`).join(", ")}`);
