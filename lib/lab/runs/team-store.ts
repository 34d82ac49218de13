// lib/lab/runs/: stored runs for the commands — a run by its id or the start of it (find.ts), and which
// store a command reads, the working folder's file or a team's lab on PostgreSQL (this file).
/**
 * Which lab store `typelm runs`, `show` and `compare` read: `--store <file or postgres://...>`, else
 * `TYPELM_LAB_URL`, else `.typelm/lab.sqlite` of the working folder; and the reads they make on a
 * team's lab on PostgreSQL.
 */
import { join, resolve } from "node:path";
import { ConfigurationError, ValidationError } from "../../errors.js";
import type { RunKind, LabRun } from "../../store/records.js";
import { postgresError, postgresPool } from "../../store/pg.js";
import { storeKind } from "../../store/pg-url.js";
import type { PostgresLabStore } from "../../store/pg-lab-store.js";
import { printable } from "../terminal.js";

export type ChosenStore = { engine: "sqlite"; path: string; given: boolean } | { engine: "postgresql"; url: string };

export function chooseStore(option: string | undefined, env: NodeJS.ProcessEnv, cwd: string): ChosenStore {
  if (option !== undefined) {
    if (option === "") throw new ValidationError("--store expects a lab store file or a postgres:// URL; received an empty value", { field: "store" });
    // Another scheme or a keyword string is refused without being shown (it may carry a password).
    return storeKind(option, "--store") === "postgresql" ? { engine: "postgresql", url: option } : { engine: "sqlite", path: resolve(cwd, option), given: true };
  }
  const fromEnv = env.TYPELM_LAB_URL;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (storeKind(fromEnv, "TYPELM_LAB_URL") !== "postgresql") {
      throw new ConfigurationError("TYPELM_LAB_URL must be a PostgreSQL URL such as postgres://user@host:5432/typelm; unset it to read .typelm/lab.sqlite");
    }
    return { engine: "postgresql", url: fromEnv };
  }
  return { engine: "sqlite", path: join(cwd, ".typelm", "lab.sqlite"), given: false };
}

/** One line of `typelm runs`, as the table holds it. */
export interface RunLine {
  id: string; kind: string; name: string; status: string; started_at: string; score: number | null;
  config_json: string; summary_json: string;
}

/** The runs of a team's lab, newest first, read from the table directly (as `typelm runs` reads the file). */
export async function postgresRunLines(url: string, kind: RunKind | undefined, limit: number | undefined): Promise<RunLine[]> {
  const { pool, ready } = postgresPool(url);
  await ready;
  const params: unknown[] = kind === undefined ? [] : [kind];
  try {
    return (await pool.query<RunLine>(
      `SELECT id, kind, name, status, started_at, score, config_json, summary_json FROM lab_runs${kind ? " WHERE kind = $1" : ""} ` +
        `ORDER BY started_at DESC, seq DESC${limit !== undefined ? ` LIMIT ${limit}` : ""}`,
      params,
    )).rows;
  } catch (error) {
    throw postgresError(url, "read", error);
  }
}

/** How many candidates an ambiguous id prefix lists. */
const CANDIDATES = 10;

/** A run of a team's lab by its id or the start of it, with the messages `typelm show` gives for the file. */
export async function postgresRunById(store: PostgresLabStore, given: string): Promise<LabRun> {
  if (given === "") throw new ValidationError(`a run id is empty; "typelm runs" lists the runs and their ids`, { field: "run" });
  const { pool, ready } = postgresPool(store.url);
  await ready;
  let matches: { id: string; kind: string; name: string; started_at: string }[];
  try {
    matches = (await pool.query(
      `SELECT id, kind, name, started_at FROM lab_runs WHERE left(id, $1) = $2 ORDER BY started_at DESC, seq DESC LIMIT ${CANDIDATES + 1}`, [given.length, given],
    )).rows;
  } catch (error) {
    throw postgresError(store.url, "read", error);
  }
  const noRun = () => new ValidationError(`no run whose id is or starts with "${printable(given)}" in ${store.path}; "typelm runs" lists the runs and their ids`, { field: "run" });
  const exact = matches.find((m) => m.id === given);
  if (exact === undefined && matches.length !== 1) {
    if (matches.length === 0) throw noRun();
    const listed = matches.slice(0, CANDIDATES).map((m) => `${printable(m.id)} (${m.kind} "${printable(m.name)}", ${m.started_at})`);
    throw new ValidationError(
      `run id "${printable(given)}" is the start of ${matches.length > CANDIDATES ? `more than ${CANDIDATES}` : matches.length} runs' ids in ${store.path}: ` +
        `${listed.join("; ")}${matches.length > CANDIDATES ? "; ..." : ""}; give more of the id`,
      { field: "run" },
    );
  }
  const id = (exact ?? matches[0]!).id;
  let run: LabRun | undefined;
  try {
    run = await store.run(id);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new ConfigurationError(`run "${printable(id)}" in ${store.path} is damaged (its stored JSON does not parse: ${error.message}); "typelm runs" lists it as unreadable`);
  }
  if (run === undefined) throw noRun();
  return run;
}

