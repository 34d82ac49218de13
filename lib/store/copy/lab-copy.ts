/**
 * `typelm lab copy <from> <to>`: a local lab (the SQLite file) into a team's lab on PostgreSQL, or back.
 * Runs keep their ids; rows, trials and batches keep their indices; registry versions keep their
 * numbers. Rows keep their model calls, with the long texts those calls refer to (lab_texts: only the
 * texts of the rows copied, each once). Copying again adds nothing: what is already there is skipped (a
 * run that has ended since the last copy gets its end written). A copy only moves a run forward: a
 * run still running in the destination takes the source's end, an ended one only a later end, so an
 * older copy never turns a finished run back into a running one. Each text is checked against its
 * hash before it is copied, and a value PostgreSQL cannot store (a NUL character) is named. People's
 * reviews (annotations) and users' feedback on traces follow the runs (annotations/copy.ts).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ValidationError } from "../../errors.js";
import { shownStore, shownUrl } from "../../instrument/redact.js";
import { openStoreSync, storeError } from "../db.js";
import { isPostgresUrl, postgresError, postgresPool } from "../pg.js";
import { storeKind } from "../pg-url.js";
import { callTextHashes } from "../call-texts.js";
import { textHash } from "../stored-calls.js";
import { fileMedia, referredMedia, teamMedia, toFile, toTeam } from "../media/copy.js";
import { copyReviews, fileReviewTables, teamReviewTables } from "../annotations/copy.js";

/** What one copy did, counted per table. */
export interface LabCopyReport {
  from: string;
  /** The database without credentials. */
  to: string;
  runs: { added: number; updated: number; unchanged: number };
  rows: number;
  /** Texts of the copied rows' model calls added to lab_texts (those the destination lacked). */
  texts: number;
  trials: number;
  batches: number;
  registry: { added: number; unchanged: number; conflicts: string[] };
  /** Media values the copied records refer to, added (present only when some were). */
  media?: number;
  /** People's reviews (the review queue's annotations) added (present only when some were). */
  annotations?: number;
  /** Users' feedback on traces (lab_feedback) added (present only when some was). */
  feedback?: number;
}

const RUN_COLUMNS = ["id", "kind", "name", "status", "started_at", "ended_at", "score", "config_json", "summary_json", "error", "best_trial"];
const ROW_COLUMNS = [
  "run_id", "idx", "example_id", "inputs_json", "expected_json", "prediction_json", "scores_json", "error", "duration_ms", "input_tokens",
  "output_tokens", "cost", "details_json", "calls_json",
];
const TRIAL_COLUMNS = [
  "run_id", "idx", "kind", "parents_json", "choices_json", "instructions_json", "demo_ids_json", "score", "example_scores_json",
  "budget_spent", "lm_calls", "input_tokens", "output_tokens", "cost", "duration_ms", "error", "data_json", "reused",
];
const BATCH_COLUMNS = ["run_id", "batch_id", "provider", "model", "endpoint", "round", "custom_ids_json", "status", "created_at"];
const REGISTRY_COLUMNS = ["name", "version", "created_at", "score", "metadata_json", "state_json", "module_class"];

/** At most this many rows per INSERT (PostgreSQL takes at most 65535 parameters per statement). */
const CHUNK = 500;

/**
 * Copies the lab store file `from` (relative to `cwd`) into the PostgreSQL database at `to`, or a
 * team's lab at `from` into the file `to` (created when missing).
 */
export async function copyLab(from: string, to: string, cwd: string = process.cwd()): Promise<LabCopyReport> {
  // Another scheme or a keyword string is refused without being shown (it may carry a password).
  storeKind(from, "lab copy");
  storeKind(to, "lab copy");
  if (isPostgresUrl(from) && isPostgresUrl(to)) {
    throw new ValidationError("lab copy: one side must be a lab store file (copy a team's lab into a file, or a file into a team's lab)", { field: "to" });
  }
  if (isPostgresUrl(from)) return copyToFile(from, resolve(cwd, to));
  if (!isPostgresUrl(to)) {
    throw new ValidationError(`lab copy: the destination must be a PostgreSQL URL such as postgres://user@host:5432/typelm; received ${JSON.stringify(shownStore(to))}`, { field: "to" });
  }
  const path = resolve(cwd, from);
  if (!existsSync(path)) throw new ValidationError(`lab copy: no lab store at ${path}`, { field: "from" });
  const source = openStoreSync(path);
  const read = <T>(sql: string, ...params: unknown[]): T[] => {
    try {
      return source.prepare(sql).all(...params) as T[];
    } catch (error) {
      throw storeError(path, "read", error);
    }
  };
  const report: LabCopyReport = {
    from: path, to: shownUrl(to), runs: { added: 0, updated: 0, unchanged: 0 }, rows: 0, texts: 0, trials: 0, batches: 0,
    registry: { added: 0, unchanged: 0, conflicts: [] },
  };
  const { pool, ready } = postgresPool(to);
  await ready;
  let client;
  try {
    client = await pool.connect();
  } catch (error) {
    throw postgresError(to, "open", error);
  }
  try {
    // Oldest first, so the copied runs keep their order among themselves.
    for (const run of read<Record<string, unknown>>(`SELECT ${RUN_COLUMNS.join(", ")} FROM lab_runs ORDER BY started_at, seq`)) {
      // Everything of the run is read and checked before it is written: a run is copied whole or not at all.
      const rows = read<Record<string, unknown>>(`SELECT ${ROW_COLUMNS.join(", ")} FROM lab_rows WHERE run_id = ? ORDER BY idx`, run.id);
      const trials = read<Record<string, unknown>>(`SELECT ${TRIAL_COLUMNS.join(", ")} FROM lab_trials WHERE run_id = ? ORDER BY idx`, run.id);
      const batches = read<Record<string, unknown>>(`SELECT ${BATCH_COLUMNS.join(", ")} FROM lab_batches WHERE run_id = ? ORDER BY created_at, rowid`, run.id);
      const hashes = callHashes(rows);
      const texts: { hash: string; text: string }[] = [];
      for (let start = 0; start < hashes.length; start += CHUNK) {
        const chunk = hashes.slice(start, start + CHUNK);
        texts.push(...read<{ hash: string; text: string }>(`SELECT hash, text FROM lab_texts WHERE hash IN (${chunk.map(() => "?").join(", ")})`, ...chunk));
      }
      checkTexts(texts, path, run.id);
      const media = fileMedia(source, referredMedia([...rows, ...trials, ...texts]), path, run.id);
      checkStorable(run.id, "run", [run], () => "the run itself");
      checkStorable(run.id, "row", rows, (r) => `row ${String(r.idx)}${typeof r.example_id === "string" ? ` (example ${JSON.stringify(r.example_id)})` : ""}`);
      checkStorable(run.id, "trial", trials, (t) => `trial ${String(t.idx)}`);
      checkStorable(run.id, "batch", batches, (b) => `batch ${JSON.stringify(b.batch_id)}`);
      checkStorable(run.id, "text", texts, (t) => `the text stored under hash ${String(t.hash)}`);
      await client.query("BEGIN");
      try {
        const inserted = await client.query(
          `INSERT INTO lab_runs (${RUN_COLUMNS.join(", ")}) VALUES (${RUN_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")}) ON CONFLICT (id) DO NOTHING`,
          RUN_COLUMNS.map((c) => run[c]),
        );
        if (inserted.rowCount === 1) {
          report.runs.added++;
        } else {
          // Already there: take the source's end only when it moves the run forward (see movesForward).
          const changed = await client.query(
            `UPDATE lab_runs SET status = $2, ended_at = $3, score = $4, summary_json = $5, error = $6, best_trial = $7
             WHERE id = $1 AND $2::text <> 'running' AND $3::text IS NOT NULL
               AND (status = 'running' OR ended_at IS NULL OR ended_at < $3::text)`,
            [run.id, run.status, run.ended_at, run.score, run.summary_json, run.error, run.best_trial],
          );
          if (changed.rowCount === 1) report.runs.updated++;
          else report.runs.unchanged++;
        }
        report.rows += (await insertAll(client, "lab_rows", ROW_COLUMNS, rows, "run_id, idx")).length;
        // The texts the rows' calls refer to, in the same transaction (those the destination has are skipped).
        for (let start = 0; start < texts.length; start += CHUNK) {
          const chunk = texts.slice(start, start + CHUNK);
          const inserted = await client.query(
            "INSERT INTO lab_texts (hash, text) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (hash) DO NOTHING",
            [chunk.map((t) => t.hash), chunk.map((t) => t.text)],
          );
          report.texts += inserted.rowCount ?? 0;
        }
        addMedia(report, await toTeam(client, media));
        report.trials += (await insertAll(client, "lab_trials", TRIAL_COLUMNS, trials, "run_id, idx")).length;
        report.batches += (await insertAll(client, "lab_batches", BATCH_COLUMNS, batches, "run_id, batch_id")).length;
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw postgresError(to, `copy run ${String(run.id)} into`, error);
      }
    }
    for (const version of read<Record<string, unknown>>(`SELECT ${REGISTRY_COLUMNS.join(", ")} FROM registry_versions ORDER BY name, version`)) {
      const inserted = await insertAll(client, "registry_versions", REGISTRY_COLUMNS, [version], "name, version");
      if (inserted.length === 1) {
        report.registry.added++;
        continue;
      }
      const [there] = (await client.query("SELECT state_json, module_class FROM registry_versions WHERE name = $1 AND version = $2", [version.name, version.version])).rows;
      if (sameModule(there, version)) report.registry.unchanged++;
      else report.registry.conflicts.push(`${String(version.name)} v${String(version.version)}`);
    }
    const added = await copyReviews(fileReviewTables(source), teamReviewTables((sql, params) => client!.query(sql, params)))
      .catch((error: unknown) => { throw postgresError(to, "copy reviews and feedback into", error); });
    addReviews(report, added);
  } finally {
    client.release();
  }
  return report;
}

/** A team's lab into a lab store file: the same tables, the same rules (what is there is skipped). */
async function copyToFile(url: string, path: string): Promise<LabCopyReport> {
  const { pool, ready } = postgresPool(url);
  await ready;
  const read = async (sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> => {
    try {
      return (await pool.query(sql, params)).rows;
    } catch (error) {
      throw postgresError(url, "read", error);
    }
  };
  const db = openStoreSync(path);
  const report: LabCopyReport = {
    from: shownUrl(url), to: path, runs: { added: 0, updated: 0, unchanged: 0 }, rows: 0, texts: 0, trials: 0, batches: 0,
    registry: { added: 0, unchanged: 0, conflicts: [] },
  };
  const insert = (table: string, columns: string[], records: Record<string, unknown>[]): number => {
    const statement = db.prepare(`INSERT OR IGNORE INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
    let added = 0;
    for (const r of records) added += statement.run(...columns.map((c) => r[c] ?? null)).changes;
    return added;
  };
  const write = <T>(fn: () => T): T => {
    try {
      return db.transaction(fn).immediate();
    } catch (error) {
      throw storeError(path, "copy into", error);
    }
  };
  for (const run of await read(`SELECT ${RUN_COLUMNS.join(", ")} FROM lab_runs ORDER BY started_at, seq`)) {
    const rows = await read(`SELECT ${ROW_COLUMNS.join(", ")} FROM lab_rows WHERE run_id = $1 ORDER BY idx`, [run.id]);
    // The texts of the rows the file lacks, read before the write (a row that another writer adds
    // meanwhile is skipped, and its texts are then only unused entries).
    let there: Set<unknown>;
    try {
      there = new Set(db.prepare("SELECT idx FROM lab_rows WHERE run_id = ?").pluck().all(run.id));
    } catch (error) {
      throw storeError(path, "read", error);
    }
    const hashes = callHashes(rows.filter((r) => !there.has(r.idx)));
    const texts = hashes.length === 0 ? [] : await read("SELECT hash, text FROM lab_texts WHERE hash = ANY($1)", [hashes]);
    checkTexts(texts as { hash: string; text: string }[], shownUrl(url), run.id);
    const trials = await read(`SELECT ${TRIAL_COLUMNS.join(", ")} FROM lab_trials WHERE run_id = $1 ORDER BY idx`, [run.id]);
    const batches = await read(`SELECT ${BATCH_COLUMNS.join(", ")} FROM lab_batches WHERE run_id = $1 ORDER BY created_at, seq`, [run.id]);
    const media = await teamMedia(read, referredMedia([...rows.filter((r) => !there.has(r.idx)), ...trials, ...texts]), shownUrl(url), run.id);
    write(() => {
      addMedia(report, toFile(db, media));
      if (insert("lab_runs", RUN_COLUMNS, [run]) === 1) {
        report.runs.added++;
      } else {
        // Only forward (see movesForward): an older copy of the team's lab never un-finishes a run of the file.
        const there = db.prepare("SELECT status, ended_at FROM lab_runs WHERE id = ?").get(run.id) as RunEnd | undefined;
        const changed = there !== undefined && movesForward(there, run as unknown as RunEnd) ? db.prepare(
          "UPDATE lab_runs SET status = ?, ended_at = ?, score = ?, summary_json = ?, error = ?, best_trial = ? WHERE id = ?",
        ).run(run.status, run.ended_at, run.score, run.summary_json, run.error, run.best_trial, run.id).changes : 0;
        if (changed === 1) report.runs.updated++;
        else report.runs.unchanged++;
      }
      report.texts += insert("lab_texts", ["hash", "text"], texts);
      report.rows += insert("lab_rows", ROW_COLUMNS, rows);
      report.trials += insert("lab_trials", TRIAL_COLUMNS, trials);
      report.batches += insert("lab_batches", BATCH_COLUMNS, batches);
    });
  }
  for (const version of await read(`SELECT ${REGISTRY_COLUMNS.join(", ")} FROM registry_versions ORDER BY name, version`)) {
    write(() => {
      if (insert("registry_versions", REGISTRY_COLUMNS, [version]) === 1) {
        report.registry.added++;
        return;
      }
      const there = db.prepare("SELECT state_json, module_class FROM registry_versions WHERE name = ? AND version = ?").get(version.name, version.version) as
        Record<string, unknown> | undefined;
      if (sameModule(there, version)) report.registry.unchanged++;
      else report.registry.conflicts.push(`${String(version.name)} v${String(version.version)}`);
    });
  }
  const added = await copyReviews(teamReviewTables((sql, params) => pool.query(sql, params)), fileReviewTables(db))
    .catch((error: unknown) => { throw storeError(path, "copy reviews and feedback into", error); });
  addReviews(report, added);
  return report;
}

function addReviews(report: LabCopyReport, added: { annotations: number; feedback: number }): void {
  if (added.annotations > 0) report.annotations = added.annotations;
  if (added.feedback > 0) report.feedback = added.feedback;
}

/**
 * Whether the destination's version is the same module as the source's: the same class and state
 * (prompts, demos). When it was stored does not matter: the same program stored in both labs, or
 * copied before, is already there, not a conflict.
 */
function sameModule(there: Record<string, unknown> | undefined, version: Record<string, unknown>): boolean {
  return there !== undefined && there.state_json === version.state_json && there.module_class === version.module_class;
}

/** What decides whether a copy may write a run's end: its status and when it ended. */
interface RunEnd { status: string; ended_at: string | null }

/**
 * Whether the source's end of a run moves the destination's copy of it forward: a run still running
 * there takes an end; a run that ended there takes only a later end (a run resumed and finished
 * again). A source still running, or ended earlier, never replaces what the destination has.
 */
function movesForward(there: RunEnd, source: RunEnd): boolean {
  if (source.status === "running" || source.ended_at === null) return false;
  return there.status === "running" || there.ended_at === null || there.ended_at < source.ended_at;
}

/**
 * Refuses a text of lab_texts whose hash is not the one it is stored under (changed after it was
 * written): copied, it would stand for the original in every row, and every later run, that sends it.
 */
function checkTexts(texts: { hash: string; text: string }[], where: string, runId: unknown): void {
  for (const t of texts) {
    if (textHash(t.text) !== t.hash) {
      throw new ValidationError(
        `lab copy: the text stored under hash ${t.hash} in ${where} does not match that hash (it was changed after it was written), ` +
          `so run ${String(runId)} is not copied (the runs that started before it are). Restore the text, or delete the run's rows that refer to it, and copy again`,
        { field: "from" },
      );
    }
  }
}

/**
 * Refuses a run holding a value PostgreSQL cannot store in a text column (a NUL character), naming
 * the run, the record and the column, before any of the run is written.
 */
function checkStorable(runId: unknown, what: string, records: Record<string, unknown>[], name: (r: Record<string, unknown>) => string): void {
  for (const r of records) {
    for (const [column, value] of Object.entries(r)) {
      if (typeof value === "string" && value.includes("\u0000")) {
        throw new ValidationError(
          `lab copy: run ${String(runId)}, ${name(r)}: its ${column} holds a NUL character (\\u0000), which PostgreSQL cannot store, ` +
            `so this run is not copied (the runs that started before it are). Remove the character from that ${what} in the file, or keep this run in the file, and copy again ` +
            "(what is already copied is skipped)",
          { field: "from" },
        );
      }
    }
  }
}

/** The hashes of lab_texts the `calls_json` of `rows` refer to, each once. */
function callHashes(rows: Record<string, unknown>[]): string[] {
  const hashes = new Set<string>();
  for (const r of rows) {
    if (typeof r.calls_json !== "string") continue;
    let found: string[];
    try {
      found = callTextHashes(r.calls_json);
    } catch {
      // Calls that do not parse are copied as they are; they refer to no text that could be read.
      continue;
    }
    for (const hash of found) hashes.add(hash);
  }
  return [...hashes];
}

/** Inserts `records` (skipping those whose key is already there); returns the keys of those added. */
async function insertAll(
  client: import("pg").PoolClient, table: string, columns: string[], records: Record<string, unknown>[], key: string,
): Promise<Record<string, unknown>[]> {
  const added: Record<string, unknown>[] = [];
  for (let start = 0; start < records.length; start += CHUNK) {
    const chunk = records.slice(start, start + CHUNK);
    const values: unknown[] = [];
    const tuples = chunk.map((r) => `(${columns.map((c) => {
      values.push(r[c]);
      return `$${values.length}`;
    }).join(", ")})`);
    const result = await client.query(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")} ON CONFLICT (${key}) DO NOTHING RETURNING ${key}`, values);
    added.push(...result.rows);
  }
  return added;
}

function addMedia(report: LabCopyReport, added: number): void {
  if (added > 0) report.media = (report.media ?? 0) + added;
}

/** The report as `typelm lab copy` prints it. */
export function copyReportText(r: LabCopyReport): string {
  const lines = [
    `copied ${r.from} into ${r.to}`,
    `runs: ${r.runs.added} added, ${r.runs.updated} updated, ${r.runs.unchanged} already there`,
    `rows: ${r.rows} added (texts of their model calls: ${r.texts} added); trials: ${r.trials} added; batches: ${r.batches} added`,
    `registry versions: ${r.registry.added} added, ${r.registry.unchanged} already there`,
    ...(r.media === undefined ? [] : [`media values: ${r.media} added`]),
    ...(r.annotations === undefined && r.feedback === undefined ? [] : [`reviews: ${r.annotations ?? 0} added; users' feedback: ${r.feedback ?? 0} added`]),
  ];
  if (r.registry.conflicts.length > 0) {
    lines.push(`registry versions not copied (the destination has another module under the same name and version): ${r.registry.conflicts.join(", ")}`);
  }
  return `${lines.join("\n")}\n`;
}
