/**
 * Reading traces back: a duration such as `7d` as milliseconds, and the traces of one module inside
 * a time window (from the runs of kind `traces`, by their UTC day, then each row's start time).
 */
import { ValidationError } from "../errors.js";
import type { Lab } from "../store/lab-store.js";
import type { EvaluationRow } from "../store/records.js";
import { utcDay } from "./lab-sink.js";

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `30d`, `12h`, `90m`, `2w` (or `0d`) as milliseconds; anything else is a `ValidationError` naming `what`. */
export function parseDuration(text: string, what: string): number {
  const match = /^(\d+(?:\.\d+)?)([mhdw])$/.exec(text.trim());
  if (match === null) throw new ValidationError(`${what} expects a duration such as 30d, 12h, 90m or 2w; received ${JSON.stringify(text)}`, { field: what });
  return Number(match[1]) * UNITS[match[2]!]!;
}

/** One stored trace. */
export interface StoredTrace extends EvaluationRow {
  runId: string;
  /** The trace id (the row's example id). */
  traceId: string;
  /** When the call started (ISO 8601). */
  at: string;
}

/** The traces of `module` that started in [from, to) (ms since the epoch), oldest first. */
export async function tracesIn(lab: Lab, module: string, from: number, to: number): Promise<StoredTrace[]> {
  const first = utcDay(from);
  const last = utcDay(Math.max(from, to - 1));
  const runs = (await lab.runs({ kind: "traces" })).filter((r) => {
    const day = String(r.config["day"] ?? "");
    return r.config["module"] === module && day >= first && day <= last;
  });
  const out: StoredTrace[] = [];
  for (const run of runs) {
    for (const row of await lab.rows(run.id)) {
      const at = String((row.details?.["trace"] as { at?: unknown } | undefined)?.at ?? "");
      const ms = Date.parse(at);
      if (row.exampleId !== null && ms >= from && ms < to) out.push({ ...row, runId: run.id, traceId: row.exampleId, at });
    }
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

/** The modules that have traces in `lab` (for messages naming what exists). */
export async function tracedModules(lab: Lab): Promise<string[]> {
  return [...new Set((await lab.runs({ kind: "traces" })).map((r) => String(r.config["module"])))].sort();
}
