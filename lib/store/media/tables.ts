/**
 * The `media` table of the lab store on both engines (see refs.ts for what refers to it): the named
 * migration the SQLite file appends, and the writes and reads of one value by its sha256 (PostgreSQL's
 * migration and writes are in pg-media.ts, loaded with its engine). A value is
 * written once per store (`INSERT … DO NOTHING` on its hash) and, per connection, sent at most once
 * (the hashes already written are remembered), so 1,000 rows sharing 10 images send 10 images.
 */
import type { Database } from "better-sqlite3";
import type { Migration } from "../migrations.js";
import type { KeepMedia, MediaBlob } from "./refs.js";

/** The SQLite file's `media` table: one row per value, keyed by the sha256 of its bytes. */
export const MEDIA_MIGRATION: Migration = {
  name: "010_media_values",
  sql: `CREATE TABLE IF NOT EXISTS media (
      sha256 TEXT PRIMARY KEY,
      media_type TEXT NOT NULL,
      kind TEXT NOT NULL,
      size INTEGER NOT NULL,
      bytes BLOB NOT NULL
    )`,
};

/** Hashes remembered per connection at most; past it the memory starts again (a value is then only offered again). */
const KNOWN_LIMIT = 10_000;

/** Remembers `sha256` in `known`; false when it was there already. */
export function firstTime(known: Set<string>, sha256: string): boolean {
  if (known.has(sha256)) return false;
  if (known.size >= KNOWN_LIMIT) known.clear();
  known.add(sha256);
  return true;
}

/** A `KeepMedia` writing each value the connection has not written yet into the file's `media` table. */
export function sqliteKeeper(db: Database, known: Set<string>): KeepMedia {
  const insert = db.prepare("INSERT OR IGNORE INTO media (sha256, media_type, kind, size, bytes) VALUES (?, ?, ?, ?, ?)");
  return (blob) => {
    if (!known.has(blob.sha256)) insert.run(blob.sha256, blob.mediaType, blob.kind, blob.bytes.length, Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength));
    firstTime(known, blob.sha256);
  };
}

/** A stored value of the file by its sha256, or undefined (a store without the table has none). */
export function sqliteMedia(db: Database, sha256: string): MediaBlob | undefined {
  const found = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'media'").get();
  if (found === undefined) return undefined;
  const row = db.prepare<[string], RawMedia>("SELECT sha256, media_type, kind, bytes FROM media WHERE sha256 = ?").get(sha256);
  return row === undefined ? undefined : blobFrom(row);
}

/** A `media` row as read by either engine. */
export interface RawMedia { sha256: string; media_type: string; kind: string; bytes: Uint8Array }

/** A read row as a `MediaBlob`. */
export function blobFrom(row: RawMedia): MediaBlob {
  return { sha256: row.sha256, mediaType: row.media_type, kind: row.kind as MediaBlob["kind"], bytes: row.bytes };
}
