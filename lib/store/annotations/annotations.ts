/**
 * People's reviews of a run's rows, kept in the lab's `annotations` table (schema.ts) on either engine:
 * `addAnnotation` checks one review (the run and the row exist, the verdict is "pass", "fail" or a
 * number) and writes it; `listAnnotations` reads a run's, the latest per row by default. The viewer's
 * review queue writes through here, and `calibrate(judge, { annotations })` reads them back.
 */
import { ValidationError } from "../../errors.js";
import { isPlainObject } from "../../plain-object.js";
import type { Lab } from "../lab-store.js";
import { openStoreSync } from "../db.js";

/** A review's verdict: pass, fail, or a score on the judge's scale. */
export type Verdict = "pass" | "fail" | number;

/** What `addAnnotation` takes: the row, the verdict, and optionally a corrected expected output and a note. */
export interface NewAnnotation {
  runId: string;
  /** The row's example id; `#<index>` for a row recorded without one. */
  exampleId: string;
  verdict: Verdict;
  /** The corrected expected output (an object); omitted when the row's expected output stands. */
  expected?: Record<string, unknown>;
  note?: string;
  /** Who reviewed. */
  reviewer: string;
}

/** One stored review of a row. */
export interface Annotation {
  /** The order annotations were written in (the highest of a row is its latest). */
  id: number;
  runId: string;
  exampleId: string;
  verdict: Verdict;
  /** The corrected expected output, or null when the reviewer kept the row's. */
  expected: Record<string, unknown> | null;
  note: string | null;
  reviewer: string;
  /** ISO 8601. */
  createdAt: string;
}

/** An annotation's stored columns, as both engines return them. */
export interface AnnotationRaw {
  id: number | string; run_id: string; example_id: string; verdict: string; expected_json: string | null;
  note: string | null; reviewer: string; created_at: string;
}

/** Longest note kept, in characters. */
export const MAX_NOTE = 10_000;

/** The SQL that reads a run's annotations (oldest first), every one or only the latest per row; `$1`/`?` is the run id. */
export function annotationsSql(latest: boolean, placeholder: string): string {
  const columns = "id, run_id, example_id, verdict, expected_json, note, reviewer, created_at";
  return latest
    ? `SELECT ${columns} FROM annotations a WHERE run_id = ${placeholder} AND id = (SELECT max(id) FROM annotations b WHERE b.run_id = a.run_id AND b.example_id = a.example_id) ORDER BY id`
    : `SELECT ${columns} FROM annotations WHERE run_id = ${placeholder} ORDER BY id`;
}

/** A stored annotation as its object; a verdict stored as a number's text reads as that number. */
export function annotationFrom(r: AnnotationRaw): Annotation {
  let expected: Record<string, unknown> | null = null;
  if (r.expected_json !== null) {
    try {
      const parsed: unknown = JSON.parse(r.expected_json);
      expected = isPlainObject(parsed) ? parsed : null;
    } catch {
      expected = null;
    }
  }
  const verdict: Verdict = r.verdict === "pass" || r.verdict === "fail" ? r.verdict : Number(r.verdict);
  return { id: Number(r.id), runId: r.run_id, exampleId: r.example_id, verdict, expected, note: r.note, reviewer: r.reviewer, createdAt: r.created_at };
}

/**
 * The problem with a review as given (a sentence naming the field), or undefined when it fits:
 * `runId` and `exampleId` non-empty text, `verdict` "pass", "fail" or a finite number, `expected` an
 * object, `note` text of at most `MAX_NOTE` characters, and no other field.
 */
export function annotationProblem(body: unknown, extra: readonly string[] = []): string | undefined {
  if (!isPlainObject(body)) return "the body must be a JSON object { runId, exampleId, verdict, expected?, note? }";
  const known = new Set(["runId", "exampleId", "verdict", "expected", "note", ...extra]);
  const unknown = Object.keys(body).filter((k) => !known.has(k));
  if (unknown.length > 0) return `unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}: a review has runId, exampleId, verdict, expected and note`;
  for (const key of ["runId", "exampleId"] as const) {
    if (typeof body[key] !== "string" || body[key] === "") return `${key} must be a non-empty string; received ${JSON.stringify(body[key]) ?? "nothing"}`;
    if ((body[key] as string).includes("\u0000")) return `${key} must not hold a NUL character`;
  }
  const v = body["verdict"];
  if (!(v === "pass" || v === "fail" || (typeof v === "number" && Number.isFinite(v)))) {
    return `verdict must be "pass", "fail" or a number on the judge's scale; received ${JSON.stringify(v) ?? "nothing"}`;
  }
  if (body["expected"] !== undefined && !isPlainObject(body["expected"])) return "expected, when given, must be an object: the corrected expected output, field by field";
  const note = body["note"];
  if (note !== undefined && typeof note !== "string") return `note, when given, must be a string; received ${JSON.stringify(note)}`;
  if (typeof note === "string" && note.length > MAX_NOTE) return `note is ${note.length} characters long; at most ${MAX_NOTE} are kept`;
  if (typeof note === "string" && note.includes("\u0000")) return "note must not hold a NUL character";
  return undefined;
}

/** The stored columns of a checked review. */
function columns(a: NewAnnotation): unknown[] {
  return [
    a.runId, a.exampleId, typeof a.verdict === "number" ? String(a.verdict) : a.verdict,
    a.expected === undefined ? null : JSON.stringify(a.expected), a.note === undefined || a.note === "" ? null : a.note, a.reviewer, new Date().toISOString(),
  ];
}

/**
 * Checks a review and writes it to `lab`'s annotations; returns it as stored. A review that does not
 * fit, of a run the lab does not hold or of a row the run does not have, is a `ValidationError` with
 * a sentence, and nothing is written.
 */
export async function addAnnotation(lab: Lab, review: NewAnnotation): Promise<Annotation> {
  const problem = annotationProblem({ ...review, reviewer: undefined }, ["reviewer"]);
  if (problem !== undefined) throw new ValidationError(`addAnnotation: ${problem}`, { field: "annotation" });
  const index = /^#(\d+)$/.exec(review.exampleId)?.[1];
  const rowSql = (p: (n: number) => string) =>
    `SELECT (SELECT count(*) FROM lab_runs WHERE id = ${p(1)}) AS runs, (SELECT count(*) FROM lab_rows WHERE run_id = ${p(1)} AND ` +
    `(example_id = ${p(2)}${index === undefined ? "" : ` OR (example_id IS NULL AND idx = ${p(3)})`})) AS rows`;
  const params = index === undefined ? [review.runId, review.exampleId] : [review.runId, review.exampleId, Number(index)];
  const values = columns(review);
  const insert = (p: (n: number) => string) =>
    `INSERT INTO annotations (run_id, example_id, verdict, expected_json, note, reviewer, created_at) VALUES (${values.map((_, i) => p(i + 1)).join(", ")})`;
  let found: { runs: number | string; rows: number | string };
  let id: number;
  if (lab.engine === "sqlite") {
    const db = await sqliteOf(lab);
    found = db.prepare(rowSql((n) => `@p${n}`)).get(Object.fromEntries(params.map((v, i) => [`p${i + 1}`, v]))) as typeof found;
    check(lab, review, found);
    id = Number(db.prepare(insert(() => "?")).run(...values).lastInsertRowid);
  } else {
    await lab.flush();
    const { postgresPool } = await import("../pg.js");
    const { pool, ready } = postgresPool(lab.url);
    await ready;
    found = (await pool.query(rowSql((n) => `$${n}`), params)).rows[0] as typeof found;
    check(lab, review, found);
    id = Number((await pool.query(`${insert((n) => `$${n}`)} RETURNING id`, values)).rows[0].id);
  }
  return annotationFrom({
    id, run_id: review.runId, example_id: review.exampleId, verdict: values[2] as string, expected_json: values[3] as string | null,
    note: values[4] as string | null, reviewer: review.reviewer, created_at: values[6] as string,
  });
}

function check(lab: Lab, review: NewAnnotation, found: { runs: number | string; rows: number | string }): void {
  if (Number(found.runs) === 0) throw new ValidationError(`no run ${JSON.stringify(review.runId)} in ${lab.path}`, { field: "runId" });
  if (Number(found.rows) === 0) throw new ValidationError(`run ${review.runId} has no row whose example id is ${JSON.stringify(review.exampleId)}`, { field: "exampleId" });
}

/** A run's annotations, oldest first: the latest of each row (default), or with `{ all: true }` every one. */
export async function listAnnotations(lab: Lab, runId: string, options: { all?: boolean } = {}): Promise<Annotation[]> {
  const latest = options.all !== true;
  if (lab.engine === "sqlite") {
    const db = await sqliteOf(lab);
    return (db.prepare(annotationsSql(latest, "?")).all(runId) as AnnotationRaw[]).map(annotationFrom);
  }
  await lab.flush();
  const { postgresPool } = await import("../pg.js");
  const { pool, ready } = postgresPool(lab.url);
  await ready;
  return ((await pool.query(annotationsSql(latest, "$1"), [runId])).rows as AnnotationRaw[]).map(annotationFrom);
}

/** The connection of a lab store file (shared with the `LabStore` on it; migrated when opened). */
async function sqliteOf(lab: Lab & { engine: "sqlite" }) {
  if (lab.path === ":memory:") throw new ValidationError("annotations need a lab store file or a PostgreSQL lab; an in-memory store keeps no reviews", { field: "lab" });
  return openStoreSync(lab.path);
}
