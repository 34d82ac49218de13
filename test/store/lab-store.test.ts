import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, resetConfiguration } from "../../lib/config.js";
import { ConfigurationError } from "../../lib/errors.js";
import { closeStoreSync, openStore, openStoreSync } from "../../lib/store/db.js";
import { LabStore, labFromConfig } from "../../lib/store/lab-store.js";
import type { EvaluationRow } from "../../lib/store/records.js";
import { holdWriteLock } from "./lock-holder.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-lab-"));
const paths: string[] = [];
function file(name: string): string {
  const path = join(dir, name);
  paths.push(path);
  return path;
}
afterEach(() => resetConfiguration());
afterAll(() => {
  for (const path of paths) closeStoreSync(path);
  rmSync(dir, { recursive: true, force: true });
});

function row(index: number, overrides: Partial<EvaluationRow> = {}): EvaluationRow {
  return {
    index, exampleId: `test-${index}`, inputs: { sentence: `s${index}` }, expected: { label: "positive" },
    prediction: { label: index % 2 === 0 ? "positive" : "negative" }, scores: { accuracy: index % 2 === 0 ? 1 : 0 },
    error: null, durationMs: 12.5, inputTokens: 10 + index, outputTokens: 2, cost: 0.001, ...overrides,
  };
}

const require = createRequire(import.meta.url);
const BetterSqlite3 = require("better-sqlite3") as typeof import("better-sqlite3");

describe("LabStore.open", () => {
  it("opens synchronously at the configured path and shares the connection with the LM cache's openStore", async () => {
    const path = file("configured.sqlite");
    configure((c) => { c.lab = { path }; });
    const lab = LabStore.open();
    expect(lab.path).toBe(path);
    expect(openStoreSync(path)).toBe(await openStore(path));
    const id = lab.startRun({ kind: "evaluation", name: "shared", config: {} });
    // The LM cache's connection sees the lab tables (one migration list) and the run.
    const db = await openStore(path);
    expect(db.prepare("SELECT name FROM lab_runs WHERE id = ?").get(id)).toEqual({ name: "shared" });
    expect(db.prepare("SELECT count(*) AS n FROM lm_cache").get()).toEqual({ n: 0 });
    // Closing the shared connection closes it for the LabStore too: it is the same one.
    closeStoreSync(path);
    expect(() => lab.runs()).toThrow(ConfigurationError);
    expect(LabStore.open(path).run(id)?.name).toBe("shared");
  });

  it("labFromConfig is null when recording is off, else the configured store", () => {
    configure((c) => { c.lab = false; });
    expect(labFromConfig()).toBeNull();
    const path = file("from-config.sqlite");
    configure((c) => { c.lab = { path }; });
    expect(labFromConfig()?.path).toBe(path);
  });

  it("defaults to .typelm/lab.sqlite under the working directory", () => {
    const lab = LabStore.open();
    expect(lab.path).toBe(join(process.cwd(), ".typelm/lab.sqlite"));
    paths.push(lab.path);
  });
});

describe("bad input", () => {
  it("a closed store raises a ConfigurationError naming the file and how to reopen it", () => {
    const path = file("closed.sqlite");
    const lab = LabStore.open(path);
    lab.close();
    for (const call of [() => lab.runs(), () => lab.startRun({ kind: "evaluation", name: "x" }), () => lab.run("x")]) {
      expect(call).toThrow(ConfigurationError);
      expect(call).toThrow(`The lab store at ${path} is closed: open it again with LabStore.open(`);
    }
    // Other handles on the same file keep working.
    expect(LabStore.open(path).runs()).toEqual([]);
  });

  it("a path whose folder cannot be created raises a ConfigurationError naming the file", () => {
    const blocker = file("plain");
    require("node:fs").writeFileSync(blocker, "not a folder");
    expect(() => LabStore.open(join(blocker, "lab.sqlite"))).toThrow(ConfigurationError);
    expect(() => LabStore.open(join(blocker, "lab.sqlite"))).toThrow(join(blocker, "lab.sqlite"));
  });

  it("a file that is not a database raises a ConfigurationError saying so", () => {
    const path = file("text.sqlite");
    require("node:fs").writeFileSync(path, "x".repeat(4096));
    expect(() => LabStore.open(path)).toThrow(/Cannot open the SQLite store at .*text\.sqlite.*not a SQLite database/s);
  });

  it("a file locked by another process past busy_timeout raises a ConfigurationError saying to wait or move", async () => {
    const path = file("locked.sqlite");
    const lab = LabStore.open(path);
    const holder = await holdWriteLock(path);
    try {
      const started = Date.now();
      let caught: unknown;
      try {
        lab.startRun({ kind: "evaluation", name: "blocked" });
      } catch (error) {
        caught = error;
      }
      expect(Date.now() - started).toBeGreaterThanOrEqual(4500); // it waited busy_timeout first
      expect(caught).toBeInstanceOf(ConfigurationError);
      expect((caught as Error).message).toContain(path);
      expect((caught as Error).message).toMatch(/SQLITE_BUSY.*Another process held a lock/s);
    } finally {
      await holder.release();
    }
    expect(lab.startRun({ kind: "evaluation", name: "after" })).toEqual(expect.any(String));
  }, 20000);
});

// Root ignores file modes, so the attempt runs in a child jest as an unprivileged user when we are
// root. That user must be able to read this checkout (not so in a clone under a 0700 folder).
const asRoot = process.getuid?.() === 0;
const unprivilegedCanRun = !asRoot || spawnSync(process.execPath, ["-e", `require("fs").accessSync(${JSON.stringify(join(process.cwd(), "node_modules/jest/bin/jest.js"))})`], { uid: 65534, gid: 65534 }).status === 0;
const itUnprivileged = unprivilegedCanRun ? it : it.skip;

describe("read-only places", () => {
  function openAsUser(target: string): string {
    const root = process.cwd();
    const cache = join(dir, "jest-cache");
    mkdirSync(cache, { recursive: true });
    chmodSync(cache, 0o777);
    const run = spawnSync(process.execPath, [
      join(root, "node_modules/jest/bin/jest.js"), "--ci", "--runInBand", "--cacheDirectory", cache,
      "--runTestsByPath", "test/store/lab-readonly.child.test.ts",
    ], {
      cwd: root, encoding: "utf8", ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
      env: { ...process.env, HOME: dir, NODE_OPTIONS: "--experimental-vm-modules", TYPELM_CHILD_READONLY: target },
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: expect.stringContaining("1 passed") });
    return /CHILD-ERROR (.*)/.exec(run.stdout)?.[1] ?? "";
  }

  function sqliteFile(path: string): void {
    const db = new BetterSqlite3(path);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (a)");
    db.close();
    chmodSync(path, 0o444);
  }

  itUnprivileged("a read-only folder, a read-only file and both raise a ConfigurationError naming the file and what to do", () => {
    chmodSync(dir, 0o755);
    const roDir = join(dir, "ro-dir");
    mkdirSync(roDir, { mode: 0o555 });
    chmodSync(roDir, 0o555);
    const rwDir = join(dir, "rw-dir");
    mkdirSync(rwDir);
    chmodSync(rwDir, 0o777);
    sqliteFile(join(rwDir, "ro.sqlite"));
    const both = join(dir, "ro-both");
    mkdirSync(both);
    sqliteFile(join(both, "ro.sqlite"));
    chmodSync(both, 0o555);

    expect(openAsUser(join(roDir, "lab.sqlite"))).toMatch(new RegExp(`^Cannot open the SQLite store at ${join(roDir, "lab.sqlite")}: .*SQLITE_CANTOPEN.*folder`));
    expect(openAsUser(join(rwDir, "ro.sqlite"))).toMatch(new RegExp(`^Cannot (open|record a run in) the SQLite store at ${join(rwDir, "ro.sqlite")}: .*SQLITE_READONLY.*make both writable`));
    expect(openAsUser(join(both, "ro.sqlite"))).toMatch(new RegExp(`^Cannot open the SQLite store at ${join(both, "ro.sqlite")}: .*SQLITE_READONLY.*make both writable`));
  }, 60000);
});

describe("another connection reads what is recorded, as it is recorded", () => {
  it("a second connection sees each example as soon as recordExample returns", () => {
    const path = file("reader.sqlite");
    const lab = LabStore.open(path);
    const reader = new BetterSqlite3(path, { readonly: true });
    try {
      const id = lab.startRun({ kind: "evaluation", name: "live" });
      const count = reader.prepare("SELECT count(*) AS n FROM lab_rows WHERE run_id = ?");
      for (let i = 0; i < 3; i++) {
        lab.recordExample(id, row(i));
        expect(count.get(id)).toEqual({ n: i + 1 });
      }
    } finally {
      reader.close();
    }
  });

  it("a run written by a child process that is then killed (SIGKILL) keeps every row written before the kill", async () => {
    const path = file("child.sqlite");
    const ready = join(dir, "child-ready.json");
    const root = process.cwd();
    const child = spawn(process.execPath, [
      join(root, "node_modules/jest/bin/jest.js"), "--ci", "--runInBand", "--runTestsByPath", "test/store/lab-writer.child.test.ts",
    ], {
      cwd: root, stdio: "pipe",
      env: { ...process.env, NODE_OPTIONS: "--experimental-vm-modules", TYPELM_CHILD_LAB: path, TYPELM_CHILD_READY: ready },
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => { output += d.toString(); });
    child.stderr.on("data", (d: Buffer) => { output += d.toString(); });
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    try {
      const deadline = Date.now() + 40000;
      while (!existsSync(ready)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`child never got ready:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const { runId } = JSON.parse(readFileSync(ready, "utf8")) as { runId: string };
      // Read through this process's own LabStore while the child is still holding the run open.
      const lab = LabStore.open(path);
      const live = lab.run(runId);
      expect(live).toMatchObject({ kind: "optimization", status: "running", name: "child" });
      expect(live?.kind === "optimization" ? live.trials.map((t) => t.index) : []).toEqual([0, 1, 2]);
      child.kill("SIGKILL");
      await exited;
      const after = lab.run(runId);
      expect(after?.kind === "optimization" ? after.trials.map((t) => t.instructions) : []).toEqual([
        { self: "child trial 0" }, { self: "child trial 1" }, { self: "child trial 2" },
      ]);
      expect(after?.status).toBe("running"); // nobody finished it: a crashed run stays visible as such
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 60000);
});
