// `typelm run <file> --watch` (built CLI): it runs again when the experiment file, a file it imports
// (also one imported only after an edit) or its dataset changes, prints each evaluation against the
// previous good run, keeps watching after a run that fails, and stops on SIGINT with no run left
// `running`. The program is a module that calls no model (its answers come from the helper files the
// test edits), so every expected figure below is counted by hand from the words.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStore } from "../../lib/index.js";
import { BIN, offline } from "../helpers/cli.js";

const root = process.cwd();
const dir = realpathSync(mkdtempSync(join(tmpdir(), "typelm-watch-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Eight words of three letters and two of two: a helper that shouts only words longer than two letters gets 8 of 10.
const WORDS = ["ant", "bee", "yak", "dog", "eel", "fox", "gnu", "hen", "ox", "ai"];

function experiment(options: { mark?: string; markImport?: boolean } = {}): string {
  return `import { z } from "zod";
import { defineExperiment, Module, Predict, Signature } from "typelm";
import { shout } from "../lib/shout.mjs";
${options.markImport === true ? `import { MARK } from "../lib/mark.mjs";` : `const MARK = ${JSON.stringify(options.mark ?? "")};`}

const Upper = Signature.define({ name: "Upper", description: "Shout the word.", input: { word: z.string() }, output: { loud: z.string() } });
class Shout extends Module {
  predict = new Predict(Upper);
  async forward({ word }) { return { loud: (await shout(word)) + MARK }; }
}
export default defineExperiment({ name: "shout", dataset: "../data/words", signature: Upper, program: new Shout(), optimizer: "none" });
`;
}

/** A file saved as many editors save: written beside it, then renamed over it (a new inode). */
function saveByRename(path: string, text: string): void {
  writeFileSync(`${path}.tmp-save`, text);
  renameSync(`${path}.tmp-save`, path);
}

function testSplit(expected: (word: string) => string): string {
  return WORDS.map((w, i) => JSON.stringify({ id: `w${i}`, word: w, loud: expected(w) })).join("\n") + "\n";
}

const project = join(dir, "p");
mkdirSync(join(project, "node_modules"), { recursive: true });
symlinkSync(root, join(project, "node_modules", "typelm"), "dir");
symlinkSync(join(root, "node_modules", "zod"), join(project, "node_modules", "zod"), "dir");
for (const sub of ["experiments", "lib", "data/words"]) mkdirSync(join(project, sub), { recursive: true });
writeFileSync(join(project, "lib", "shout.mjs"), "export function shout(word) { return word.length > 2 ? word.toUpperCase() : word; }\n");
writeFileSync(join(project, "experiments", "shout.mjs"), experiment());
const other = (from: number) => WORDS.map((w, i) => JSON.stringify({ id: `x${from + i}`, word: w, loud: w.toUpperCase() })).join("\n") + "\n";
writeFileSync(join(project, "data/words/train.jsonl"), other(100));
writeFileSync(join(project, "data/words/dev.jsonl"), other(200));
writeFileSync(join(project, "data/words/test.jsonl"), testSplit((w) => w.toUpperCase()));

/** The watching command, its output so far, and a wait for a pattern to appear in it a given number of times. */
let proc: ChildProcess;
let stdout = "";
let stderr = "";
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

/** Resolves once `pattern` (global) has matched `count` times in `which` output; rejects if the command exits or 150 s pass. */
function seen(which: "stdout" | "stderr", pattern: RegExp, count: number): Promise<void> {
  const text = () => (which === "stdout" ? stdout : stderr);
  return new Promise((done, fail) => {
    const check = () => {
      if ((text().match(pattern) ?? []).length < count) return false;
      cleanup();
      done();
      return true;
    };
    const timer = setTimeout(() => { cleanup(); fail(new Error(`no ${count}× ${pattern} in ${which} within 150 s\n--- stdout\n${stdout}\n--- stderr\n${stderr}`)); }, 150_000);
    const onExit = () => { if (!check()) { cleanup(); fail(new Error(`the command exited before ${count}× ${pattern}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`)); } };
    const cleanup = () => { clearTimeout(timer); proc.stdout!.off("data", check); proc.stderr!.off("data", check); proc.off("exit", onExit); };
    proc.stdout!.on("data", check);
    proc.stderr!.on("data", check);
    proc.on("exit", onExit);
    check();
  });
}

const WATCHING = /typelm run --watch: watching \d+ files/g;
const LIVE = /shout baseline: run [0-9a-f-]{36}; typelm view shows it live/g;
/** A helper whose program waits ten minutes on "hen": a run of it is still going when the test acts. */
const HANGS = "export async function shout(word) { if (word === \"hen\") await new Promise((r) => setTimeout(r, 600000)); return word.toUpperCase(); }\n";
const RERUN = /^Run \d+ against the previous good run:$/gm;

/** The block printed for run `n` (from its header to the blank line after it). */
function block(n: number): string {
  const start = stdout.indexOf(`Run ${n} against the previous good run:`);
  return start < 0 ? "" : stdout.slice(start, stdout.indexOf("\n\n", start));
}

/** The run ids the command announced, in order (each evaluation's "run <id>; typelm view shows it live" line). */
function announced(): string[] {
  return [...stderr.matchAll(/shout baseline: run ([0-9a-f-]{36}); typelm view shows it live at \/runs\/([0-9a-f]{8})/g)].map((m) => {
    expect(m[1]!.slice(0, 8)).toBe(m[2]);
    return m[1]!;
  });
}

describe("typelm run --watch", () => {
  beforeAll(() => {
    proc = spawn(process.execPath, [BIN, "run", "experiments/shout.mjs", "--lm", "simulated/stand-in", "--watch"], { cwd: project, env: offline, stdio: ["ignore", "pipe", "pipe"], detached: true });
    proc.stdout!.on("data", (d: Buffer) => { stdout += d.toString(); });
    proc.stderr!.on("data", (d: Buffer) => { stderr += d.toString(); });
    exited = new Promise((done) => proc.once("exit", (code, signal) => done({ code, signal })));
  });
  // After a failure: the command and the run it started (its own process group), so nothing is left running.
  afterAll(() => {
    try {
      process.kill(-proc.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  });

  it("runs once, then watches the experiment, the helper it imports and the three data files", async () => {
    await seen("stderr", WATCHING, 1);
    expect(stderr).toContain("baseline: accuracy 0.800");
    expect(stderr).toMatch(/watching 5 files \(the experiment, its imports and its data\); Ctrl-C stops/);
    expect(stdout).not.toMatch(RERUN);
    expect(announced()).toHaveLength(1);
  }, 180_000);

  it("an edited helper file (imported by the experiment): runs again and prints the difference, paired", async () => {
    writeFileSync(join(project, "lib", "shout.mjs"), "export function shout(word) { return word.toUpperCase(); }\n");
    await seen("stdout", RERUN, 1);
    await seen("stderr", WATCHING, 2);
    const ids = announced();
    expect(stderr).toContain("lib/shout.mjs changed; running again (run 2)");
    // 8/10 → 10/10: the two short words now right, nothing else changed. Exact McNemar on 2 discordant pairs, both one way: p = 2 · (1/2)² = 0.5.
    expect(block(2)).toMatch(new RegExp(`^Run 2 against the previous good run:\nshout baseline: run ${ids[1]!.slice(0, 8)} against ${ids[0]!.slice(0, 8)}, 10 examples paired by id\n`));
    expect(block(2)).toMatch(/\n {2}accuracy {2}0\.800 {3}1\.000 {2}\+0\.200 .* 0\.5 +mcnemar-exact {2}not significant\n/);
    expect(block(2)).toContain("2 of 10 predictions changed; on accuracy 2 better, 0 worse");
  }, 180_000);

  it("an edited dataset file: the same predictions scored against the new expected answer", async () => {
    writeFileSync(join(project, "data/words/test.jsonl"), testSplit((w) => (w === "ant" ? "ANTZ" : w.toUpperCase())));
    await seen("stdout", RERUN, 2);
    await seen("stderr", WATCHING, 3);
    expect(stderr).toContain("data/words/test.jsonl changed; running again (run 3)");
    expect(block(3)).toMatch(/\n {2}accuracy {2}1\.000 {3}0\.900 {2}-0\.100 .* 1 +mcnemar-exact {2}not significant\n/);
    expect(block(3)).toContain("0 of 10 predictions changed; on accuracy 0 better, 1 worse");
  }, 180_000);

  it("the experiment file saved by renaming a new file over it: seen, and the run compared", async () => {
    saveByRename(join(project, "experiments", "shout.mjs"), experiment({ mark: "!" }));
    await seen("stdout", RERUN, 3);
    await seen("stderr", WATCHING, 4);
    expect(stderr).toContain("experiments/shout.mjs changed; running again (run 4)");
    // Every answer now wrong: 9 of the 9 right ones worse. p = 2 · (1/2)⁹ = 0.0039.
    expect(block(4)).toMatch(/\n {2}accuracy {2}0\.900 {3}0\.000 {2}-0\.900 .* 0\.0039 +mcnemar-exact {2}significant\n/);
    expect(block(4)).toContain("10 of 10 predictions changed; on accuracy 0 better, 9 worse");
  }, 180_000);

  it("an edit that breaks the helper: the error is printed and it keeps watching; the next good run is compared with the last good one", async () => {
    const good = announced()[3]!;
    writeFileSync(join(project, "lib", "shout.mjs"), "export function shout(word) { return word.toUpperCase(; }\n");
    await seen("stderr", /the run failed \(exit code 1\); the previous good run stays the one compared with/g, 1);
    await seen("stderr", WATCHING, 5);
    expect(stderr).toMatch(/typelm run: Cannot load the experiment file .*shout\.mjs: .*SyntaxError|typelm run: Cannot load the experiment file .*syntax error/);
    expect(stdout).not.toContain("Run 5 against");
    writeFileSync(join(project, "lib", "shout.mjs"), "export function shout(word) { return word.toUpperCase(); }\n");
    await seen("stdout", RERUN, 4);
    await seen("stderr", WATCHING, 6);
    const ids = announced();
    // Run 5 recorded no evaluation (it failed while loading): run 6's evaluation is compared with run 4's.
    expect(ids).toHaveLength(5);
    expect(block(6)).toContain(`shout baseline: run ${ids[4]!.slice(0, 8)} against ${good.slice(0, 8)}, 10 examples paired by id`);
    expect(block(6)).toContain("0 of 10 predictions changed; on accuracy 0 better, 0 worse");
  }, 180_000);

  it("a file imported only after an edit is watched from the next run on", async () => {
    writeFileSync(join(project, "lib", "mark.mjs"), `export const MARK = "";\n`);
    saveByRename(join(project, "experiments", "shout.mjs"), experiment({ markImport: true }));
    await seen("stdout", RERUN, 5);
    await seen("stderr", WATCHING, 7);
    expect(stderr).toMatch(/watching 6 files/);
    expect(block(7)).toMatch(/\n {2}accuracy {2}0\.000 {3}0\.900 {2}\+0\.900 /);
    writeFileSync(join(project, "lib", "mark.mjs"), `export const MARK = "?";\n`);
    await seen("stdout", RERUN, 6);
    await seen("stderr", WATCHING, 8);
    expect(stderr).toContain("lib/mark.mjs changed; running again (run 8)");
    expect(block(8)).toMatch(/\n {2}accuracy {2}0\.900 {3}0\.000 {2}-0\.900 /);
  }, 180_000);

  it("a change while a run is going: that run is stopped and marked failed, and the next one is compared with the last good run", async () => {
    writeFileSync(join(project, "lib", "shout.mjs"), HANGS);
    await seen("stderr", LIVE, 8);
    const stale = announced()[7]!;
    writeFileSync(join(project, "lib", "shout.mjs"), "export function shout(word) { return word.toUpperCase(); }\n");
    await seen("stdout", RERUN, 7);
    await seen("stderr", WATCHING, 9);
    expect(stderr).toContain(`shout baseline: run ${stale.slice(0, 8)} did not finish (a watched file changed and typelm run --watch started again); marked failed`);
    expect(stderr).toContain("lib/shout.mjs changed; running again (run 10)");
    const ids = announced();
    expect(block(10)).toContain(`shout baseline: run ${ids[8]!.slice(0, 8)} against ${ids[6]!.slice(0, 8)}, 10 examples paired by id`);
    const store = LabStore.open(join(project, ".typelm", "lab.sqlite"));
    try {
      const run = store.runs({ kind: "evaluation" }).find((r) => r.id === stale)!;
      expect([run.status, run.error]).toEqual(["failed", "interrupted: a watched file changed and typelm run --watch started again"]);
    } finally {
      store.close();
    }
  }, 180_000);

  it("SIGINT while a run is going: it stops, exits 0, and leaves no run running in the lab store", async () => {
    writeFileSync(join(project, "lib", "shout.mjs"), HANGS);
    await seen("stderr", LIVE, 10);
    const inFlight = announced()[9]!;
    const store = LabStore.open(join(project, ".typelm", "lab.sqlite"));
    try {
      // It is recorded as running before the signal (so the check after it means something).
      expect(store.runs({ kind: "evaluation" }).find((r) => r.id === inFlight)?.status).toBe("running");
      proc.kill("SIGINT");
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(stderr).toContain(`shout baseline: run ${inFlight.slice(0, 8)} did not finish (typelm run --watch was stopped); marked failed`);
      expect(stderr).toMatch(/typelm run --watch: stopped\n$/);
      const runs = store.runs({ kind: "evaluation" });
      expect(runs).toHaveLength(10);
      expect(runs.filter((r) => r.status === "running")).toEqual([]);
      const last = runs.find((r) => r.id === inFlight)!;
      expect([last.status, last.error]).toEqual(["failed", "interrupted: typelm run --watch was stopped"]);
    } finally {
      store.close();
    }
  }, 180_000);
});
