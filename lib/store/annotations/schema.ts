/**
 * The `annotations` table of the lab, one migration per engine (appended to `STORE_MIGRATIONS`, and
 * to `PG_MIGRATIONS` from pg-schema.ts): each row is one person's review of one row of a run (an evaluation's example or a
 * production trace), written by the viewer's review queue (`typelm view --review`). A row reviewed
 * again gets a new annotation; the latest (highest `id`) counts. Columns:
 * - `id`            INTEGER (SQLite autoincrement, PostgreSQL BIGSERIAL): the order they were written in.
 * - `run_id`        the run's id (no foreign key: a run's table may be rebuilt by a later migration).
 * - `example_id`    the row's example id (`#<index>` for a row recorded without one).
 * - `verdict`       TEXT: "pass", "fail", or a number on the judge's scale written as text ("4", "0.5").
 * - `expected_json` the corrected expected output as JSON text (an object), or NULL when the reviewer kept it.
 * - `note`          the reviewer's note, or NULL.
 * - `reviewer`      who reviewed (the viewer's `--reviewer`, else the account that started it).
 * - `created_at`    ISO 8601.
 */
import type { Migration } from "../migrations.js";

/** The annotations table on the SQLite file. */
export const SQLITE_ANNOTATIONS: Migration = {
  name: "010_annotations",
  sql: `CREATE TABLE IF NOT EXISTS annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    example_id TEXT NOT NULL,
    verdict TEXT NOT NULL,
    expected_json TEXT,
    note TEXT,
    reviewer TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS annotations_row ON annotations (run_id, example_id, id)`,
};
