/**
 * `import "typelm"` loads only what every program needs: the packages a program may never use (or uses
 * only later) load at first use. Checked in plain Node child processes importing the package by name (the
 * bundled build in dist/pkg), with a resolve hook for imports and a hook on `require` for what typelm
 * loads synchronously. Run `npm run build` first (CI does).
 */
import { describe, expect, it } from "@jest/globals";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { eagerModuleBytes } from "../../scripts/eager-chunk.js";

const root = process.cwd();

/** Runs `body` (ESM, top-level await) after installing the hooks; `loaded()` lists the packages loaded so far. */
function inChild(body: string): unknown {
  // Evaluated with the repository as working directory, so "typelm" resolves as a user's import would.
  const code = `
import { register, Module } from "node:module";
const seen = new Set();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => seen.add(url));
register("data:text/javascript," + encodeURIComponent(
  "let port; export function initialize(d) { port = d.port; }" +
  "export async function resolve(s, c, n) { const r = await n(s, c); port.postMessage(r.url); return r; }"),
  { data: { port: port2 }, transferList: [port2] });
const originalLoad = Module._load;
Module._load = function (request, ...rest) { seen.add(request); return originalLoad.call(this, request, ...rest); };
const pkgOf = (u) => { if (u.includes("/dist/pkg/")) return "typelm"; const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(u); return m ? m[1] : (/^[a-z@]/.test(u) && !u.startsWith("node:") && !u.startsWith("file:") ? u.split("/").slice(0, u.startsWith("@") ? 2 : 1).join("/") : undefined); };
const loaded = async () => { await new Promise((r) => setTimeout(r, 30)); return [...new Set([...seen].map(pkgOf).filter(Boolean))].sort(); };
const out = {};
${body}
port1.close();
console.log(JSON.stringify(out));
`;
  const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: root, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
  return JSON.parse(stdout.trim().split("\n").pop() as string);
}

/** Packages most programs never need at import: each loads inside the feature that uses it. */
const LATER = [
  "temporal-polyfill", "@toon-format/toon", "csv-parse", "better-sqlite3", "@opentelemetry/api", "quickjs-emscripten-core",
  "@jitl/quickjs-wasmfile-release-sync", "@jitl/quickjs-ffi-types",
  "tsx", "cli-progress", "openai", "@anthropic-ai/sdk", "ollama", "ioredis", "vega", "vega-lite", "@resvg/resvg-js", "@modelcontextprotocol/sdk",
];

describe("cold start", () => {
  it("import \"typelm\" loads zod and nothing from the list of later packages", () => {
    const out = inChild(`await import("zod"); await import("typelm"); out.atImport = await loaded();`) as { atImport: string[] };
    expect(out.atImport).toContain("zod");
    expect(out.atImport).toContain("typelm");
    expect(out.atImport.filter((p) => LATER.includes(p))).toEqual([]);
  }, 30000);

  it("a date field loads the Temporal polyfill when it is used, and TOON data loads the TOON codec", () => {
    const out = inChild(`
const { z } = await import("zod");
const { Predict, Signature, Temporal, t } = await import("typelm");
const { ScriptedLM } = await import("typelm/testing");
const Due = Signature.define({ name: "Due", description: "When is it due?", input: { task: z.string() }, output: { due: t.date() } });
out.beforeUse = await loaded();
const p = await new Predict(Due).call({ task: "report" }, { lm: new ScriptedLM(() => ({ due: "2026-12-01" })) });
out.isPlainDate = p.due instanceof Temporal.PlainDate;
out.due = String(p.due);
out.afterDate = await loaded();
const Word = Signature.define({ name: "Word", description: "Say a word.", input: { x: z.string() }, output: { y: z.string() } });
await new Predict(Word).call({ x: "a" }, { lm: new ScriptedLM(() => ({ y: "b" }), { dataFormat: "toon" }) });
out.afterToon = await loaded();
`) as { beforeUse: string[]; isPlainDate: boolean; due: string; afterDate: string[]; afterToon: string[] };
    expect(out.beforeUse).not.toContain("temporal-polyfill");
    expect(out).toMatchObject({ isPlainDate: true, due: "2026-12-01" });
    expect(out.afterDate).toContain("temporal-polyfill");
    expect(out.afterDate).not.toContain("@toon-format/toon");
    expect(out.afterToon).toContain("@toon-format/toon");
  }, 30000);

  it("MCPClient loads the MCP SDK at connect, not at import", () => {
    const server = join(root, "test", "fixtures", "mcp", "server.mjs");
    const out = inChild(`
const { MCPClient } = await import("typelm");
out.beforeConnect = await loaded();
const mcp = await MCPClient.connect({ command: process.execPath, args: [${JSON.stringify(server)}, "stdio"] });
out.tools = (await mcp.tools()).length;
await mcp.close();
out.afterConnect = await loaded();
`) as { beforeConnect: string[]; tools: number; afterConnect: string[] };
    expect(out.beforeConnect).not.toContain("@modelcontextprotocol/sdk");
    expect(out.tools).toBe(7);
    expect(out.afterConnect).toContain("@modelcontextprotocol/sdk");
  }, 60000);

  it("every exported class and function keeps its name in the bundle (error names and saved module names use them)", () => {
    const out = inChild(`
const wrong = [];
for (const entry of ["typelm", "typelm/testing", "typelm/notebook"]) {
  for (const [name, value] of Object.entries(await import(entry))) {
    if (typeof value === "function" && value.name !== name) wrong.push(entry + " " + name + " -> " + value.name);
  }
}
const { Module: TypelmModule, Predict, Signature, ConfigurationError } = await import("typelm");
out.wrong = wrong;
out.moduleClass = new Predict(Signature.define({ name: "Echo", description: "Echo.", input: { x: (await import("zod")).z.string() }, output: { y: (await import("zod")).z.string() } })).constructor.name;
out.errorName = new ConfigurationError("x").name;
out.isModule = new Predict(Signature.define({ name: "E2", description: "E.", input: { x: (await import("zod")).z.string() }, output: { y: (await import("zod")).z.string() } })) instanceof TypelmModule;
`) as { wrong: string[]; moduleClass: string; errorName: string; isModule: boolean };
    expect(out).toEqual({ wrong: [], moduleClass: "Predict", errorName: "ConfigurationError", isModule: true });
  }, 30000);
});

/** The library's modules in the files `import "typelm"` loads (read from the build's metafile). */
function eagerModules(): Set<string> {
  return new Set(eagerModuleBytes(join(root, "dist/pkg")).map((m) => m.module));
}

describe("what the bundle loads at import", () => {
  it("none of the modules the library loads with import() at first use is in the chunk import \"typelm\" loads", () => {
    const eager = eagerModules();
    // A sanity check of the reading itself: the classes the index exports are there (PostgresLabStore is
    // exported as a type only, and its module is deferred: scripts/deferred-modules.mjs).
    expect(eager.size).toBeGreaterThan(50);
    for (const m of ["lib/module.ts", "lib/judge/judge.ts", "lib/store/lab-store.ts", "lib/store/registry/registry.ts"]) expect(eager.has(m)).toBe(true);
    const lazy = new Set<string>();
    for (const file of readdirSync(join(root, "lib"), { recursive: true })) {
      if (!String(file).endsWith(".ts")) continue;
      const path = join(root, "lib", String(file));
      for (const m of readFileSync(path, "utf8").matchAll(/import\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g)) {
        lazy.add(relative(root, join(dirname(path), m[1]!)).replace(/\.js$/, ".ts"));
      }
    }
    // LabStore is exported, so its module is eager; other code also reaches it with import().
    lazy.delete("lib/store/lab-store.ts");
    expect(lazy.size).toBeGreaterThan(20);
    expect([...lazy].filter((m) => eager.has(m)).sort()).toEqual([]);
    // What rarely used features need, by name: the judges' calibration and pairwise comparison, rescore,
    // the PostgreSQL store's queries and pool, the viewer and its chart.
    const rare = [
      "lib/judge/calibrate-run.ts", "lib/judge/kappa.ts", "lib/judge/pairwise-compare.ts", "lib/evaluate/rescore-run.ts",
      "lib/store/pg-lab-engine.ts", "lib/store/pg.ts", "lib/store/pg-lm-cache.ts", "lib/store/copy/lab-copy.ts", "lib/view/server.ts", "lib/view/chart.ts",
      // Only a stream reads a reply as it arrives; only MCPClient.connect opens a session; only a configured cache reads its table;
      // only a run with `batch` on sends through a provider's batch service.
      "lib/stream/json-reader.ts", "lib/stream/json-reply.ts", "lib/stream/toon-reply.ts", "lib/mcp/session.ts", "lib/store/lm-cache.ts", "lib/batch/transport.ts",
    ];
    expect(rare.filter((m) => eager.has(m))).toEqual([]);
  });
});

describe("typelm view", () => {
  it("loads vega and vega-lite when it draws an optimization page's chart, not when it starts or serves other pages", () => {
    const lib = (file: string) => JSON.stringify(join(root, "dist/lib", file));
    const out = inChild(`
const { mkdtempSync, rmSync } = await import("node:fs");
const { join } = await import("node:path");
const { tmpdir } = await import("node:os");
const { LabStore } = await import(${lib("store/lab-store.js")});
const { closeStoreSync } = await import(${lib("store/db.js")});
const dir = mkdtempSync(join(tmpdir(), "typelm-view-cold-"));
const path = join(dir, "lab.sqlite");
const lab = LabStore.open(path);
const id = lab.startRun({ kind: "optimization", name: "search", config: {} });
lab.recordTrial(id, { index: 0, kind: "baseline", parents: [], choices: {}, instructions: {}, demoIds: {}, score: 0.5, exampleScores: null,
  budgetSpent: 0, lmCalls: 0, inputTokens: 0, outputTokens: 0, cost: 0, durationMs: 1, error: null, data: {}, reused: 0 });
lab.finishRun(id, { status: "completed", score: 0.5, bestTrial: 0, summary: {} });
lab.close();
closeStoreSync(path);
const { startViewer } = await import(${lib("view/server.js")});
const viewer = await startViewer({ store: path, port: 0 });
out.runs = (await fetch(viewer.url)).status;
out.registry = (await fetch(viewer.url + "registry")).status;
out.beforeChart = await loaded();
const page = await fetch(viewer.url + "runs/" + id);
out.optimization = page.status;
out.chart = (await page.text()).includes('<figure id="trials-chart"><svg');
out.afterChart = await loaded();
await viewer.close();
rmSync(dir, { recursive: true, force: true });
`) as { runs: number; registry: number; optimization: number; chart: boolean; beforeChart: string[]; afterChart: string[] };
    expect(out).toMatchObject({ runs: 200, registry: 200, optimization: 200, chart: true });
    expect(out.beforeChart).toContain("better-sqlite3");
    expect(out.beforeChart.filter((p) => p === "vega" || p === "vega-lite")).toEqual([]);
    expect(out.afterChart).toEqual(expect.arrayContaining(["vega", "vega-lite"]));
  }, 60000);
});

describe("under jest without any set-up of its own", () => {
  it("dates and TOON work: jest's require cannot load the ES-module packages, so the bundle's CommonJS copies are used", () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-plain-jest-"));
    try {
      const dist = (file: string) => JSON.stringify(join(root, "dist/pkg", file));
      writeFileSync(join(dir, "dates.test.mjs"), `
import { Predict, Signature, Temporal, t } from ${dist("index.js")};
import { ScriptedLM } from ${dist("testing.js")};
import { z } from ${JSON.stringify(join(root, "node_modules/zod/index.js"))};
test("a date field and TOON data", async () => {
  expect(Temporal.PlainDate.from("2026-12-01").add({ days: 1 }).toString()).toBe("2026-12-02");
  const Due = Signature.define({ name: "Due", description: "When is it due?", input: { task: z.string() }, output: { due: t.date() } });
  const p = await new Predict(Due).call({ task: "report" }, { lm: new ScriptedLM(() => ({ due: "2026-12-01" }), { dataFormat: "toon" }) });
  expect(p.due).toBeInstanceOf(Temporal.PlainDate);
  expect(String(p.due)).toBe("2026-12-01");
});
`);
      const run = spawnSync(process.execPath, [join(root, "node_modules/jest/bin/jest.js"), "--rootDir", dir, "--config", JSON.stringify({ testMatch: ["**/*.test.mjs"], transform: {} }), "--ci"], {
        cwd: dir, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "--experimental-vm-modules" },
      });
      expect({ status: run.status, output: run.stderr }).toEqual({ status: 0, output: expect.stringContaining("1 passed") });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60000);
});
