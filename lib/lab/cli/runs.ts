// `typelm runs`: the runs of a lab store, newest first, one line each, for either engine (a run whose
// stored JSON does not parse is listed and marked unreadable); and the "lab store:" line runs, show and
// compare print first.
import { runTitle } from "../../evaluate/stored-run.js";
import { openStoreSync, storeError } from "../../store/db.js";
import type { RunKind } from "../../store/records.js";
import type { RunLine } from "../runs/team-store.js";
import { printable } from "../terminal.js";

/**
 * The runs, newest first, one line each. Read from the table directly rather than through
 * `LabStore.runs`, which parses every run's config and summary: one damaged row would hide them all,
 * where here it is listed and marked unreadable.
 */
export function runsTable(path: string, kind: RunKind | undefined, limit: number | undefined): string {
  const sql = `SELECT id, kind, name, status, started_at, score, config_json, summary_json FROM lab_runs${kind ? " WHERE kind = @kind" : ""} ` +
    `ORDER BY started_at DESC, seq DESC${limit !== undefined ? " LIMIT @limit" : ""}`;
  let runs: RunLine[];
  try {
    runs = openStoreSync(path).prepare<[Record<string, unknown>], RunLine>(sql).all({ ...(kind ? { kind } : {}), ...(limit !== undefined ? { limit } : {}) });
  } catch (error) {
    throw storeError(path, "read", error);
  }
  return runsLines(path, runs);
}

/** The runs as `typelm runs` prints them, for either engine (`label`: the file or the database). */
export function runsLines(path: string, runs: RunLine[]): string {
  if (runs.length === 0) return `No runs in ${printable(path)}.\n`;
  const rows = runs.map((r) => {
    const unreadable = (["config", "summary"] as const).filter((part) => !parses(r[`${part}_json`]));
    const status = unreadable.length === 0 ? r.status : `${r.status} (${unreadable.join(" and ")} unreadable)`;
    return [r.id, r.kind, runTitle(r.name, r.kind, configOf(r.config_json)), status, r.started_at, r.score === null ? "" : r.score.toFixed(3)].map(printable);
  });
  const header = ["id", "kind", "name", "status", "started", "score"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return storeLine(path) + [line(header), ...rows.map(line)].join("\n") + "\n";
}

/** The first line runs, show and compare print: the store they read (a notebook or script may use another). */
export function storeLine(path: string): string {
  return `lab store: ${printable(path)}\n`;
}

/** A run's stored config, or {} when it does not parse (the run is then marked unreadable). */
function configOf(json: string): Record<string, unknown> {
  try {
    const config = JSON.parse(json) as unknown;
    return config !== null && typeof config === "object" ? config as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

function parses(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}
