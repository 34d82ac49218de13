/**
 * The bundle's deferred modules (scripts/deferred-modules.mjs): code a program reaches only through
 * synchronous functions it may never call, built apart as dist/pkg/deferred/<name>.cjs and loaded at the
 * first call. `import "typelm"` must load none of them; each must load beside the eager chunk and work on
 * its classes (one instance of each, not a copy); and jest's module registry, which refuses to `require`
 * ES modules, must load them too (this suite runs under it). Run `npm run build` first (CI does).
 */
import { describe, expect, it } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CalculatorTool, compare, TypelmError, ValidationError } from "typelm";

const root = process.cwd();
const pkg = join(root, "dist/pkg");

/** Names of the deferred modules in the build (dist/pkg/deferred/<name>.cjs). */
function deferredNames(): string[] {
  const dir = join(pkg, "deferred");
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".cjs"))
    .map((f) => f.replace(/\.cjs$/, ""))
    .sort();
}

/** The eager chunk (the output holding lib/load-sync.ts), as a file URL, from the build's metafile. */
function eagerChunkUrl(): string {
  const meta = JSON.parse(readFileSync(join(root, "dist/bundle-meta.json"), "utf8")) as {
    outputs: Record<string, { inputs: Record<string, unknown>; exports: string[] }>;
  };
  const [file, output] = Object.entries(meta.outputs).find(([, o]) => "lib/load-sync.ts" in o.inputs) ?? [];
  if (file === undefined || output === undefined) throw new Error("no output holds lib/load-sync.ts");
  if (!output.exports.includes("requireDeferred")) throw new Error(`${file} does not export requireDeferred`);
  return `file://${join(root, file)}`;
}

/** Runs `body` (ESM) in plain Node with a hook recording every `require` request; prints `out`. */
function inChild(body: string): Record<string, unknown> {
  const code = `
import { Module } from "node:module";
const requested = [];
const originalLoad = Module._load;
Module._load = function (request, ...rest) { requested.push(request); return originalLoad.call(this, request, ...rest); };
const deferredRequested = () => requested.filter((r) => r.includes("/deferred/")).map((r) => r.replace(/^.*\\/deferred\\//, ""));
const out = {};
${body}
console.log(JSON.stringify(out));
`;
  const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: root, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
  return JSON.parse(stdout.trim().split("\n").pop() as string) as Record<string, unknown>;
}

describe("deferred modules", () => {
  it("the build has deferred modules, and `import \"typelm\"` requires none of them", () => {
    expect(deferredNames().length).toBeGreaterThan(10);
    const out = inChild(`
await import("typelm");
out.atImport = deferredRequested();
const { CalculatorTool } = await import("typelm");
out.value = new CalculatorTool().call({ expression: "2 * (3 + 4)" });
out.afterCall = deferredRequested();
`);
    expect(out.atImport).toEqual([]);
    expect(out.value).toBe(14);
    // The hook sees the load the calculator's first call makes, so the empty list above means something.
    expect(out.afterCall).toEqual(["tools/arithmetic.cjs"]);
  }, 30000);

  it("without the deferred files, `import \"typelm\"` still works and a first call says what is missing", () => {
    // A copy of the package inside the repository (so zod resolves from its node_modules) without dist/pkg/deferred/.
    const copy = mkdtempSync(join(root, "dist", "deferred-check-"));
    try {
      cpSync(pkg, join(copy, "pkg"), { recursive: true });
      rmSync(join(copy, "pkg", "deferred"), { recursive: true });
      const out = inChild(`
const { CalculatorTool, Predict } = await import(${JSON.stringify(`file://${join(copy, "pkg", "index.js")}`)});
out.imported = typeof Predict === "function";
try { new CalculatorTool().call({ expression: "1 + 1" }); out.message = "no error"; } catch (error) { out.message = error.message; }
`);
      expect(out.imported).toBe(true);
      expect(out.message).toMatch(/could not load dist\/pkg\/deferred\/tools\/arithmetic\.cjs/);
      expect(out.message).toMatch(/mark it external/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 30000);

  it("each deferred module loads after `import \"typelm\"`, with its exports", () => {
    const names = deferredNames();
    const out = inChild(`
await import("typelm");
const { requireDeferred } = await import(${JSON.stringify(eagerChunkUrl())});
out.loaded = {};
for (const name of ${JSON.stringify(names)}) {
  const m = requireDeferred(name);
  out.loaded[name] = Object.keys(m).length;
}
`);
    const loaded = out.loaded as Record<string, number>;
    expect(Object.keys(loaded).sort()).toEqual(names);
    for (const name of names) expect([name, loaded[name]! > 0]).toEqual([name, true]);
  }, 30000);

  it("a deferred module works on the eager chunk's classes: an error it throws is the package's own class", () => {
    const out = inChild(`
const { CalculatorTool, TypelmError } = await import("typelm");
try { new CalculatorTool().call({ expression: "2 +" }); out.threw = false; } catch (error) {
  out.threw = true; out.typelm = error instanceof TypelmError; out.name = error.name;
}
`);
    expect(out).toEqual({ threw: true, typelm: true, name: "ArithmeticError" });
  }, 30000);

  it("under jest's module registry too: the calculator, and compare() checking its reports", () => {
    expect(new CalculatorTool().call({ expression: "2 * (3 + 4)" })).toBe(14);
    expect(() => new CalculatorTool().call({ expression: "2 +" })).toThrow(TypelmError);
    // compare() is a stand-in for the deferred lib/evaluate/compare.ts, whose checks throw the package's ValidationError.
    expect(() => compare(null as never, null as never)).toThrow(ValidationError);
    expect(() => compare(null as never, null as never)).toThrow(/the first report must be an Evaluation report/);
  });
});
