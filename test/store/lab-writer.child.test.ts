import { describe, expect, it } from "@jest/globals";
import { renameSync, writeFileSync } from "node:fs";
import { LabStore } from "../../lib/store/lab-store.js";

// Started by lab-store.test.ts in a child process: records a run, says so, then waits to be killed.
const path = process.env.TYPELM_CHILD_LAB;
const ready = process.env.TYPELM_CHILD_READY;
const run = path !== undefined && ready !== undefined ? describe : describe.skip;

run("child writer (only in the child process lab-store.test.ts starts)", () => {
  it("records three trials of a run, then waits", async () => {
    const lab = LabStore.open(path!);
    const runId = lab.startRun({ kind: "optimization", name: "child", config: { seed: 1 } });
    for (let index = 0; index < 3; index++) {
      lab.recordTrial(runId, {
        index, kind: "minibatch", parents: [], choices: {}, instructions: { self: `child trial ${index}` }, demoIds: {},
        score: index / 3, exampleScores: null, budgetSpent: index, lmCalls: 1, inputTokens: 1, outputTokens: 1,
        cost: 0, durationMs: 1, error: null, data: {}, reused: 0,
      });
    }
    expect(lab.trials(runId)).toHaveLength(3);
    // Written beside it, then renamed: the parent polls for the file and must never read it half-written
    // (on a loaded machine it once read an empty file: "Unexpected end of JSON input").
    writeFileSync(`${ready!}.tmp`, JSON.stringify({ runId }));
    renameSync(`${ready!}.tmp`, ready!);
    await new Promise((r) => setTimeout(r, 60000));
  }, 70000);
});
