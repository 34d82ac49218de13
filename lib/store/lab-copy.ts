/**
 * `typelm lab copy <from> <to>`: a local lab (the SQLite file) into a team's lab on PostgreSQL, or back.
 * Runs keep their ids; rows, trials and batches keep their indices; registry versions keep their
 * numbers. Rows keep their model calls, with the long texts those calls refer to (lab_texts: only the
 * texts of the rows copied, each once). Copying again adds nothing: what is already there is skipped (a
 * run that has ended since the last copy gets its end written).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ValidationError } from "../errors.js";
import { shownUrl } from "../instrument/redact.js";
import { openStoreSync, storeError } from "./db.js";
import { isPostgresUrl, postgresError, postgresPool } from "./pg.js";
import { callTextHashes } from "./stored-calls.js";

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
  if (isPostgresUrl(from) && isPostgresUrl(to)) {
    throw new ValidationError("lab copy: one side must be a lab store file (copy a team's lab into a file, or a file into a team's lab)", { field: "to" });
  }
  if (isPostgresUrl(from)) return copyToFile(from, resolve(cwd, to));
  if (!isPostgresUrl(to)) {
    throw new ValidationError(`lab copy: the destination must be a PostgreSQL URL such as postgres://user@host:5432/typelm; received ${JSON.stringify(shownUrl(to))}`, { field: "to" });
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
    for (const run of read<Record<string, unknown>>(`SELECT ${RUN_COLUMNS.join(", ")} FROM lab_runs ORDER BY seq`)) {
      await client.query("BEGIN");
      try {
        const inserted = await client.query(
          `INSERT INTO lab_runs (${RUN_COLUMNS.join(", ")}) VALUES (${RUN_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")}) ON CONFLICT (id) DO NOTHING`,
          RUN_COLUMNS.map((c) => run[c]),
        );
        if (inserted.rowCount === 1) {
          report.runs.added++;
        } else {
          // Already there: take the source's end when it has moved on (a run that was running at the last copy).
          const changed = await client.query(
            `UPDATE lab_runs SET status = $2, ended_at = $3, score = $4, summary_json = $5, error = $6, best_trial = $7
             WHERE id = $1 AND (status, COALESCE(ended_at, ''), summary_json) IS DISTINCT FROM ($2, COALESCE($3, ''), $5)`,
            [run.id, run.status, run.ended_at, run.score, run.summary_json, run.error, run.best_trial],
          );
          if (changed.rowCount === 1) report.runs.updated++;
          else report.runs.unchanged++;
        }
        const rows = read<Record<string, unknown>>(`SELECT ${ROW_COLUMNS.join(", ")} FROM lab_rows WHERE run_id = ? ORDER BY idx`, run.id);
        const added = new Set((await insertAll(client, "lab_rows", ROW_COLUMNS, rows, "run_id, idx")).map((r) => r.idx));
        report.rows += added.size;
        // The texts the added rows' calls refer to, in the same transaction (rows already there have theirs).
        const hashes = callHashes(rows.filter((r) => added.has(r.idx)));
        for (let start = 0; start < hashes.length; start += CHUNK) {
          const chunk = hashes.slice(start, start + CHUNK);
          const texts = read<{ hash: string; text: string }>(`SELECT hash, text FROM lab_texts WHERE hash IN (${chunk.map(() => "?").join(", ")})`, ...chunk);
          if (texts.length === 0) continue;
          const inserted = await client.query(
            "INSERT INTO lab_texts (hash, text) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (hash) DO NOTHING",
            [texts.map((t) => t.hash), texts.map((t) => t.text)],
          );
          report.texts += inserted.rowCount ?? 0;
        }
        report.trials += (await insertAll(client, "lab_trials", TRIAL_COLUMNS, read(`SELECT ${TRIAL_COLUMNS.join(", ")} FROM lab_trials WHERE run_id = ? ORDER BY idx`, run.id), "run_id, idx")).length;
        report.batches += (await insertAll(client, "lab_batches", BATCH_COLUMNS, read(`SELECT ${BATCH_COLUMNS.join(", ")} FROM lab_batches WHERE run_id = ? ORDER BY created_at, rowid`, run.id), "run_id, batch_id")).length;
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
      const [there] = (await client.query("SELECT created_at, state_json FROM registry_versions WHERE name = $1 AND version = $2", [version.name, version.version])).rows;
      if (there?.created_at === version.created_at && there?.state_json === version.state_json) report.registry.unchanged++;
      else report.registry.conflicts.push(`${String(version.name)} v${String(version.version)}`);
    }
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
  for (const run of await read(`SELECT ${RUN_COLUMNS.join(", ")} FROM lab_runs ORDER BY seq`)) {
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
    const trials = await read(`SELECT ${TRIAL_COLUMNS.join(", ")} FROM lab_trials WHERE run_id = $1 ORDER BY idx`, [run.id]);
    const batches = await read(`SELECT ${BATCH_COLUMNS.join(", ")} FROM lab_batches WHERE run_id = $1 ORDER BY created_at, seq`, [run.id]);
    write(() => {
      if (insert("lab_runs", RUN_COLUMNS, [run]) === 1) {
        report.runs.added++;
      } else {
        const changed = db.prepare(
          `UPDATE lab_runs SET status = ?, ended_at = ?, score = ?, summary_json = ?, error = ?, best_trial = ?
           WHERE id = ? AND (status IS NOT ? OR COALESCE(ended_at, '') IS NOT COALESCE(?, '') OR summary_json IS NOT ?)`,
        ).run(run.status, run.ended_at, run.score, run.summary_json, run.error, run.best_trial, run.id, run.status, run.ended_at, run.summary_json).changes;
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
      const there = db.prepare("SELECT created_at, state_json FROM registry_versions WHERE name = ? AND version = ?").get(version.name, version.version) as
        { created_at: string; state_json: string } | undefined;
      if (there?.created_at === version.created_at && there?.state_json === version.state_json) report.registry.unchanged++;
      else report.registry.conflicts.push(`${String(version.name)} v${String(version.version)}`);
    });
  }
  return report;
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

/** The report as `typelm lab copy` prints it. */
export function copyReportText(r: LabCopyReport): string {
  const lines = [
    `copied ${r.from} into ${r.to}`,
    `runs: ${r.runs.added} added, ${r.runs.updated} updated, ${r.runs.unchanged} already there`,
    `rows: ${r.rows} added (texts of their model calls: ${r.texts} added); trials: ${r.trials} added; batches: ${r.batches} added`,
    `registry versions: ${r.registry.added} added, ${r.registry.unchanged} already there`,
  ];
  if (r.registry.conflicts.length > 0) {
    lines.push(`registry versions not copied (the destination has another module under the same name and version): ${r.registry.conflicts.join(", ")}`);
  }
  return `${lines.join("\n")}\n`;
}
