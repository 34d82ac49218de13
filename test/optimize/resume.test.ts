import { describe, it, expect, afterEach } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { configure, resetConfiguration } from "../../lib/config.js";
import { LabStore } from "../../lib/index.js";
import type { OptimizationRun, Trial } from "../../lib/index.js";
import { runOptimization } from "./resume-setup.js";

const root = process.cwd();
const jestBin = path.join(root, "node_modules", "jest", "bin", "jest.js");
const dirs: string[] = [];

afterEach(() => {
  resetConfiguration();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempLab(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "typelm-resume-"));
  dirs.push(dir);
  return path.join(dir, "lab.sqlite");
}

/** A trial without what legitimately differs between two runs of the same trial (wall time). */
function same(t: Trial): Omit<Trial, "durationMs"> {
  const { durationMs: _d, ...rest } = t;
  return rest;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("MIPROv2 resume after SIGKILL", () => {
  it("keeps every trial finished before the kill and, resumed, ends exactly like an uninterrupted run", async () => {
    // The reference: the same optimization, never interrupted.
    configure((c) => { c.lab = { path: tempLab() }; });
    const reference = await runOptimization();
    const refTrials = reference.run.trials;

    // The same optimization in a child process, killed midway.
    const labPath = tempLab();
    const child = spawn(process.execPath, [jestBin, "--ci", "--runInBand", "--testMatch", "**/test/optimize/mipro-child.ts", "--", "test/optimize/mipro-child.ts"], {
      cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "--experimental-vm-modules", TYPELM_CHILD_LAB: labPath, TYPELM_CHILD_LATENCY: "25" },
    });
    let output = "";
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
    let runId: string | undefined;
    let seen = 0;
    const deadline = Date.now() + 60000;
    while (Date.now() < deadline && child.exitCode === null) {
      await sleep(15);
      let lab: LabStore;
      try {
        lab = LabStore.open(labPath);
      } catch {
        continue; // the child has not created the file yet
      }
      runId ??= lab.runs({ kind: "optimization" })[0]?.id;
      if (runId !== undefined) seen = lab.trials(runId).length;
      if (seen >= 6) break; // bootstrap, propose, baseline and three search trials are on disk
    }
    // Killed here whatever the check below says, so a failing test leaves no child behind.
    const alive = child.exitCode === null;
    if (alive) process.kill(-child.pid!, "SIGKILL");
    expect({ seen, alive, output: seen >= 6 ? "" : output }).toMatchObject({ alive: true, output: "" });
    expect(await exited).toBe("SIGKILL");

    // Everything finished before the kill is in the file, readable, and equal to the reference's trials.
    const killed = LabStore.open(labPath).run(runId!) as OptimizationRun;
    expect(killed.status).toBe("running");
    const n = killed.trials.length;
    expect(n).toBeGreaterThanOrEqual(6);
    expect(n).toBeLessThan(refTrials.length);
    expect(killed.trials.map(same)).toEqual(refTrials.slice(0, n).map(same));
    expect(killed.trials.map((t) => t.index)).toEqual([...Array(n).keys()]);

    // Resume in this process from the file.
    configure((c) => { c.lab = { path: labPath }; });
    const resumed = await runOptimization({ resume: runId });
    expect(resumed.run.id).toBe(runId);
    expect(resumed.tuned.instruction).toBe(reference.tuned.instruction);
    expect(resumed.tuned.demos.map((d) => d.id)).toEqual(reference.tuned.demos.map((d) => d.id));
    expect(resumed.run.trials.map(same)).toEqual(refTrials.map(same));
    expect({ score: resumed.run.score, bestTrial: resumed.run.bestTrial, status: resumed.run.status }).toEqual({
      score: reference.run.score, bestTrial: reference.run.bestTrial, status: "completed",
    });
    // The recorded trials were replayed, not run again: same wall times, and only the rest cost calls.
    expect(resumed.run.trials.slice(0, n).map((t) => t.durationMs)).toEqual(killed.trials.map((t) => t.durationMs));
    const replayedCalls = killed.trials.reduce((s, t) => s + t.lmCalls, 0);
    expect(resumed.taskCalls + resumed.promptCalls).toBe(reference.taskCalls + reference.promptCalls - replayedCalls);
    const stored = LabStore.open(labPath).run(runId!) as OptimizationRun;
    expect(stored.status).toBe("completed");
    expect(stored.trials.map(same)).toEqual(refTrials.map(same));
  }, 120000);

  it("refuses to resume with different options, naming what differs", async () => {
    configure((c) => { c.lab = { path: tempLab() }; });
    const { run } = await runOptimization();
    const { MIPROv2, Predict } = await import("../../lib/index.js");
    const { Topic, taskModel } = await import("./task.js");
    const { train, val } = await import("./resume-setup.js");
    const other = new MIPROv2({ kDemos: 3, mode: "light", seed: 12, concurrency: 4, promptModel: taskModel() });
    await expect(other.compile({ moduleInstance: new Predict(Topic).configure((c) => { c.lm = taskModel(); }), trainingExamples: train, validationExamples: val, resume: run.id }))
      .rejects.toThrow(/resuming it needs the same optimizer and options/);
    await expect(other.compile({ moduleInstance: new Predict(Topic), trainingExamples: train, validationExamples: val, resume: "no-such-run" }))
      .rejects.toThrow(/resume run "no-such-run" is not in the lab store/);
  });
});
