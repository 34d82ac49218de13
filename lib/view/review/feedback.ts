// Users' feedback in the review queue: `recordFeedback` writes it into the lab's `lab_feedback` table
// (trace_id = a traces run row's example id). This file holds the SQL both view sources read a run's
// feedback with, the latest feedback per row, and the queue's filter on it (`feedback=negative` for a
// thumbs-down, a latest score of 0 or less, as `typelm traces export` reads it; `positive`; `any`).
import { ValidationError } from "../../errors.js";

/** A user's feedback on one row (the latest one, in the queue). */
export interface RowFeedback {
  /** The row's example id (the trace id). */
  exampleId: string;
  score: number;
  comment: string | null;
  createdAt: string;
}

/** The queue's feedback filter: rows whose latest feedback is a thumbs-down (score ≤ 0), a thumbs-up (> 0), or any. */
export type FeedbackFilter = "negative" | "positive" | "any";

const FILTERS: readonly FeedbackFilter[] = ["negative", "positive", "any"];

/** The SQL of the feedback on one run's rows, oldest first; `param` is the engine's placeholder for the run id. */
export function runFeedbackSql(param: string): string {
  return `SELECT trace_id AS "exampleId", score, comment, created_at AS "createdAt" FROM lab_feedback ` +
    `WHERE trace_id IN (SELECT example_id FROM lab_rows WHERE run_id = ${param} AND example_id IS NOT NULL) ORDER BY created_at`;
}

/** The latest of each row's feedback (`rows` oldest first), by example id. */
export function latestFeedback(rows: readonly RowFeedback[]): Map<string, RowFeedback> {
  const out = new Map<string, RowFeedback>();
  for (const r of rows) out.set(r.exampleId, { ...r, score: Number(r.score) });
  return out;
}

/** The filter named by a query string's `feedback` (undefined when not given); anything else is a `ValidationError`. */
export function feedbackFilter(given: string | undefined): FeedbackFilter | undefined {
  if (given === undefined) return undefined;
  if (!(FILTERS as readonly string[]).includes(given)) {
    throw new ValidationError(`feedback expects negative (a thumbs-down: latest score 0 or less), positive or any; received ${JSON.stringify(given)}`, { field: "feedback" });
  }
  return given as FeedbackFilter;
}

/** Whether a row's latest feedback passes the filter. */
export function feedbackMatches(filter: FeedbackFilter, feedback: RowFeedback | undefined): boolean {
  if (feedback === undefined) return false;
  return filter === "any" || (filter === "negative" ? feedback.score <= 0 : feedback.score > 0);
}
