/**
 * Retention (`typelm traces prune --older-than 30d`): deletes the traces that started before a cutoff,
 * with their feedback, on either engine. A day's run older than the cutoff goes whole (its rows go
 * with it); in the day the cutoff falls in, rows are deleted by index, which never runs ahead of a
 * row's start time (lab-sink.ts), so no newer trace is deleted.
 */
import type { Lab } from "../store/lab-store.js";
import { utcDay } from "./lab-sink.js";
import { labQuery } from "./sql.js";

/** What a prune deleted. */
export interface PruneResult {
  runs: number;
  traces: number;
}

/** Deletes the traces of every module that started before `cutoff` (ms since the epoch). */
export async function pruneTraces(lab: Lab, cutoff: number): Promise<PruneResult> {
  const cutDay = utcDay(cutoff);
  const slot = (cutoff - Date.parse(`${cutDay}T00:00:00Z`)) * 20;
  const result: PruneResult = { runs: 0, traces: 0 };
  for (const run of await lab.runs({ kind: "traces" })) {
    const day = String(run.config["day"] ?? "");
    if (day > cutDay) continue;
    const whole = day < cutDay;
    const limit = whole ? 2_147_483_647 : slot;
    const [count] = await labQuery<{ n: number | string }>(lab, "SELECT count(*) AS n FROM lab_rows WHERE run_id = ? AND idx < ?", [run.id, limit]);
    await labQuery(lab, "DELETE FROM lab_feedback WHERE trace_id IN (SELECT example_id FROM lab_rows WHERE run_id = ? AND idx < ?)", [run.id, limit]);
    result.traces += Number(count?.n ?? 0);
    if (whole) {
      await labQuery(lab, "DELETE FROM lab_rows WHERE run_id = ?", [run.id]);
      await labQuery(lab, "DELETE FROM lab_runs WHERE id = ?", [run.id]);
      result.runs++;
    } else {
      await labQuery(lab, "DELETE FROM lab_rows WHERE run_id = ? AND idx < ?", [run.id, limit]);
    }
  }
  return result;
}
