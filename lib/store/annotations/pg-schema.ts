/**
 * The `annotations` table on PostgreSQL (columns: see schema.ts), apart from the SQLite one so that
 * only a PostgreSQL store's lazily loaded engine (pg.ts) holds its text.
 */
import type { Migration } from "../migrations.js";

/** The annotations table on PostgreSQL: the same columns. */
export const PG_ANNOTATIONS: Migration = {
  name: "010_annotations",
  sql: `CREATE TABLE IF NOT EXISTS annotations (
    id BIGSERIAL PRIMARY KEY,
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
