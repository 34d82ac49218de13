/**
 * `typelm lab copy` and media: the values the copied rows, trials and texts refer to (by their
 * `{"$media": sha256}` references) are read from the source's `media` table and written to the
 * destination's, each once (those it has are skipped). Each value is checked against its hash before
 * it is copied, as texts are: a value changed after it was written would stand for the original.
 */
import type { Database } from "better-sqlite3";
import type { PoolClient } from "pg";
import { ValidationError } from "../../errors.js";
import { nodeCrypto } from "../../load-sync.js";
import { mediaHashesIn } from "./ref-read.js";
import { pgWriteMedia } from "./pg-media.js";
import { blobFrom, type RawMedia } from "./tables.js";

/** The sha256 of the media values the records' text columns (and texts) refer to. */
export function referredMedia(records: Iterable<Record<string, unknown>>): string[] {
  const hashes = new Set<string>();
  for (const r of records) for (const value of Object.values(r)) if (typeof value === "string" && value.includes("$media")) mediaHashesIn(value, hashes);
  return [...hashes];
}

function checked(rows: RawMedia[], where: string, runId: unknown): RawMedia[] {
  for (const m of rows) {
    if (nodeCrypto().createHash("sha256").update(m.bytes).digest("hex") !== m.sha256) {
      throw new ValidationError(
        `lab copy: the media value stored under sha256 ${m.sha256} in ${where} does not match that hash (it was changed after it was written), ` +
          `so run ${String(runId)} is not copied (the runs that started before it are). Restore the value, or delete the rows that refer to it, and copy again`,
        { field: "from" },
      );
    }
  }
  return rows;
}

const COLUMNS = "sha256, media_type, kind, bytes";

/** The values `hashes` names in a lab store file (none when it has no `media` table), checked against their hashes. */
export function fileMedia(db: Database, hashes: string[], where: string, runId: unknown): RawMedia[] {
  if (hashes.length === 0 || db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'media'").get() === undefined) return [];
  const read = db.prepare<[string], RawMedia>(`SELECT ${COLUMNS} FROM media WHERE sha256 = ?`);
  return checked(hashes.map((h) => read.get(h)).filter((m): m is RawMedia => m !== undefined), where, runId);
}

/** The values `hashes` names in a team's lab, checked against their hashes. */
export async function teamMedia(read: (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>, hashes: string[], where: string, runId: unknown): Promise<RawMedia[]> {
  if (hashes.length === 0) return [];
  return checked(await read(`SELECT ${COLUMNS} FROM media WHERE sha256 = ANY($1)`, [hashes]) as unknown as RawMedia[], where, runId);
}

/** Writes values into a team's lab (inside the copy's transaction); the number added. */
export function toTeam(client: PoolClient, media: RawMedia[]): Promise<number> {
  return pgWriteMedia(client, media.map(blobFrom), new Set());
}

/** Writes values into a lab store file (inside the copy's transaction); the number added. */
export function toFile(db: Database, media: RawMedia[]): number {
  const insert = db.prepare("INSERT OR IGNORE INTO media (sha256, media_type, kind, size, bytes) VALUES (?, ?, ?, ?, ?)");
  let added = 0;
  for (const m of media) added += insert.run(m.sha256, m.media_type, m.kind, m.bytes.length, m.bytes).changes;
  return added;
}
