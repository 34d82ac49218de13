/**
 * Acceptance tests written against the public API, section by section, the way an outside test
 * would: every import is by package name ("typelm", "typelm/testing", "typelm/notebook").
 *
 * How the names resolve: jest follows package.json `exports` for the package's own name (a
 * self-reference), so these imports load `dist/` — the build, not `lib/`. Run `npm run build` first
 * (`.ci/run` builds before `npm test`). This file also checks that plain Node resolves the three
 * entry points, both as a self-reference and from another package (node_modules/typelm link).
 */
import { describe, expect, test } from "@jest/globals";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as typelm from "typelm";
import * as testing from "typelm/testing";
import * as notebook from "typelm/notebook";

const root = resolve(import.meta.dirname, "../..");

// Every value name API.md shows as a named export of `typelm`.
const VALUES = [
  "Signature", "t", "Temporal", "LM", "configure", "withLM", "Strategy", "StrategyInterface",
  "Predict", "ChainOfThought", "ProgramOfThought", "ReAct", "CodeAct", "Module",
  "Tool", "tool", "Toolset", "CalculatorTool", "MemoryToolset", "Sandbox", "Memory",
  "FewShotExample", "SimpleOptimizer", "MIPROv2", "GEPA", "Evaluation", "Registry", "LabStore", "loadDataset",
  "Prompt", "Instrumentation", "Image", "Audio", "Document",
  "TypelmError", "ValidationError", "ConfigurationError", "LMError", "OutputError", "ToonDecodeError", "MaxIterationsError",
];

describe("entry points (API.md: package name typelm, three entry points)", () => {
  test("dist/ was built (these tests import the build)", () => {
    expect(existsSync(join(root, "dist/pkg/index.js"))).toBe(true);
  });

  test("typelm exports every name API.md shows", () => {
    const missing = VALUES.filter((name) => (typelm as Record<string, unknown>)[name] === undefined);
    expect(missing).toEqual([]);
  });

  test("typelm/testing exports ScriptedLM, SimulatedLM, startFakeProvider", () => {
    expect(typeof testing.ScriptedLM).toBe("function");
    expect(typeof testing.SimulatedLM).toBe("function");
    expect(typeof testing.startFakeProvider).toBe("function");
  });

  test("typelm/notebook exports display with the seven helpers", () => {
    for (const name of ["prediction", "trace", "candidates", "metrics", "confusion", "runs", "examples"]) {
      expect(typeof (notebook.display as Record<string, unknown>)[name]).toBe("function");
    }
  });

  test("every error extends TypelmError, ToonDecodeError extends OutputError", () => {
    const { TypelmError, ValidationError, ConfigurationError, LMError, OutputError, ToonDecodeError, MaxIterationsError } = typelm;
    for (const E of [ValidationError, ConfigurationError, LMError, OutputError, ToonDecodeError, MaxIterationsError]) {
      expect(E.prototype).toBeInstanceOf(TypelmError);
    }
    expect(ToonDecodeError.prototype).toBeInstanceOf(OutputError);
    expect(TypelmError.prototype).toBeInstanceOf(Error);
  });

  const script = `
    const a = await import("typelm"); const b = await import("typelm/testing"); const c = await import("typelm/notebook");
    console.log(JSON.stringify([typeof a.Predict, typeof a.loadDataset, typeof b.ScriptedLM, typeof c.display.metrics]));`;
  const expected = JSON.stringify(["function", "function", "function", "function"]);

  test("Node resolves the package by its own name from inside the repository (self-reference)", () => {
    // Importing prints nothing: the library never writes to stdout or stderr by itself.
    const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    expect(out.stderr).toBe("");
    expect(out.stdout).toBe(`${expected}\n`);
  });

  test("another package importing typelm by name (node_modules/typelm → the repository)", () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-consumer-"));
    try {
      mkdirSync(join(dir, "node_modules"));
      symlinkSync(root, join(dir, "node_modules", "typelm"), "dir");
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", type: "module" }));
      writeFileSync(join(dir, "main.mjs"), script);
      const out = execFileSync(process.execPath, ["main.mjs"], { cwd: dir, encoding: "utf8" });
      expect(out.trim().split("\n").pop()).toBe(expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
