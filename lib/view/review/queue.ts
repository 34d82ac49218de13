// The review queue's rows (`typelm view --review`, page /review): the rows of evaluation runs and
// production traces runs, each with its latest review, narrowed by a judge's score and put in order
// (unreviewed first by default), read through the viewer's read-only `ViewSource`.
import { ValidationError } from "../../errors.js";
import type { Annotation } from "../../store/annotations/annotations.js";
import type { RunSummary } from "../../store/records.js";
import type { ViewRow, ViewSource } from "../data/source.js";

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
}

/** One row to review: the stored row and its latest review. */
export interface QueueItem {
  run: RunSummary;
  row: ViewRow;
  /** The id a review names the row by: its example id, else `#<index>`. */
  exampleId: string;
  review: Annotation | undefined;
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
  return { run: given("run"), metric: given("metric"), maxScore, unreviewedFirst: order === "unreviewed" };
}

/** The queue: each picked run's rows (at most `ROWS_PER_RUN`), with their latest reviews, in the query's order. */
export async function reviewQueue(store: ViewSource, query: QueueQuery): Promise<{ runs: RunSummary[]; items: QueueItem[] }> {
  const runs = await pickRuns(store, query.run);
  const items: QueueItem[] = [];
  for (const run of runs) {
    const [{ rows }, reviews] = await Promise.all([
      store.rows(run.id, { limit: ROWS_PER_RUN, offset: 0, sort: "index", metric: query.metric, maxScore: query.maxScore }),
      store.annotations(run.id),
    ]);
    const latest = new Map(reviews.map((a) => [a.exampleId, a]));
    for (const row of rows) {
      const exampleId = row.exampleId ?? `#${row.index}`;
      items.push({ run, row, exampleId, review: latest.get(exampleId) });
    }
  }
  // A stable sort: within the unreviewed and the reviewed, each run's order stays.
  if (query.unreviewedFirst) items.sort((a, b) => Number(a.review !== undefined) - Number(b.review !== undefined));
  return { runs, items };
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
