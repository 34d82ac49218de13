/**
 * The shipped type declarations in a strict project that installed typelm and none of its optional
 * packages: node_modules holds a copy of the package and its required dependencies
 * (test/helpers/bare-install.ts), @types/node and TypeScript, and nothing else (no ioredis, openai, ...).
 * tsconfig: strict, skipLibCheck false (the declarations themselves are checked), declaration true
 * (exported values whose inferred type names a typelm type need that type exported), module nodenext
 * (package.json "exports" decide what can be named). Compiled: the experiment file `typelm init`
 * writes, a file importing every entry point of package.json "exports", and exported values of common
 * calls. Needs `npm run build` first.
 */
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { bareInstall, type BareInstall } from "../helpers/bare-install.js";

let bare: BareInstall;
beforeAll(() => {
  bare = bareInstall();
  bare.link("@types/node");
  bare.link("typescript");
});
afterAll(() => bare?.remove());

const USAGE = `
import { z } from "zod";
import { ChainOfThought, FewShotExample, MIPROv2, Memory, Predict, Signature, t } from "typelm";
import { ScriptedLM } from "typelm/testing";

export const Classify = Signature.define({
  name: "Classify", description: "Classify.",
  input: { sentence: z.string() }, output: { sentiment: z.enum(["positive", "negative"]), when: t.date() },
});
export const predict = new Predict(Classify);
export const chain = new ChainOfThought(Classify);
export const lm = new ScriptedLM([{ sentiment: "positive", when: "2026-01-01" }]);
export const result = await predict.call({ sentence: "x" }, { lm });
export const examples = [new FewShotExample({ input: { sentence: "a" }, output: { sentiment: "positive" } })];
export const optimizer = new MIPROv2({ metric: (example: FewShotExample, prediction: unknown) => 1 });
export const estimate = await optimizer.estimate({ moduleInstance: predict, trainingExamples: examples });
export const memoryConfig = Memory.config;
`;

test("the project resolves no optional package", () => {
  const require = createRequire(join(bare.dir, "package.json"));
  for (const name of ["ioredis", "openai", "@anthropic-ai/sdk", "ollama", "vega", "@opentelemetry/sdk-trace-base"]) {
    expect({ name, resolves: (() => { try { require.resolve(name); return true; } catch { return false; } })() }).toEqual({ name, resolves: false });
  }
  expect(require.resolve("zod")).toContain("zod");
});

test("typelm init's experiment file, every entry point and common exported values compile strictly with declarations", async () => {
  const init = await bare.node(["node_modules/typelm/dist/pkg/bin.js", "init", "tickets"]);
  expect(init.code).toBe(0);
  expect(readFileSync(join(bare.dir, "experiments/tickets.ts"), "utf8")).toContain("defineExperiment(");

  const manifest = JSON.parse(readFileSync(join(bare.typelm, "package.json"), "utf8")) as { exports: Record<string, unknown> };
  const entries = Object.keys(manifest.exports).map((key) => `typelm${key.slice(1)}`);
  expect(entries).toEqual(expect.arrayContaining(["typelm", "typelm/testing", "typelm/notebook"]));
  writeFileSync(join(bare.dir, "entries.ts"), entries.map((name, i) => `export * as entry${i} from ${JSON.stringify(name)};\n`).join(""));
  writeFileSync(join(bare.dir, "usage.ts"), USAGE);
  writeFileSync(join(bare.dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      target: "es2022", module: "nodenext", moduleResolution: "nodenext", strict: true, skipLibCheck: false,
      declaration: true, outDir: "out", types: ["node"],
    },
    include: ["experiments", "entries.ts", "usage.ts"],
  }));
  const tsc = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "."], { cwd: bare.dir, encoding: "utf8", timeout: 120_000 });
  expect(`${tsc.stdout}${tsc.stderr}`.trim()).toBe("");
  expect(tsc.status).toBe(0);
  // The declaration of the init file was written (the step TS2883 fails).
  expect(readFileSync(join(bare.dir, "out/experiments/tickets.d.ts"), "utf8")).toContain("DefinedSignature");
}, 120_000);
