/**
 * The `media` table on PostgreSQL (see tables.ts): its migration and the writes of values, loaded only
 * with a PostgreSQL store's engine (pg.ts, pg-lab-engine.ts) or a lab copy, not at `import "typelm"`.
 */
import type { Pool } from "pg";
import type { Migration } from "../migrations.js";
import type { MediaBlob } from "./refs.js";
import { firstTime } from "./tables.js";

/** The `media` table on PostgreSQL: as on the SQLite file, the bytes as `bytea`. */
export const PG_MEDIA_MIGRATION: Migration = {
  name: "010_media_values",
  sql: "CREATE TABLE IF NOT EXISTS media (sha256 TEXT PRIMARY KEY, media_type TEXT NOT NULL, kind TEXT NOT NULL, size BIGINT NOT NULL, bytes BYTEA NOT NULL)",
};

/** Writes the values PostgreSQL may lack (each `INSERT … ON CONFLICT DO NOTHING`); remembers them in `known`. */
export async function pgWriteMedia(pool: Pick<Pool, "query">, blobs: Iterable<MediaBlob>, known: Set<string>): Promise<number> {
  let added = 0;
  for (const b of blobs) {
    const result = await pool.query(
      "INSERT INTO media (sha256, media_type, kind, size, bytes) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (sha256) DO NOTHING",
      [b.sha256, b.mediaType, b.kind, b.bytes.length, Buffer.from(b.bytes.buffer, b.bytes.byteOffset, b.bytes.byteLength)],
    );
    added += result.rowCount ?? 0;
    firstTime(known, b.sha256);
  }
  return added;
}
