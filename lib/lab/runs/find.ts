// A stored run found by its id, or by the start of its id, in the lab store's file; a clear error
// naming what was given when there is none or the start is ambiguous.
import { ConfigurationError, ValidationError } from "../../errors.js";
import { openStoreSync, storeError } from "../../store/db.js";
import type { LabStore } from "../../store/lab-store.js";
import type { LabRun } from "../../store/records.js";
import { printable } from "../terminal.js";

/**
 * A run by its id or by the start of it (the first 8 characters are enough when no other run's id
 * begins with them), or a ValidationError naming what was given: no such run, or the runs the start
 * of an id could mean.
 */
export function runById(store: LabStore, given: string): LabRun {
  const id = fullRunId(store, given);
  let run: LabRun | undefined;
  try {
    run = store.run(id);
  } catch (error) {
    // A row whose stored JSON was damaged (by hand, a disk fault): say which run, not a parser's trace.
    if (!(error instanceof SyntaxError)) throw error;
    throw new ConfigurationError(`run "${printable(id)}" in ${store.path} is damaged (its stored JSON does not parse: ${error.message}); "typelm runs" lists it as unreadable`);
  }
  if (run === undefined) throw noRun(store, given);
  return run;
}

/** How many candidates an ambiguous id prefix lists. */
const CANDIDATES = 10;

function fullRunId(store: LabStore, given: string): string {
  if (given === "") throw new ValidationError(`a run id is empty; "typelm runs" lists the runs and their ids`, { field: "run" });
  let matches: { id: string; kind: string; name: string; started_at: string }[];
  try {
    matches = openStoreSync(store.path)
      .prepare<[number, string], { id: string; kind: string; name: string; started_at: string }>(
        `SELECT id, kind, name, started_at FROM lab_runs WHERE substr(id, 1, ?) = ? ORDER BY started_at DESC, seq DESC LIMIT ${CANDIDATES + 1}`,
      )
      .all(given.length, given);
  } catch (error) {
    throw storeError(store.path, "read", error);
  }
  const exact = matches.find((m) => m.id === given);
  if (exact !== undefined || matches.length === 1) return (exact ?? matches[0]!).id;
  if (matches.length === 0) throw noRun(store, given);
  const listed = matches.slice(0, CANDIDATES).map((m) => `${printable(m.id)} (${m.kind} "${printable(m.name)}", ${m.started_at})`);
  throw new ValidationError(
    `run id "${printable(given)}" is the start of ${matches.length > CANDIDATES ? `more than ${CANDIDATES}` : matches.length} runs' ids in ${store.path}: ` +
      `${listed.join("; ")}${matches.length > CANDIDATES ? "; ..." : ""}; give more of the id`,
    { field: "run" },
  );
}

function noRun(store: LabStore, given: string): ValidationError {
  return new ValidationError(`no run whose id is or starts with "${printable(given)}" in ${store.path}; "typelm runs" lists the runs and their ids`, { field: "run" });
}
