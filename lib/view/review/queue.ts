// The review queue's rows (`typelm view --review`, page /review): the rows of evaluation runs and
// production traces runs, each with its latest review and users' latest feedback, narrowed by a judge's
// score or by the feedback and put in order (unreviewed first by default), read through the viewer's
// read-only `ViewSource`.
import { ValidationError } from "../../errors.js";
import type { Annotation } from "../../store/annotations/annotations.js";
import type { RunSummary } from "../../store/records.js";
import type { ViewRow, ViewSource } from "../data/source.js";
import { feedbackFilter, feedbackMatches, latestFeedback, type FeedbackFilter, type RowFeedback } from "./feedback.js";

/** Runs whose rows a person reviews: evaluations and production traces. */
export const REVIEWED_KINDS = ["evaluation", "traces"] as const;

/** How the queue is narrowed and ordered (the page's filters, from its query string). */
export interface QueueQuery {
  /** One run's rows (its id or the start of it); else the newest `RUNS` runs'. */
  run?: string;
  /** The metric (a judge) whose score `maxScore` narrows by, and shown first. */
  metric?: string;
  /** Only rows scoring at most this on `metric`. */
  maxScore?: number;
  /** Rows nobody reviewed yet come first (default); false keeps each run's order. */
  unreviewedFirst: boolean;
  /** Only rows whose latest user feedback (`recordFeedback`) is a thumbs-down (score ≤ 0), a thumbs-up (> 0), or any. */
  feedback?: FeedbackFilter;
}

/** One row to review: the stored row and its latest review. */
export interface QueueItem {
  run: RunSummary;
  row: ViewRow;
  /** The id a review names the row by: its example id, else `#<index>`. */
  exampleId: string;
  review: Annotation | undefined;
  /** A user's latest feedback on the row (traces' rows), if any. */
  feedback: RowFeedback | undefined;
}

/** Newest runs the queue takes rows from when no run is picked. */
export const RUNS = 5;
/** Rows read per run. */
export const ROWS_PER_RUN = 200;

/** The queue's query from a page's query string; a value of the wrong form is a `ValidationError` with a sentence. */
export function queueQuery(q: URLSearchParams): QueueQuery {
  const given = (key: string) => {
    const v = q.get(key);
    return v === null || v === "" ? undefined : v;
  };
  const max = given("max");
  const maxScore = max === undefined ? undefined : Number(max);
  if (maxScore !== undefined && !Number.isFinite(maxScore)) throw new ValidationError(`max expects a number (a score, e.g. 0.5); received ${JSON.stringify(max)}`, { field: "max" });
  if (maxScore !== undefined && given("metric") === undefined) throw new ValidationError("max needs a metric: the judge or metric whose score it narrows by (metric=...)", { field: "metric" });
  const order = given("order") ?? "unreviewed";
  if (order !== "unreviewed" && order !== "index") throw new ValidationError(`order expects unreviewed or index; received ${JSON.stringify(order)}`, { field: "order" });
  return { run: given("run"), metric: given("metric"), maxScore, unreviewedFirst: order === "unreviewed", feedback: feedbackFilter(given("feedback")) };
}

/** The queue: each picked run's rows (at most `ROWS_PER_RUN`), with their latest reviews, in the query's order. */
export async function reviewQueue(store: ViewSource, query: QueueQuery): Promise<{ runs: RunSummary[]; items: QueueItem[] }> {
  const runs = await pickRuns(store, query.run);
  const items: QueueItem[] = [];
  for (const run of runs) {
    const [reviews, feedback] = await Promise.all([store.annotations(run.id), store.feedback(run.id).then(latestFeedback)]);
    const latest = new Map(reviews.map((a) => [a.exampleId, a]));
    for (const row of await rowsOf(store, run.id, query, feedback)) {
      const exampleId = row.exampleId ?? `#${row.index}`;
      items.push({ run, row, exampleId, review: latest.get(exampleId), feedback: feedback.get(exampleId) });
    }
  }
  // A stable sort: within the unreviewed and the reviewed, each run's order stays.
  if (query.unreviewedFirst) items.sort((a, b) => Number(a.review !== undefined) - Number(b.review !== undefined));
  return { runs, items };
}

/** A run's rows for the queue: the first `ROWS_PER_RUN`, or with a feedback filter, the first of those whose feedback passes it. */
async function rowsOf(store: ViewSource, runId: string, query: QueueQuery, feedback: Map<string, RowFeedback>): Promise<ViewRow[]> {
  const filter = query.feedback;
  if (filter === undefined) {
    return (await store.rows(runId, { limit: ROWS_PER_RUN, offset: 0, sort: "index", metric: query.metric, maxScore: query.maxScore })).rows;
  }
  // Read by id: the rows with feedback may lie anywhere in a day's traces, past the first ROWS_PER_RUN.
  const ids = [...feedback.values()].filter((f) => feedbackMatches(filter, f)).map((f) => f.exampleId);
  const rows = await store.rowsById(runId, ids);
  const { metric, maxScore } = query;
  const scored = maxScore === undefined || metric === undefined ? rows : rows.filter((r) => typeof r.scores[metric] === "number" && r.scores[metric]! <= maxScore);
  return scored.slice(0, ROWS_PER_RUN);
}

async function pickRuns(store: ViewSource, given: string | undefined): Promise<RunSummary[]> {
  if (given !== undefined) {
    const run = await store.run(given);
    if (run === undefined) throw new ValidationError(`no run whose id is or starts with ${JSON.stringify(given)} in ${store.path}`, { field: "run" });
    if (!(REVIEWED_KINDS as readonly string[]).includes(run.kind)) {
      throw new ValidationError(`run ${run.id} is an ${run.kind} run; the review queue takes evaluation and traces runs`, { field: "run" });
    }
    return [run];
  }
  const found: RunSummary[] = [];
  for (const kind of REVIEWED_KINDS) found.push(...(await store.runs({ kind, limit: RUNS, offset: 0 })).runs);
  return found.sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, RUNS);
}
