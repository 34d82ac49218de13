// The trace commands on the SQLite lab: export → loadDataset, --reviewed with the annotations table,
// prune, rescore traces:<module>, and compare between two windows (paired and unpaired).
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, resetConfiguration } from "../../lib/config.js";
import { runCli } from "../../lib/lab/cli/index.js";
import { loadDataset } from "../../lib/lab/entry.js";
import { openStoreSync } from "../../lib/store/db.js";
import { LabStore } from "../../lib/store/lab-store.js";
import { flushTraces, recordFeedback, type TraceRecord } from "../../lib/trace-call.js";
import { labSink } from "../../lib/traces/lab-sink.js";

const DAY = 86_400_000;
let dir: string;
let lab: string;

async function cli(...argv: string[]) {
  let out = "", err = "";
  const code = await runCli([...argv, "--store", lab], { stdout: (t) => { out += t; }, stderr: (t) => { err += t; }, cwd: dir });
  return { code, out, err };
}

function trace(word: string, loud: string, at: number, n: number): TraceRecord {
  return {
    traceId: `${word}-${n}-${at}`.replace(/[^a-z0-9-]/gi, ""), module: "Shouter", at, inputs: { word }, outputs: { loud }, error: null,
    durationMs: 5, calls: [], inputTokens: 3, outputTokens: 2, cost: 0,
  };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "typelm-traces-cli-"));
  lab = join(dir, "lab.sqlite");
  configure((c) => { c.lab = { path: lab }; });
  writeFileSync(join(dir, "shouted.mjs"), "export default function shouted(example, prediction) { return prediction.loud === String(example.input.word).toUpperCase() ? 1 : 0; }\n");
});
afterAll(async () => {
  await flushTraces();
  resetConfiguration();
  rmSync(dir, { recursive: true, force: true });
});

describe("typelm traces export", () => {
  it("writes a dataset loadDataset reads: every trace that did not fail, except thumbs-down ones", async () => {
    const now = Date.now();
    const records = ["a", "b", "c", "d", "e", "f"].map((w, i) => trace(w, w.toUpperCase(), now - 1000 * (10 - i), i));
    await labSink().write(records);
    await recordFeedback(records[1]!.traceId, { score: 0, comment: "wrong" });
    await recordFeedback(records[2]!.traceId, { score: 1 });
    const r = await cli("traces", "export", "--module", "Shouter", "--out", "data/shouter");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("5 examples");
    const data = await loadDataset(join(dir, "data/shouter"));
    const all = [...data.train, ...data.dev, ...data.test];
    expect(all.map((e) => e.id).sort()).toEqual(records.filter((_, i) => i !== 1).map((t) => t.traceId).sort());
    for (const e of all) expect(e.output).toEqual({ loud: String(e.input.word).toUpperCase() });
    expect(JSON.parse(readFileSync(join(dir, "data/shouter/signature.json"), "utf8"))).toMatchObject({ input: { word: { type: "string" } }, output: { loud: { type: "string" } } });
  });

  it("typelm runs --kind traces lists the traces run, and --kind evaluation does not", async () => {
    const id = LabStore.open(lab).runs({ kind: "traces" })[0]!.id;
    const traces = await cli("runs", "--kind", "traces");
    expect(traces.err).toBe("");
    expect(traces.code).toBe(0);
    expect(traces.out).toContain(id);
    const evaluations = await cli("runs", "--kind", "evaluation");
    expect(evaluations.code).toBe(0);
    expect(evaluations.out).not.toContain(id);
  });

  it("--reviewed exports only reviewed traces from the annotations table, corrected outputs first", async () => {
    const store = LabStore.open(lab);
    const run = store.runs({ kind: "traces" })[0]!;
    const rows = store.rows(run.id);
    const db = openStoreSync(lab);
    db.exec(`CREATE TABLE IF NOT EXISTS annotations (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, example_id TEXT NOT NULL,
      verdict TEXT NOT NULL, expected_json TEXT, note TEXT, reviewer TEXT NOT NULL, created_at TEXT NOT NULL)`);
    const add = db.prepare("INSERT INTO annotations (run_id, example_id, verdict, expected_json, note, reviewer, created_at) VALUES (?, ?, ?, ?, NULL, 'ann', '2026-01-01')");
    add.run(run.id, rows[0]!.exampleId, "pass", null);
    add.run(run.id, rows[1]!.exampleId, "fail", JSON.stringify({ loud: "BEE" }));
    add.run(run.id, rows[2]!.exampleId, "pass", null);
    add.run(run.id, rows[2]!.exampleId, "fail", null); // the latest review counts: left out
    const r = await cli("traces", "export", "--module", "Shouter", "--reviewed", "--out", "data/reviewed");
    expect(r.err).toBe("");
    expect(r.out).toContain("2 examples (1 corrected, 1 accepted as they were)");
    const lines = readFileSync(join(dir, "data/reviewed/data.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toEqual([{ id: rows[1]!.exampleId, word: "b", loud: "BEE" }, { id: rows[0]!.exampleId, word: "a", loud: "A" }]);
  });

  it("names the modules that have traces when the one asked for has none", async () => {
    const r = await cli("traces", "export", "--module", "Nope", "--out", "data/nope");
    expect(r.code).toBe(1);
    expect(r.err).toContain("modules with traces: Shouter");
  });
});

describe("windows: rescore and compare", () => {
  const words = ["w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11"];
  beforeAll(async () => {
    const now = Date.now();
    // 10-9 days ago: every answer right. 3-2 days ago: the same inputs, every answer wrong.
    await labSink().write(words.map((w, i) => trace(w, w.toUpperCase(), now - 10 * DAY + i * 1000, i)));
    await labSink().write(words.map((w, i) => trace(w, "wrong", now - 3 * DAY + i * 1000, i)));
    // 6-5 days ago: other inputs, every answer right.
    await labSink().write(words.map((w, i) => trace(`x${w}`, `X${w.toUpperCase()}`, now - 6 * DAY + i * 1000, i)));
  });

  it("rescore traces:<module> --since scores the window's traces as an evaluation run with intervals", async () => {
    const r = await cli("rescore", "traces:Shouter", "--since", "4d", "--metric", "shouted.mjs");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const store = LabStore.open(lab);
    const run = store.runs({ kind: "evaluation" })[0]!;
    expect(run.name).toMatch(/^traces:Shouter@/);
    // 3 days ago: 12 wrong answers; the 6 recent ones of the export test: right.
    const rows = store.rows(run.id);
    expect(rows.map((x) => x.scores["shouted"]).sort()).toEqual([...Array(12).fill(0), ...Array(6).fill(1)].sort());
    expect(r.out).toContain("shouted");
  });

  it("compare between two windows with the same inputs is paired and the gate fails on the drop", async () => {
    const r = await cli("compare", "traces:Shouter@11d..8d", "traces:Shouter@4d..2d", "--metric", "shouted.mjs");
    expect(r.err).toBe("");
    expect(r.out).toContain("paired: 12 inputs recur in both windows");
    expect(r.out).toContain("difference -1.000");
    expect(r.out).toContain("gate: failed");
    expect(r.code).toBe(1);
  });

  it("windows' bounds may be fractional durations (@264.5h..216.25h; a notebook uses windows of seconds)", async () => {
    const r = await cli("compare", "traces:Shouter@264.5h..216.25h", "traces:Shouter@96.5h..48.25h", "--metric", "shouted.mjs");
    expect(r.err).toBe("");
    expect(r.out).toContain("paired: 12 inputs recur in both windows");
    expect(r.out).toContain("gate: failed");
  });

  it("compare between windows whose inputs do not recur is unpaired, and says so", async () => {
    const r = await cli("compare", "traces:Shouter@11d..8d", "traces:Shouter@7d..5d", "--metric", "shouted.mjs");
    expect(r.err).toBe("");
    expect(r.out).toContain("unpaired: only 0 inputs recur");
    expect(r.out).toContain("difference 0.000");
    expect(r.out).toContain("gate: passed");
    expect(r.code).toBe(0);
  });
});

describe("typelm traces prune", () => {
  it("deletes traces older than the cutoff with their feedback, and keeps newer ones", async () => {
    const now = Date.now();
    const old = trace("old", "OLD", now - 40 * DAY, 0);
    await labSink().write([old]);
    await recordFeedback(old.traceId, { score: 1 });
    const db = openStoreSync(lab);
    const before = (db.prepare("SELECT count(*) AS n FROM lab_rows r JOIN lab_runs u ON u.id = r.run_id WHERE u.kind = 'traces'").get() as { n: number }).n;
    const r = await cli("traces", "prune", "--older-than", "30d");
    expect(r.err).toBe("");
    expect(r.out).toContain("deleted 1 traces");
    const after = (db.prepare("SELECT count(*) AS n FROM lab_rows r JOIN lab_runs u ON u.id = r.run_id WHERE u.kind = 'traces'").get() as { n: number }).n;
    expect(after).toBe(before - 1);
    expect(db.prepare("SELECT count(*) AS n FROM lab_feedback WHERE trace_id = ?").get(old.traceId)).toEqual({ n: 0 });
    const r2 = await cli("traces", "prune", "--older-than", "1d");
    expect(r2.out).toContain("deleted 36 traces"); // 12 + 12 + 12 of the windows
  });
});
