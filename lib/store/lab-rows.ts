/**
 * The lab's records as both engines store them, the SQLite file (lab-store.ts) and PostgreSQL
 * (pg-lab-store.ts, pg-lab-engine.ts): what the writers take and how it is checked, the columns a run,
 * an example, a trial and a batch are written as (JSON with registered keys masked), and the records
 * read back from those columns.
 */
import { preview, ValidationError } from "../errors.js";
import { isPlainObject } from "../plain-object.js";
import { redactedJson, redactError } from "../instrument/redact.js";
import { withMediaRefs, type KeepMedia } from "./media/refs.js";
import type {
  EvaluationRow, ExampleScore, RunKind, RunStatus, RunSummary, Trial,
} from "./records.js";

const RUN_KINDS: readonly RunKind[] = ["evaluation", "optimization", "traces"];
const RUN_STATUSES: readonly RunStatus[] = ["running", "completed", "failed", "stopped"];

/** Which runs `lab.runs()` lists; every field narrows the list. */
export interface RunFilter {
  kind?: RunKind;
  name?: string;
  status?: RunStatus;
  /** At most this many runs (the newest). */
  limit?: number;
}

/** What `lab.startRun` takes: the run's kind, name and the options it was started with. */
export interface StartRun {
  kind: RunKind;
  name: string;
  /** JSON-ready options the run was started with. */
  config?: Record<string, unknown>;
}

/** What `lab.finishRun` takes: the final status, score, summary, error and (for optimizations) the best trial. */
export interface FinishRun {
  status: Exclude<RunStatus, "running">;
  score?: number | null;
  summary?: Record<string, unknown>;
  error?: string | null;
  /** The index of the trial whose configuration was returned (optimizations). */
  bestTrial?: number | null;
}

/** A provider batch a run submitted (`lab_batches`). */
export interface RunBatch {
  batchId: string;
  provider: string;
  model: string;
  /** The server as messages show it (no credentials). */
  endpoint: string;
  round: number;
  /** The request keys the batch holds. */
  customIds: string[];
  status: "submitted" | "completed" | "failed";
  createdAt: string;
}

export interface BatchRaw {
  batch_id: string; provider: string; model: string; endpoint: string; round: number; custom_ids_json: string;
  status: RunBatch["status"]; created_at: string;
}

export interface RunRaw {
  id: string; kind: RunKind; name: string; status: RunStatus; started_at: string; ended_at: string | null;
  score: number | null; config_json: string; summary_json: string; error: string | null; best_trial: number | null;
}
export interface RowRaw {
  idx: number; example_id: string | null; inputs_json: string; expected_json: string; prediction_json: string | null;
  scores_json: string; error: string | null; duration_ms: number; input_tokens: number; output_tokens: number; cost: number;
  details_json?: string | null;
}
export interface TrialRaw {
  idx: number; kind: string; parents_json: string; choices_json: string; instructions_json: string; demo_ids_json: string;
  score: number | null; example_scores_json: string | null; budget_spent: number; lm_calls: number; input_tokens: number;
  output_tokens: number; cost: number; duration_ms: number; error: string | null; data_json: string; reused: number;
}

export function unknownRun(path: string, runId: string): ValidationError {
  return new ValidationError(
    `Unknown run id ${JSON.stringify(runId)} in the lab store at ${path}: start the run with lab.startRun(...) first (lab.runs() lists the known ones)`,
    { field: "runId" },
  );
}

/** Checks what `startRun` takes and returns the config as stored; a bad kind, name or config is a `ValidationError`. */
export function checkStartRun(run: StartRun, where: string): string {
  if (!RUN_KINDS.includes(run.kind)) {
    throw new ValidationError(`${where}: kind must be "evaluation", "optimization" or "traces"; received ${shown(run.kind)}`, { field: "kind" });
  }
  if (typeof run.name !== "string") {
    throw new ValidationError(`${where}: name must be a string (the run's name in lab.runs()); received ${shown(run.name)}`, { field: "name" });
  }
  const config = run.config ?? {};
  if (!isPlainObject(config)) {
    throw new ValidationError(
      `${where}: config must be an object of the run's options; received ${Array.isArray(config) ? "an array" : typeof config}`,
      { field: "config" },
    );
  }
  return json(config, where, "config");
}

/** The `lab_rows` columns of one evaluated example, as both engines store them: each media value as its reference, given to `keep`. */
export function rowParams(runId: string, row: EvaluationRow, keep: KeepMedia = () => undefined): Record<string, unknown> {
  return {
    run_id: runId, idx: row.index, example_id: row.exampleId, inputs_json: json(withMediaRefs(row.inputs, keep), EXAMPLE, "inputs"),
    expected_json: json(withMediaRefs(row.expected, keep), EXAMPLE, "expected"),
    prediction_json: row.prediction === null ? null : json(withMediaRefs(row.prediction, keep), EXAMPLE, "prediction"),
    scores_json: json(row.scores, EXAMPLE, "scores"), error: text(row.error), duration_ms: row.durationMs, input_tokens: row.inputTokens,
    output_tokens: row.outputTokens, cost: row.cost,
    details_json: row.details === undefined ? null : json(row.details, EXAMPLE, "details"),
  };
}

/** The `lab_trials` columns of one trial, as both engines store them (media in its data as references, given to `keep`). */
export function trialParams(runId: string, trial: Trial, keep: KeepMedia = () => undefined): Record<string, unknown> {
  return {
    run_id: runId, idx: trial.index, kind: trial.kind, parents_json: json(trial.parents, TRIAL, "parents"),
    choices_json: json(trial.choices, TRIAL, "choices"), instructions_json: json(trial.instructions, TRIAL, "instructions"),
    demo_ids_json: json(trial.demoIds, TRIAL, "demoIds"), score: finiteOrNull(trial.score),
    example_scores_json: trial.exampleScores === null ? null : json(trial.exampleScores, TRIAL, "exampleScores"),
    budget_spent: trial.budgetSpent, lm_calls: trial.lmCalls, input_tokens: trial.inputTokens,
    output_tokens: trial.outputTokens, cost: trial.cost, duration_ms: trial.durationMs, error: text(trial.error),
    data_json: json(withMediaRefs(trial.data, keep), TRIAL, "data"), reused: trial.reused ?? 0,
  };
}

/** The `lab_runs` columns `finishRun` sets. */
export function finishParams(runId: string, end: FinishRun): Record<string, unknown> {
  return {
    id: runId, status: end.status, ended_at: new Date().toISOString(), score: finiteOrNull(end.score ?? null),
    summary_json: json(end.summary ?? {}, "LabStore.finishRun", "summary"), error: text(end.error), best_trial: end.bestTrial ?? null,
  };
}

/** Checks `lab.runs(filter)`'s filter; a misspelt kind or status, or a bad limit, is a `ValidationError`. */
export function checkRunFilter(filter: RunFilter): void {
  // A misspelt kind or status would match nothing and read as "no runs yet".
  for (const [key, known] of [["kind", RUN_KINDS], ["status", RUN_STATUSES]] as const) {
    const value = filter[key];
    if (value !== undefined && !(known as readonly unknown[]).includes(value)) {
      const expected = known.map((k) => JSON.stringify(k));
      throw new ValidationError(
        `runs({ ${key} }) expects ${expected.slice(0, -1).join(", ")} or ${expected[expected.length - 1]}; received ${JSON.stringify(value)}`,
        { field: key },
      );
    }
  }
  if (filter.limit !== undefined && !(Number.isInteger(filter.limit) && filter.limit >= 0)) {
    throw new ValidationError(`runs({ limit }) expects a whole number ≥ 0; received ${String(filter.limit)}`, { field: "limit" });
  }
}

/** One `lab_rows` row as an `EvaluationRow`. */
export function rowFrom(r: RowRaw): EvaluationRow {
  return {
    index: r.idx, exampleId: r.example_id, inputs: parse(r.inputs_json), expected: parse(r.expected_json),
    prediction: r.prediction_json === null ? null : parse(r.prediction_json), scores: parse(r.scores_json),
    error: r.error, durationMs: r.duration_ms, inputTokens: r.input_tokens, outputTokens: r.output_tokens, cost: r.cost,
    // Only rows a metric gave details for carry the field, as in the report (a store without the column has none).
    ...(r.details_json == null ? {} : { details: parse(r.details_json) as Record<string, Record<string, unknown>> }),
  };
}

/** One `lab_trials` row as a `Trial`. */
export function trialFrom(t: TrialRaw): Trial {
  return {
    index: t.idx, kind: t.kind, parents: parse(t.parents_json), choices: parse(t.choices_json),
    instructions: parse(t.instructions_json), demoIds: parse(t.demo_ids_json), score: t.score,
    exampleScores: t.example_scores_json === null ? null : exampleScores(t.example_scores_json), budgetSpent: t.budget_spent,
    lmCalls: t.lm_calls, inputTokens: t.input_tokens, outputTokens: t.output_tokens, cost: t.cost,
    durationMs: t.duration_ms, error: t.error, data: parse(t.data_json), reused: t.reused,
  };
}

export function summary(raw: RunRaw): RunSummary {
  return {
    id: raw.id, kind: raw.kind, name: raw.name, status: raw.status, startedAt: raw.started_at, endedAt: raw.ended_at,
    score: raw.score, config: parse(raw.config_json), summary: parse(raw.summary_json), error: raw.error,
  };
}

const EXAMPLE = "LabStore.recordExample";
const TRIAL = "LabStore.recordTrial";

/**
 * What a row keeps, with registered keys masked (a user's error or input may carry one). Masked in
 * the decoded values, never in the JSON text, so what is stored always parses back. A value JSON
 * cannot hold (a BigInt, a cycle) is a `ValidationError` naming where it is, e.g. `config.seed`.
 */
function json(value: unknown, where: string, field: string): string {
  let text: string | undefined;
  try {
    text = redactedJson(value ?? null) as string | undefined;
  } catch (error) {
    const why = notJson(value, field, []) ?? (error instanceof Error ? error.message : String(error));
    throw new ValidationError(
      `${where}: ${field} cannot be stored as JSON: ${why}. Give plain values: strings, numbers, booleans, null, arrays and objects`,
      { field, cause: error },
    );
  }
  if (text === undefined) {
    throw new ValidationError(`${where}: ${field} cannot be stored as JSON: it is a ${typeof value}`, { field });
  }
  return text;
}

/** Where in `value` JSON gives up (a BigInt, a cycle), as a path from `path`; undefined when nowhere. */
function notJson(value: unknown, path: string, enclosing: [object, string][]): string | undefined {
  if (typeof value === "bigint") return `${path} is a BigInt (${value}n)`;
  if (value === null || typeof value !== "object") return undefined;
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === "function") return notJson(toJson.call(value), path, enclosing);
  const outer = enclosing.find(([o]) => o === value);
  if (outer !== undefined) return `${path} refers back to ${outer[1]} (a cycle)`;
  const inside: [object, string][] = [...enclosing, [value, path]];
  const entries = Array.isArray(value) ? value.map((v, i): [string, unknown] => [`[${i}]`, v])
    : Object.entries(value).map(([k, v]): [string, unknown] => [/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`, v]);
  for (const [step, item] of entries) {
    const found = notJson(item, `${path}${step}`, inside);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A caller's value in a message: strings quoted, objects by kind, anything else as its own text. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "an array" : "an object";
  return String(value);
}

/** An error as a row keeps it: secrets masked, and any URL in it without its credentials. */
function text(value: string | null | undefined): string | null {
  return value == null ? null : redactError(value);
}

const BATCH_STATUSES: readonly unknown[] = ["submitted", "completed", "failed"];

/** One `lab_batches` row as a `RunBatch`; a row that does not read as one is a `ValidationError` naming the store, run and row. */
export function batchFrom(b: BatchRaw & { rowid: number | string }, path: string, runId: string): RunBatch {
  const wrong = batchRowProblem(b);
  if (wrong !== undefined) {
    throw new ValidationError(
      `The lab store at ${path}: run ${runId}, lab_batches row ${b.rowid} (batch ${JSON.stringify(redactError(String(b.batch_id)))}) cannot be read: ${wrong}. ` +
        "The row was changed outside typelm; restore it, or delete it to have its requests sent again",
      { field: "lab_batches" },
    );
  }
  return {
    batchId: b.batch_id, provider: b.provider, model: b.model, endpoint: b.endpoint, round: b.round,
    customIds: parse(b.custom_ids_json), status: b.status, createdAt: b.created_at,
  };
}

/** What is wrong with a `lab_batches` row, or undefined when it reads as a batch. */
export function batchRowProblem(b: BatchRaw): string | undefined {
  for (const column of ["batch_id", "provider", "model", "endpoint"] as const) {
    if (typeof b[column] !== "string" || b[column] === "") return `${column} is ${JSON.stringify(b[column])}; expected a non-empty text`;
  }
  if (!Number.isInteger(b.round) || b.round < 0) return `round is ${JSON.stringify(b.round)}; expected a whole number ≥ 0`;
  if (!BATCH_STATUSES.includes(b.status)) return `status is ${JSON.stringify(b.status)}; expected "submitted", "completed" or "failed"`;
  let ids: unknown;
  try {
    ids = JSON.parse(String(b.custom_ids_json));
  } catch (error) {
    return `custom_ids_json is not JSON (${error instanceof Error ? error.message : String(error)}); expected a JSON array of request keys`;
  }
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) {
    return `custom_ids_json is ${preview(ids)}; expected a JSON array of request keys (strings)`;
  }
  return undefined;
}

function parse<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** Per-example scores; entries written before per-example errors were kept read as `error: null`. */
function exampleScores(text: string): ExampleScore[] {
  return parse<{ exampleId: string; score: number; error?: string | null }[]>(text)
    .map((e) => ({ exampleId: e.exampleId, score: e.score, error: e.error ?? null }));
}

function finiteOrNull(value: number | null): number | null {
  return value === null || !Number.isFinite(value) ? null : value;
}
