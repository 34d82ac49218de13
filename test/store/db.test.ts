import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STORE_MIGRATIONS, closeStore, migrate, openStore } from "../../lib/store/db.js";
import { LMCacheTable } from "../../lib/store/lm-cache.js";
import { createRequire } from "node:module";
import { LabStore } from "../../lib/store/lab-store.js";
import type { OptimizationRun } from "../../lib/store/records.js";

const dir = mkdtempSync(join(tmpdir(), "typelm-store-"));
afterAll(async () => {
  await closeStore(join(dir, "a.sqlite"));
  await closeStore(join(dir, "nested/deeper/b.sqlite"));
  rmSync(dir, { recursive: true, force: true });
});

describe("openStore", () => {
  it("opens the file in WAL mode with the lm_cache table", async () => {
    const db = await openStore(join(dir, "a.sqlite"));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    const columns = (db.prepare("PRAGMA table_info(lm_cache)").all() as { name: string }[]).map((c) => c.name);
    expect(columns).toEqual(expect.arrayContaining(["key", "provider", "model", "request_json", "content", "input_tokens", "output_tokens", "created_at"]));
  });

  it("returns the same connection for the same file and creates missing folders", async () => {
    const path = join(dir, "nested/deeper/b.sqlite");
    const [a, b] = await Promise.all([openStore(path), openStore(path)]);
    expect(a).toBe(b);
  });

  it("applies each migration once, however often it is asked for", async () => {
    const db = await openStore(":memory:");
    const step = { name: "900_test_runs", sql: "CREATE TABLE test_runs (id INTEGER PRIMARY KEY)" };
    migrate(db, [step]);
    migrate(db, [step]); // would fail ("table exists") if it ran twice
    const names = (db.prepare("SELECT name FROM schema_migrations ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(["001_lm_cache", "002_lab_runs", "003_registry", "004_lab_stopped_reused", "005_lab_batches", "006_lab_row_calls", "007_lab_rows_failed", "008_lab_row_details", "010_annotations", "010_media_values", "011_lab_traces", "900_test_runs"]);
    expect(STORE_MIGRATIONS.map((m) => m.name)).toEqual(["001_lm_cache", "002_lab_runs", "003_registry", "004_lab_stopped_reused", "005_lab_batches", "006_lab_row_calls", "007_lab_rows_failed", "008_lab_row_details", "010_annotations", "010_media_values", "011_lab_traces"]);
    db.close();
  });

  it("004 moves a file written before it to the new lab tables without losing a run, row or trial", async () => {
    // A file as the earlier migrations left it, with one run, one row, one trial (old per-example scores).
    const path = join(dir, "old.sqlite");
    const BetterSqlite3 = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
    const old = new BetterSqlite3(path);
    old.pragma("foreign_keys = ON");
    migrate(old, STORE_MIGRATIONS.slice(0, 3));
    old.prepare("INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ('r1', 'optimization', 'GEPA', 'completed', 't', '{}', '{}')").run();
    old.prepare("INSERT INTO lab_rows (run_id, idx, inputs_json, expected_json, scores_json, duration_ms, input_tokens, output_tokens, cost) VALUES ('r1', 0, '{}', '{}', '{}', 1, 1, 1, 0)").run();
    old.prepare(`INSERT INTO lab_trials (run_id, idx, kind, parents_json, choices_json, instructions_json, demo_ids_json, score, example_scores_json,
      budget_spent, lm_calls, input_tokens, output_tokens, cost, duration_ms, data_json)
      VALUES ('r1', 0, 'seed', '[]', '{}', '{}', '{}', 1, '[{"exampleId":"v1","score":1}]', 1, 1, 1, 1, 0, 1, '{}')`).run();
    expect(() => old.prepare("UPDATE lab_runs SET status = 'stopped'").run()).toThrow(/CHECK constraint/);
    old.close();

    const db = await openStore(path);
    const lab = LabStore.open(path);
    const run = lab.run("r1") as OptimizationRun;
    expect(run).toMatchObject({ name: "GEPA", status: "completed" });
    expect(lab.rows("r1")).toHaveLength(1);
    expect(run.trials[0]).toMatchObject({ kind: "seed", reused: 0, exampleScores: [{ exampleId: "v1", score: 1, error: null }] });
    lab.finishRun("r1", { status: "stopped" });
    expect(lab.run("r1")?.status).toBe("stopped");
    expect(() => db.prepare("UPDATE lab_runs SET status = 'paused'").run()).toThrow(/CHECK constraint/);
    // The children still point at lab_runs: deleting the run deletes its row and trial, and an unknown run is refused.
    expect(() => db.prepare("INSERT INTO lab_rows (run_id, idx, inputs_json, expected_json, scores_json, duration_ms, input_tokens, output_tokens, cost) VALUES ('nope', 0, '{}', '{}', '{}', 1, 1, 1, 0)").run()).toThrow(/FOREIGN KEY/);
    db.prepare("DELETE FROM lab_runs WHERE id = 'r1'").run();
    expect(db.prepare("SELECT (SELECT count(*) FROM lab_rows) + (SELECT count(*) FROM lab_trials) AS n").get()).toEqual({ n: 0 });
    // New runs keep counting up (seq) after the copied ones.
    const a = lab.startRun({ kind: "evaluation", name: "a" });
    const b = lab.startRun({ kind: "evaluation", name: "b" });
    expect(lab.runs().map((r) => r.id)).toEqual([b, a]);
    await closeStore(path);
  });

  it("raises a ConfigurationError naming the path when the file cannot be created", async () => {
    const file = join(dir, "plain-file");
    writeFileSync(file, "not a folder");
    await expect(openStore(join(file, "x.sqlite"))).rejects.toMatchObject({
      name: "ConfigurationError", message: expect.stringContaining(join(file, "x.sqlite")),
    });
  });
});

describe("LMCacheTable", () => {
  it("stores and reads back a row", async () => {
    const db = await openStore(":memory:");
    const table = new LMCacheTable(db);
    const row = {
      key: "k1", provider: "openai", model: "gpt-4o-mini", requestJson: "{}", content: "hi",
      inputTokens: 3, outputTokens: 1, finishReason: "stop", createdAt: "2026-11-21T00:00:00.000Z",
    };
    table.put(row);
    expect(table.get("k1")).toEqual(row);
    expect(table.get("missing")).toBeUndefined();
    expect(table.all()).toHaveLength(1);
    db.close();
  });
});
