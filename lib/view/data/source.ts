// What the viewer reads from a lab store, whichever engine holds it: every read returns a promise,
// so a store on a database server (PostgreSQL) is read as the local file is. The implementations are
// queries.ts (the SQLite file) and pg-source.ts (a team's lab on PostgreSQL); both are read-only.
import type { ModelCall } from "../../lm/usage-scope.js";
import type { EvaluationRow, LabRun, RunKind, RunStatus, RunSummary, Trial, ExampleScore } from "../../store/records.js";
import type { LineUpRow } from "../matrix/sql.js";
import type { Annotation } from "../../store/annotations/annotations.js";
import type { RowFeedback } from "../review/feedback.js";
import type { MediaBlob } from "../../store/media/refs.js";

/** How the runs list is narrowed: kind and status exactly, name and model as a part of the text. */
export interface RunQuery {
  kind?: string;
  status?: string;
  name?: string;
  model?: string;
  limit: number;
  offset: number;
}

/** How an evaluation's rows are narrowed, sorted and paged (all on the server, in SQL). */
export interface RowQuery {
  /** Only rows that failed (an error was recorded). */
  failed?: boolean;
  /** Only rows whose expected values include this one (a label), compared as text. */
  label?: string;
  /** Only rows whose inputs, expected values, prediction or error contain this text (case-insensitive). */
  text?: string;
  /** Only rows whose score on `metric` is at most this. */
  maxScore?: number;
  /** The metric `maxScore` and sorting by score use. */
  metric?: string;
  sort?: "index" | "score" | "duration";
  descending?: boolean;
  limit: number;
  offset: number;
  /** Only rows written after this position (`ViewRow.seq`): what a live page has not shown yet. */
  after?: number;
  /** Aborted when the request asking for the rows is gone: its query is stopped. */
  signal?: AbortSignal;
}

/** Milliseconds one query of the viewer may take before it is stopped (`QueryTimeout`); default 20,000. */
export const QUERY_TIMEOUT_MS = 20_000;

/** A query of the viewer ran past its time and was stopped (answered 503). */
export class QueryTimeout extends Error {
  constructor(readonly ms: number) {
    super(`the query took longer than ${ms / 1000} s, the viewer's limit for one query, and was stopped: narrow it (a longer text, a label, the failed rows only) or try again when the machine is less busy`);
  }
}

/** One evaluated example as the viewer lists it: the stored row and its write position. */
export interface ViewRow extends EvaluationRow {
  /** The order the row was written in: a live page asks for the rows after the last it saw. */
  seq: number;
  /**
   * In a page of rows, the values too long to list (more than `LISTED_CHARS` characters), each with
   * its whole length in characters: such a value is a `CutValue` (the error, its start and "…");
   * the example's own page and `/api/runs/<id>/rows/<index>` give it whole.
   */
  truncated?: Record<string, number>;
}

/** Characters of one value (inputs, expected values, prediction, error) a page of rows carries. */
export const LISTED_CHARS = 4096;

/** A value cut in a page of rows: the start of its stored JSON text and its whole length in characters. */
export interface CutValue {
  truncated: true;
  characters: number;
  start: string;
}

/** Whether `value` is a value cut in a page of rows. */
export function isCut(value: unknown): value is CutValue {
  const v = value as Partial<CutValue> | null;
  return typeof v === "object" && v !== null && v.truncated === true && typeof v.start === "string" && typeof v.characters === "number";
}

/** The columns cut in a page of rows: each is read as at most `LISTED_CHARS` characters, with its length as `<column>_len`. */
export const LISTED_COLUMNS = ["inputs_json", "expected_json", "prediction_json", "error"] as const;

/** A column read for a page of rows, in SQL (`left` is the engine's function taking a text's first characters). */
export function listedColumn(column: string, left: (column: string, n: number) => string): string {
  return `CASE WHEN length(${column}) > ${LISTED_CHARS} THEN ${left(column, LISTED_CHARS)} ELSE ${column} END AS ${column}, length(${column}) AS ${column}_len`;
}

/** One stored registry version with what the viewer shows of it. */
export interface ViewVersion {
  name: string;
  version: number;
  createdAt: string;
  score: number | null;
  moduleClass: string;
  metadata: unknown;
  /** Per predictor path: its instruction and demos. */
  predictors: Record<string, { instruction: string; demos: unknown[] }>;
}

/** Each registry name with its number of versions and its latest version's score. */
export interface RegistryName {
  name: string;
  versions: number;
  latest: number;
  score: number | null;
  createdAt: string;
}

/**
 * What `f1_score`'s interval and comparison read of a run's rows, without a row object: each expected
 * field's value and the prediction's value of it, as codes into one table of distinct values (their
 * JSON text), and whether each row failed or has no prediction.
 */
export interface FieldColumns {
  /** The expected fields, in the order the rows first name them. */
  names: string[];
  /** The distinct values, as JSON text; a code is an index into this table. */
  values: string[];
  /** Per field (as `names`), each row's expected value; -1 when the row's expected values lack the field. */
  expected: Int32Array[];
  /** Per field, each row's predicted value; -1 when its prediction lacks the field or it has none. */
  predicted: Int32Array[];
  /** Per row: `NO_PREDICTION` when its prediction is null, `FAILED` when it recorded an error (bits). */
  flags: Uint8Array;
}

export const NO_PREDICTION = 1;
export const FAILED = 2;

/** What `scoreColumns` reads besides the scores. */
export interface ColumnOptions {
  /** The expected and predicted values `f1_score` reads. */
  fields?: boolean;
  /**
   * Another run's ids (the first run of a comparison): while the rows have the same ids in the same
   * order none is kept, and the columns' `ids` is this very array.
   */
  sameIdsAs?: readonly string[];
}

/** A run's rows as a comparison of mean metrics reads them: ids, and per metric the scores, in index order. */
export interface ScoreColumns {
  ids: string[];
  scores: Record<string, Float64Array>;
  /** With `{ fields: true }`: the expected and predicted values `f1_score` reads. */
  fields?: FieldColumns;
}

/**
 * Builds `ScoreColumns` one row at a time (a large run's rows are never all objects at once), into
 * typed arrays that grow as rows come; `expected` and `prediction` only when the fields are asked for.
 */
export class ColumnsBuilder {
  #n = 0;
  #capacity: number;
  #ids: string[] | undefined;
  readonly #scores: Float64Array[];
  readonly #fields: { names: string[]; index: Map<string, number>; values: string[]; codes: Map<string, number>; expected: Int32Array[]; predicted: Int32Array[]; flags: Uint8Array } | undefined;

  /**
   * `sameIdsAs`: another run's ids, which these rows are expected to have in the same order; while
   * they do, no id is kept (`done()` gives that same array).
   */
  constructor(readonly metrics: readonly string[], withFields: boolean, expectedRows = 1024, readonly sameIdsAs?: readonly string[]) {
    this.#ids = sameIdsAs === undefined ? [] : undefined;
    this.#capacity = Math.max(16, expectedRows);
    this.#scores = metrics.map(() => new Float64Array(this.#capacity));
    this.#fields = withFields ? { names: [], index: new Map(), values: [], codes: new Map(), expected: [], predicted: [], flags: new Uint8Array(this.#capacity) } : undefined;
  }

  /** Adds a row: its index, example id, scores (in `metrics` order; a score that is not a number counts 0) and, with fields, its stored values. */
  add(idx: number, exampleId: string | null, scores: readonly unknown[], values?: { expected: unknown; prediction: unknown; error: string | null }): void {
    if (this.#n === this.#capacity) this.#grow();
    const i = this.#n++;
    const id = exampleId ?? `#${idx}`;
    if (this.#ids !== undefined) this.#ids.push(id);
    else if (id !== this.sameIdsAs![i]) this.#ids = [...this.sameIdsAs!.slice(0, i), id];
    for (let m = 0; m < this.#scores.length; m++) this.#scores[m]![i] = typeof scores[m] === "number" ? scores[m] as number : 0;
    const f = this.#fields;
    if (f === undefined || values === undefined) return;
    const expected = (values.expected ?? {}) as Record<string, unknown>;
    // As `inferFields` and `f1_score` read a row: its expected fields, and the prediction's value of each.
    for (const name of Object.keys(expected)) this.#field(name);
    const prediction = values.prediction as Record<string, unknown> | null;
    f.flags[i] = (prediction === null ? NO_PREDICTION : 0) | (values.error !== null ? FAILED : 0);
    for (let k = 0; k < f.names.length; k++) {
      const name = f.names[k]!;
      f.expected[k]![i] = this.#code(expected[name]);
      f.predicted[k]![i] = prediction === null ? -1 : this.#code(prediction[name]);
    }
  }

  #field(name: string): void {
    const f = this.#fields!;
    if (f.index.has(name)) return;
    f.index.set(name, f.names.length);
    f.names.push(name);
    f.expected.push(new Int32Array(this.#capacity).fill(-1));
    f.predicted.push(new Int32Array(this.#capacity).fill(-1));
  }

  #code(value: unknown): number {
    if (value === undefined) return -1;
    const f = this.#fields!;
    const text = JSON.stringify(value);
    let code = f.codes.get(text);
    if (code === undefined) {
      code = f.values.length;
      f.codes.set(text, code);
      f.values.push(text);
    }
    return code;
  }

  #grow(): void {
    this.#capacity *= 2;
    const larger = <T extends Float64Array | Int32Array | Uint8Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(this.#capacity);
      b.set(a);
      return b;
    };
    for (let m = 0; m < this.#scores.length; m++) this.#scores[m] = larger(this.#scores[m]!);
    const f = this.#fields;
    if (f === undefined) return;
    f.flags = larger(f.flags);
    for (let k = 0; k < f.names.length; k++) {
      f.expected[k] = larger(f.expected[k]!).fill(-1, this.#n);
      f.predicted[k] = larger(f.predicted[k]!).fill(-1, this.#n);
    }
  }

  /** The columns, each cut to the rows added. */
  done(): ScoreColumns {
    const n = this.#n;
    const cut = <T extends Float64Array | Int32Array | Uint8Array>(a: T): T => (a.length === n ? a : a.slice(0, n) as T);
    const ids = this.#ids ?? (n === this.sameIdsAs!.length ? this.sameIdsAs as string[] : this.sameIdsAs!.slice(0, n));
    const out: ScoreColumns = { ids, scores: Object.fromEntries(this.metrics.map((m, i) => [m, cut(this.#scores[i]!)])) };
    const f = this.#fields;
    if (f !== undefined) out.fields = { names: f.names, values: f.values, expected: f.expected.map(cut), predicted: f.predicted.map(cut), flags: cut(f.flags) };
    return out;
  }
}

/** The reads the viewer makes of one lab store; nothing here writes to it. */
export interface ViewSource {
  /** The store as pages and messages show it: a file's path, or a database URL without its credentials. */
  readonly path: string;
  close(): Promise<void>;
  /** The runs, newest first, narrowed by `query`, with how many match in all. */
  runs(query: RunQuery): Promise<{ runs: RunSummary[]; total: number }>;
  /** A run's summary (no rows or trials), by its id or the start of it; undefined when none or several match. */
  run(given: string): Promise<(RunSummary & { bestTrial: number | null }) | undefined>;
  /** How many rows a run has recorded, and how many of them failed. */
  rowCounts(runId: string): Promise<{ rows: number; failed: number }>;
  /**
   * For one metric of a run: the rows, the sum of their scores (a missing score counts 0) and how
   * many scores are neither 0 nor 1; a share's interval needs no row in memory.
   */
  scoreCounts(runId: string, metric: string): Promise<{ n: number; sum: number; other: number }>;
  /** One page of a run's rows, narrowed and sorted by `query`, with how many match in all. */
  rows(runId: string, query: RowQuery): Promise<{ rows: ViewRow[]; total: number }>;
  /** The position of the last row written for a run (0 when none): a live page polls for rows after it. */
  lastSeq(runId: string): Promise<number>;
  /** One row of a run by its index, with what its metrics said beyond their scores. */
  row(runId: string, index: number): Promise<ViewRow | undefined>;
  /** One metric's score of every row of a run, in index order (a missing score counts 0). */
  scores(runId: string, metric: string): Promise<Float64Array>;
  /** The model calls recorded with one example, in order; null when the store cannot hold them. */
  calls(runId: string, index: number): Promise<ModelCall[] | null>;
  /** A stored media value (images, audio, documents) by its sha256; undefined when the store has none by it. */
  media(sha256: string): Promise<MediaBlob | undefined>;
  /** The values the rows' expected fields take (suggestions for the label filter), the most frequent first. */
  labels(runId: string, limit?: number): Promise<string[]>;
  /** A whole run with its rows or trials (for the metrics' intervals and comparisons). */
  fullRun(runId: string): Promise<LabRun | undefined>;
  /** A run's rows with only what a comparison of mean metrics reads (index, id, scores, error), by index. */
  scoreRows(runId: string): Promise<EvaluationRow[]>;
  /**
   * What a comparison or an interval reads of a run, without a row object: each row's pairing id (its
   * example id, else `#<index>`) and each of `metrics`' scores (a missing score as 0), in index order;
   * with `fields`, also the expected and predicted values `f1_score` reads.
   */
  scoreColumns(runId: string, metrics: readonly string[], options?: ColumnOptions): Promise<ScoreColumns>;
  /** The rows of a run with these ids (`#<index>` for a row without one). */
  rowsById(runId: string, ids: readonly string[]): Promise<ViewRow[]>;
  /** The rows of a run at these indices, in index order. */
  rowsByIndex(runId: string, indices: readonly number[]): Promise<ViewRow[]>;
  /**
   * Several runs' rows grouped by example id in the first run's order, with whether their scores on
   * `metrics` differ (a matrix's line-up, matrix/sql.ts); a slow read, stopped when `signal` is aborted.
   */
  lineUp(runIds: readonly string[], metrics: readonly string[], signal?: AbortSignal): Promise<LineUpRow[]>;
  /** The trials of an optimization, by index. */
  trials(runId: string): Promise<Trial[]>;
  registryNames(): Promise<RegistryName[]>;
  /** People's reviews of a run's rows, oldest first: the latest per row, or every one with `all` ([] for a store without reviews). */
  annotations(runId: string, all?: boolean): Promise<Annotation[]>;
  /** Users' feedback on a run's rows (`recordFeedback`, the lab_feedback table), oldest first ([] for a store without it). */
  feedback(runId: string): Promise<RowFeedback[]>;
  /** Every stored version of `name`, oldest first. */
  versions(name: string): Promise<ViewVersion[]>;
}

// ---- the stored columns, as both engines return them -------------------------------------------

export interface RunRaw {
  id: string; kind: RunKind; name: string; status: RunStatus; started_at: string; ended_at: string | null;
  score: number | null; config_json: string; summary_json: string; error: string | null; best_trial: number | null;
}
export interface RowRaw {
  seq: number | string; idx: number; example_id: string | null; inputs_json: string; expected_json: string; prediction_json: string | null;
  scores_json: string; error: string | null; duration_ms: number; input_tokens: number; output_tokens: number; cost: number;
  /** Read for a page of rows (`listedColumn`): each cut column's whole length. */
  inputs_json_len?: number | string | null; expected_json_len?: number | string | null; prediction_json_len?: number | string | null; error_len?: number | string | null;
}
export interface TrialRaw {
  idx: number; kind: string; parents_json: string; choices_json: string; instructions_json: string; demo_ids_json: string;
  score: number | null; example_scores_json: string | null; budget_spent: number; lm_calls: number; input_tokens: number;
  output_tokens: number; cost: number; duration_ms: number; error: string | null; data_json: string; reused: number | null;
}
export interface VersionRaw {
  name: string; version: number; created_at: string; score: number | null; metadata_json: string; state_json: string; module_class: string;
}

/** The inputs and expected values of a row read for its scores only: one shared empty object. */
export const NONE: Record<string, unknown> = Object.freeze({});

export function onlyOne<T>(found: T[]): T | undefined {
  return found.length === 1 ? found[0] : undefined;
}

/** Stored JSON; text that does not parse (changed outside typelm) reads as `fallback` rather than hiding the page. */
export function parse<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export function summary(raw: RunRaw): RunSummary {
  return {
    id: raw.id, kind: raw.kind, name: raw.name, status: raw.status, startedAt: raw.started_at, endedAt: raw.ended_at,
    score: raw.score, config: parse(raw.config_json, {}), summary: parse(raw.summary_json, {}), error: raw.error,
  };
}

export function row(r: RowRaw): ViewRow {
  const cut: Record<string, number> = {};
  const long = (field: string, length: number | string | null | undefined): number | undefined => {
    const n = length == null ? undefined : Number(length);
    if (n === undefined || n <= LISTED_CHARS) return undefined;
    cut[field] = n;
    return n;
  };
  const json = <T>(field: string, text: string, length: number | string | null | undefined, fallback: T): T | CutValue => {
    const n = long(field, length);
    return n === undefined ? parse(text, fallback) : { truncated: true, characters: n, start: text };
  };
  const errorLength = long("error", r.error_len);
  const shown: ViewRow = {
    seq: Number(r.seq), index: r.idx, exampleId: r.example_id,
    inputs: json("inputs", r.inputs_json, r.inputs_json_len, {}) as Record<string, unknown>,
    expected: json("expected", r.expected_json, r.expected_json_len, {}) as Record<string, unknown>,
    prediction: r.prediction_json === null ? null : json("prediction", r.prediction_json, r.prediction_json_len, {}) as Record<string, unknown>,
    scores: parse(r.scores_json, {}),
    error: r.error === null || errorLength === undefined ? r.error : `${r.error}…`,
    durationMs: r.duration_ms, inputTokens: r.input_tokens, outputTokens: r.output_tokens, cost: r.cost,
  };
  if (Object.keys(cut).length > 0) shown.truncated = cut;
  return shown;
}

export function scoreRow(r: { idx: number; example_id: string | null; scores_json: string; error: string | null }): EvaluationRow {
  return {
    index: r.idx, exampleId: r.example_id, inputs: NONE, expected: NONE, prediction: null, scores: parse(r.scores_json, {}), error: r.error,
    durationMs: 0, inputTokens: 0, outputTokens: 0, cost: 0,
  };
}

export function trial(t: TrialRaw): Trial {
  return {
    index: t.idx, kind: t.kind, parents: parse(t.parents_json, []), choices: parse(t.choices_json, {}),
    instructions: parse(t.instructions_json, {}), demoIds: parse(t.demo_ids_json, {}), score: t.score,
    exampleScores: t.example_scores_json === null ? null : parse<ExampleScore[]>(t.example_scores_json, []),
    budgetSpent: t.budget_spent, lmCalls: t.lm_calls, inputTokens: t.input_tokens, outputTokens: t.output_tokens, cost: t.cost,
    durationMs: t.duration_ms, error: t.error, data: parse(t.data_json, {}), reused: t.reused ?? 0,
  };
}

export function version(v: VersionRaw): ViewVersion {
  const state = parse<{ predictors?: Record<string, { instruction?: unknown; demos?: unknown }> }>(v.state_json, {});
  const predictors: ViewVersion["predictors"] = {};
  for (const [path, p] of Object.entries(state.predictors ?? {})) {
    predictors[path] = { instruction: typeof p?.instruction === "string" ? p.instruction : "", demos: Array.isArray(p?.demos) ? p.demos : [] };
  }
  return {
    name: v.name, version: v.version, createdAt: v.created_at, score: v.score, moduleClass: v.module_class,
    metadata: parse(v.metadata_json, {}), predictors,
  };
}
