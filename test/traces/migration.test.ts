// Migration 010 rebuilds lab_runs (its CHECK on kind gains "traces") under its children: an older
// file keeps every run and row, and deleting a run still deletes its rows.
import { describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { migrate } from "../../lib/store/db.js";
import { STORE_MIGRATIONS } from "../../lib/store/migrations.js";

const require = createRequire(import.meta.url);

describe("migration 011_lab_traces", () => {
  it("keeps the runs and rows of an older file, accepts kind traces, and keeps ON DELETE CASCADE", () => {
    const dir = mkdtempSync(join(tmpdir(), "typelm-mig-"));
    try {
      const Database = require("better-sqlite3") as typeof import("better-sqlite3");
      const db = new Database(join(dir, "lab.sqlite"));
      db.pragma("foreign_keys = ON");
      const before = STORE_MIGRATIONS.filter((m) => m.name !== "011_lab_traces");
      migrate(db, before);
      db.prepare("INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ('r1', 'evaluation', 'e', 'completed', '2026-01-01', '{}', '{}')").run();
      db.prepare(`INSERT INTO lab_rows (run_id, idx, example_id, inputs_json, expected_json, prediction_json, scores_json, error, duration_ms, input_tokens, output_tokens, cost)
        VALUES ('r1', 0, 'x', '{}', '{}', '{}', '{}', NULL, 1, 1, 1, 0)`).run();
      expect(() => db.prepare("INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ('t0', 'traces', 't', 'running', '2026-01-01', '{}', '{}')").run()).toThrow(/CHECK/);
      migrate(db, STORE_MIGRATIONS);
      expect(db.prepare("SELECT run_id, idx FROM lab_rows").all()).toEqual([{ run_id: "r1", idx: 0 }]);
      db.prepare("INSERT INTO lab_runs (id, kind, name, status, started_at, config_json, summary_json) VALUES ('t1', 'traces', 't', 'running', '2026-01-02', '{}', '{}')").run();
      expect(db.prepare("SELECT id, kind FROM lab_runs ORDER BY seq").all()).toEqual([{ id: "r1", kind: "evaluation" }, { id: "t1", kind: "traces" }]);
      expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
      db.prepare("DELETE FROM lab_runs WHERE id = 'r1'").run();
      expect(db.prepare("SELECT count(*) AS n FROM lab_rows").get()).toEqual({ n: 0 });
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
