/**
 * Users' feedback on traces (`recordFeedback`), in the lab's `lab_feedback` table on either engine:
 * one row per feedback given (trace id, score, comment, time), read back with the traces.
 */
import { ConfigurationError, ValidationError } from "../errors.js";
import { redactString } from "../instrument/redact.js";
import { labFromConfig, type Lab } from "../store/lab-store.js";
import type { TraceFeedback } from "../trace-call.js";
import { labQuery } from "./sql.js";

/** One stored feedback. */
export interface StoredFeedback {
  traceId: string;
  score: number;
  comment: string | null;
  createdAt: string;
}

/** Checks and writes one feedback into the configured lab. */
export async function storeFeedback(traceId: string, feedback: TraceFeedback, lab?: Lab): Promise<void> {
  if (typeof traceId !== "string" || traceId === "" || traceId.includes("\u0000")) {
    throw new ValidationError(`recordFeedback: traceId must be the non-empty traceId of a recorded call; received ${JSON.stringify(traceId) ?? String(traceId)}`, { field: "traceId" });
  }
  if (feedback === null || typeof feedback !== "object" || typeof feedback.score !== "number" || !Number.isFinite(feedback.score)) {
    throw new ValidationError("recordFeedback: feedback must be { score: a finite number, comment?: a string }, e.g. { score: 0, comment: \"wrong amount\" }", { field: "score" });
  }
  if (feedback.comment !== undefined && typeof feedback.comment !== "string") {
    throw new ValidationError("recordFeedback: comment must be a string when given", { field: "comment" });
  }
  const store = lab ?? labFromConfig();
  if (store === null) throw new ConfigurationError("recordFeedback: the lab is off (c.lab = false): there is nowhere to store feedback");
  const comment = feedback.comment === undefined ? null : redactString(feedback.comment).split("\u0000").join("\\u0000");
  await labQuery(store, "INSERT INTO lab_feedback (trace_id, score, comment, created_at) VALUES (?, ?, ?, ?)",
    [traceId, feedback.score, comment, new Date().toISOString()]);
}

/** The feedback given on these traces, oldest first, by trace id. */
export async function feedbackFor(lab: Lab, traceIds: readonly string[]): Promise<Map<string, StoredFeedback[]>> {
  const out = new Map<string, StoredFeedback[]>();
  for (let i = 0; i < traceIds.length; i += 500) {
    const ids = traceIds.slice(i, i + 500);
    const rows = await labQuery<{ trace_id: string; score: number; comment: string | null; created_at: string }>(lab,
      `SELECT trace_id, score, comment, created_at FROM lab_feedback WHERE trace_id IN (${ids.map(() => "?").join(", ")}) ORDER BY created_at`, ids);
    for (const r of rows) {
      const list = out.get(r.trace_id) ?? [];
      list.push({ traceId: r.trace_id, score: Number(r.score), comment: r.comment, createdAt: r.created_at });
      out.set(r.trace_id, list);
    }
  }
  return out;
}
