// Production traces on PostgreSQL (a real server started by the test setup) and flushing on exit
// (a child process on the built package, `npm run build` first), on both engines.
import { afterAll, beforeAll, describe, expect, it, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { configure, resetConfiguration } from "../../lib/config.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { closePostgresPools } from "../../lib/store/pg.js";
import { flushTraces, recordFeedback } from "../../lib/trace-call.js";
import { feedbackFor } from "../../lib/traces/feedback.js";
import { pruneTraces } from "../../lib/traces/prune.js";
import { labSink } from "../../lib/traces/lab-sink.js";
import { POSTGRES_INSTALL_HINT, postgresInstalled, queryRows, startPostgresServer, type PostgresTestServer } from "../helpers/postgres.js";
import { Shouter, shoutingLM } from "./helpers.js";

const run = promisify(execFile);
const CHILD = join(dirname(fileURLToPath(import.meta.url)), "exit-child.mjs");

async function childRecords(lab: string, count: number): Promise<string[]> {
  const { stdout } = await run(process.execPath, [CHILD, lab, String(count)], { timeout: 60_000 });
  return JSON.parse(stdout.trim()) as string[];
}

describe("flush on exit (SQLite)", () => {
  it("a process that ends without flushing still writes every trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-traces-exit-"));
    try {
      const path = join(dir, "lab.sqlite");
      const ids = await childRecords(path, 25);
      const lab = LabStore.open(path);
      const [runInfo] = lab.runs({ kind: "traces" });
      expect(lab.rows(runInfo!.id).map((r) => r.exampleId)).toEqual(ids);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

const installed = postgresInstalled();
if (!installed && process.env.CI === "true") {
  test("the PostgreSQL server binaries are installed (CI installs them)", () => {
    throw new Error(`PostgreSQL is not installed. Install it with: ${POSTGRES_INSTALL_HINT}`);
  });
}
const suite = installed ? describe : describe.skip;

suite("traces on PostgreSQL", () => {
  let server: PostgresTestServer;
  beforeAll(async () => { server = await startPostgresServer(); }, 60_000);
  afterAll(async () => {
    resetConfiguration();
    await closePostgresPools();
    await server?.stop();
  });

  it("records sampled calls, their model calls and feedback, and prunes them", async () => {
    const url = server.createDatabase("traces_1");
    configure((c) => { c.lab = { url }; c.traces = { sample: 1 }; });
    const program = new Shouter().configure((c) => { c.lm = shoutingLM(); });
    const ids: string[] = [];
    for (const word of ["a", "b", "c"]) ids.push((await program.call({ word }) as { traceId?: string }).traceId!);
    await recordFeedback(ids[0]!, { score: 0, comment: "no" });
    await flushTraces();
    const lab = LabStore.open({ url });
    const [runInfo] = await lab.runs({ kind: "traces" });
    expect(runInfo!.config).toEqual({ module: "Shouter", day: new Date().toISOString().slice(0, 10) });
    const rows = await lab.rows(runInfo!.id);
    expect(rows.map((r) => [r.exampleId, r.prediction])).toEqual([[ids[0], { loud: "A" }], [ids[1], { loud: "B" }], [ids[2], { loud: "C" }]]);
    expect((await lab.calls(runInfo!.id, rows[0]!.index)).length).toBe(2);
    expect((await feedbackFor(lab, ids)).get(ids[0]!)!.map((f) => [f.score, f.comment])).toEqual([[0, "no"]]);
    // An old day's traces go, with their feedback; today's stay.
    const old = Date.now() - 40 * 86_400_000;
    await labSink().write([{ traceId: "old-1", module: "Shouter", at: old, inputs: { word: "x" }, outputs: { loud: "X" }, error: null, durationMs: 1, calls: [], inputTokens: 0, outputTokens: 0, cost: 0 }]);
    await recordFeedback("old-1", { score: 1 });
    expect(await pruneTraces(lab, Date.now() - 30 * 86_400_000)).toEqual({ runs: 1, traces: 1 });
    expect(await queryRows(url, "SELECT trace_id FROM lab_feedback ORDER BY trace_id")).toEqual([{ trace_id: ids[0] }]);
    expect((await lab.runs({ kind: "traces" })).length).toBe(1);
    await lab.close();
  }, 60_000);

  it("a process that ends without flushing still writes every trace (PostgreSQL)", async () => {
    const url = server.createDatabase("traces_2");
    const ids = await childRecords(url, 25);
    const lab = LabStore.open({ url });
    const [runInfo] = await lab.runs({ kind: "traces" });
    expect((await lab.rows(runInfo!.id)).map((r) => r.exampleId)).toEqual(ids);
    await lab.close();
  }, 60_000);
});
