/**
 * The people's side of `typelm lab copy`: the review queue's `annotations` and users' `lab_feedback`
 * (recordFeedback), copied in either direction after the runs. Neither table has a key both labs share
 * (an annotation's id is the destination's own), so a record is the same when every column but the id
 * is: copying again adds nothing. Annotations are added oldest first, so a row's latest review stays
 * its latest; a review older than the destination's latest review of the same row is left out (added,
 * it would count as that row's latest there).
 */
import type { Database } from "better-sqlite3";

/** One review as both engines store it (without its id). */
interface AnnotationRecord {
  run_id: string;
  example_id: string;
  verdict: string;
  expected_json: string | null;
  note: string | null;
  reviewer: string;
  created_at: string;
}

/** One user's feedback on a trace. */
interface FeedbackRecord {
  trace_id: string;
  score: number;
  comment: string | null;
  created_at: string;
}

/** What one side of a copy reads and writes. */
export interface ReviewTables {
  annotations(): Promise<AnnotationRecord[]>;
  feedback(): Promise<FeedbackRecord[]>;
  add(annotations: AnnotationRecord[], feedback: FeedbackRecord[]): Promise<void>;
}

const ANNOTATION_COLUMNS = ["run_id", "example_id", "verdict", "expected_json", "note", "reviewer", "created_at"] as const;
const FEEDBACK_COLUMNS = ["trace_id", "score", "comment", "created_at"] as const;
const ANNOTATIONS_SQL = `SELECT ${ANNOTATION_COLUMNS.join(", ")} FROM annotations ORDER BY created_at, id`;
const FEEDBACK_SQL = `SELECT ${FEEDBACK_COLUMNS.join(", ")} FROM lab_feedback ORDER BY created_at`;

/** The tables of a lab store file. */
export function fileReviewTables(db: Database): ReviewTables {
  return {
    annotations: async () => db.prepare(ANNOTATIONS_SQL).all() as AnnotationRecord[],
    feedback: async () => db.prepare(FEEDBACK_SQL).all() as FeedbackRecord[],
    add: async (annotations, feedback) => {
      const a = db.prepare(`INSERT INTO annotations (${ANNOTATION_COLUMNS.join(", ")}) VALUES (${ANNOTATION_COLUMNS.map(() => "?").join(", ")})`);
      const f = db.prepare(`INSERT INTO lab_feedback (${FEEDBACK_COLUMNS.join(", ")}) VALUES (${FEEDBACK_COLUMNS.map(() => "?").join(", ")})`);
      db.transaction(() => {
        for (const r of annotations) a.run(...ANNOTATION_COLUMNS.map((c) => r[c]));
        for (const r of feedback) f.run(...FEEDBACK_COLUMNS.map((c) => r[c]));
      }).immediate();
    },
  };
}

/** The tables of a team's lab, through `query`: one client's when it is written to (its transaction needs one connection), a pool's to read. */
export function teamReviewTables(query: (sql: string, params?: unknown[]) => Promise<{ rows: unknown[] }>): ReviewTables {
  return {
    annotations: async () => (await query(ANNOTATIONS_SQL)).rows as AnnotationRecord[],
    feedback: async () => ((await query(FEEDBACK_SQL)).rows as FeedbackRecord[]).map((r) => ({ ...r, score: Number(r.score) })),
    add: async (annotations, feedback) => {
      await query("BEGIN");
      try {
        for (const r of annotations) {
          await query(`INSERT INTO annotations (${ANNOTATION_COLUMNS.join(", ")}) VALUES (${ANNOTATION_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`, ANNOTATION_COLUMNS.map((c) => r[c]));
        }
        for (const r of feedback) {
          await query(`INSERT INTO lab_feedback (${FEEDBACK_COLUMNS.join(", ")}) VALUES (${FEEDBACK_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`, FEEDBACK_COLUMNS.map((c) => r[c]));
        }
        await query("COMMIT");
      } catch (error) {
        await query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    },
  };
}

/** Copies what `to` lacks of `from`'s annotations and feedback; returns how many of each were added. */
export async function copyReviews(from: ReviewTables, to: ReviewTables): Promise<{ annotations: number; feedback: number }> {
  const annotationKey = (r: AnnotationRecord) => JSON.stringify(ANNOTATION_COLUMNS.map((c) => r[c]));
  const feedbackKey = (r: FeedbackRecord) => JSON.stringify(FEEDBACK_COLUMNS.map((c) => (c === "score" ? Number(r[c]) : r[c])));
  const there = await to.annotations();
  const known = new Set(there.map(annotationKey));
  const latest = new Map<string, string>();
  const rowOf = (r: AnnotationRecord) => JSON.stringify([r.run_id, r.example_id]);
  for (const r of there) if ((latest.get(rowOf(r)) ?? "") < r.created_at) latest.set(rowOf(r), r.created_at);
  const annotations: AnnotationRecord[] = [];
  for (const r of await from.annotations()) {
    if (known.has(annotationKey(r)) || (latest.get(rowOf(r)) ?? "") > r.created_at) continue;
    known.add(annotationKey(r));
    latest.set(rowOf(r), r.created_at);
    annotations.push(r);
  }
  const feedbackThere = new Set((await to.feedback()).map(feedbackKey));
  const feedback: FeedbackRecord[] = [];
  for (const r of await from.feedback()) {
    if (feedbackThere.has(feedbackKey(r))) continue;
    feedbackThere.add(feedbackKey(r));
    feedback.push({ ...r, score: Number(r.score) });
  }
  if (annotations.length > 0 || feedback.length > 0) await to.add(annotations, feedback);
  return { annotations: annotations.length, feedback: feedback.length };
}
