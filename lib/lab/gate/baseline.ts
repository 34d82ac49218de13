// Reading the gate's baseline (a results.json file or a run of the lab store) and refusing one that
// cannot be trusted or is another experiment's.
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigurationError, ValidationError } from "../../errors.js";
import type { ComparableReport } from "../../evaluate/compare.js";
import { inferFields } from "../../evaluate/fields.js";
import { f1AggregateFields } from "../../evaluate/stats/f1-statistic.js";
import type { EvaluationRow } from "../../store/records.js";
import { printable } from "../terminal.js";
import { type BaselineIdentity, type BaselineRun, type GateBaseline, type ResultRow, rowsToReport } from "./rows.js";

interface StoredEvaluation { metrics?: unknown; rows?: unknown; failures?: unknown }

/**
 * Refuses a baseline whose rows cannot be trusted: a row that failed (the gate would compare a
 * failure), or a metric whose value disagrees with the rows (a summary edited by hand): each metric is
 * the mean of its per-row scores, or `f1_score`'s macro-F1 recomputed from the rows.
 */
function checkRows(where: string, rows: readonly EvaluationRow[], metrics: Readonly<Record<string, unknown>>): void {
  const failed = rows.filter((r) => r.error !== null || r.prediction === null);
  if (failed.length > 0) {
    throw new ValidationError(
      `--baseline: ${where} has ${failed.length} failed row${failed.length === 1 ? "" : "s"} (first: example "${printable(failed[0]!.exampleId ?? `#${failed[0]!.index}`)}"); a baseline is a run without failed rows: run it again`,
      { field: "baseline" },
    );
  }
  for (const [metric, value] of Object.entries(metrics)) {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new ValidationError(`--baseline: ${where}: metric "${printable(metric)}" is not a number`, { field: "baseline" });
    }
    if (rows.length === 0) continue;
    const mean = rows.reduce((sum, r) => sum + (r.scores?.[metric] ?? 0), 0) / rows.length;
    if (Math.abs(mean - value) <= 1e-9 || agreesAsF1(metric, rows, value)) continue;
    throw new ValidationError(
      `--baseline: ${where}: metric "${printable(metric)}" says ${value} but its rows give ${mean}; the summary was changed after the run (or the rows were): use an unedited baseline`,
      { field: "baseline" },
    );
  }
}

/**
 * Whether `value` is `f1_score`'s macro-F1 of the rows. The rows do not say which expected fields are
 * labels (the signature did), so the fields are tried as inferred, all as labels and all as free text.
 */
function agreesAsF1(metric: string, rows: readonly EvaluationRow[], value: number): boolean {
  if (metric !== "f1_score") return false;
  const inferred = inferFields(rows);
  const variants = [inferred, inferred.map((f) => ({ ...f, label: true })), inferred.map((f) => ({ ...f, label: false }))];
  return variants.some((fields) => f1AggregateFields(metric, rows, fields, value) !== null);
}

function identityOf(value: unknown): BaselineIdentity {
  const v = (value ?? {}) as { experiment?: unknown; dataset?: { splits?: { test?: { sha256?: unknown } } } };
  return {
    experiment: typeof v.experiment === "string" ? v.experiment : null,
    testSha256: typeof v.dataset?.splits?.test?.sha256 === "string" ? v.dataset.splits.test.sha256 : null,
  };
}

/**
 * Reads `--baseline`: a results.json file (each model's optimized test evaluation, else its baseline)
 * or an evaluation run id (or unique prefix) of the lab store, through `runById`. A run that did not
 * complete, a failed row, or a metric that disagrees with its rows is refused (`ValidationError`).
 */
export function readBaseline(spec: string, cwd: string, byRunId: (id: string) => BaselineRun): GateBaseline {
  const path = resolve(cwd, spec);
  const looksLikeFile = spec.endsWith(".json") || spec.includes("/") || spec.includes("\\");
  if (!existsSync(path)) {
    if (looksLikeFile) throw new ValidationError(`--baseline: no file at ${path}`, { field: "baseline" });
    const run = byRunId(spec);
    if (run.status !== "completed") {
      throw new ValidationError(`--baseline: run ${run.id} is ${run.status}, not completed; a baseline is a completed run (typelm runs --kind evaluation lists them)`, { field: "baseline" });
    }
    checkRows(`run ${run.id}`, run.rows, run.metrics);
    const recorded = run.config["experiment"] as { name?: unknown; testSha256?: unknown } | undefined;
    const identity: BaselineIdentity = {
      experiment: typeof recorded?.name === "string" ? recorded.name : null,
      testSha256: typeof recorded?.testSha256 === "string" ? recorded.testSha256 : null,
    };
    return { source: `run ${run.id}`, models: new Map([["*", { results: run.rows, metrics: run.metrics }]]), identity };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ConfigurationError(`--baseline: ${path} is not readable JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  const models = (parsed as { models?: unknown } | null)?.models;
  if (models === null || typeof models !== "object" || Array.isArray(models)) {
    throw new ValidationError(`--baseline: ${path} is not a typelm results.json (it has no "models" object)`, { field: "baseline" });
  }
  const out = new Map<string, ComparableReport>();
  for (const [model, part] of Object.entries(models as Record<string, unknown>)) {
    const p = part as { baseline?: StoredEvaluation; optimized?: StoredEvaluation | null } | null;
    const evaluation = p?.optimized ?? p?.baseline;
    if (evaluation === undefined || evaluation === null || typeof evaluation.metrics !== "object" || evaluation.metrics === null) {
      throw new ValidationError(`--baseline: ${path}: model "${printable(model)}" has no test evaluation`, { field: "baseline" });
    }
    if (!Array.isArray(evaluation.rows)) {
      throw new ValidationError(
        `--baseline: ${path} holds no per-example rows for model "${printable(model)}" (written by an older typelm); run the baseline again to rewrite it, or pass an evaluation run id`,
        { field: "baseline" },
      );
    }
    const report = rowsToReport(evaluation.rows as ResultRow[], evaluation.metrics as Record<string, number>);
    const where = `${path} (model "${printable(model)}")`;
    if (typeof evaluation.failures === "number" && evaluation.failures > 0) {
      throw new ValidationError(`--baseline: ${where} has ${evaluation.failures} failed row${evaluation.failures === 1 ? "" : "s"}; a baseline is a run without failed rows: run it again`, { field: "baseline" });
    }
    checkRows(where, report.results, report.metrics);
    out.set(model, report);
  }
  if (out.size === 0) throw new ValidationError(`--baseline: ${path} holds no model`, { field: "baseline" });
  return { source: `results.json at ${path}`, models: out, identity: identityOf(parsed) };
}

/**
 * The baseline must be this experiment on this dataset: the experiment's name and the test split's
 * hash it records must be this run's (checked before any model call). A baseline that records neither
 * cannot be checked and is refused.
 */
export function checkBaselineIdentity(baseline: GateBaseline, current: { experiment: string; testSha256: string }): void {
  const identity = baseline.identity ?? { experiment: null, testSha256: null };
  if (identity.experiment === null || identity.testSha256 === null) {
    throw new ValidationError(
      `--baseline: ${baseline.source} does not record which experiment and dataset it ran (written by an older typelm, or not by typelm run); run the baseline again with typelm run`,
      { field: "baseline" },
    );
  }
  if (identity.experiment !== current.experiment) {
    throw new ValidationError(
      `--baseline: ${baseline.source} is experiment "${printable(identity.experiment)}", this run is "${printable(current.experiment)}"; the baseline must be the same experiment`,
      { field: "baseline" },
    );
  }
  if (identity.testSha256 !== current.testSha256) {
    throw new ValidationError(
      `--baseline: ${baseline.source} ran on other test data (sha256 ${identity.testSha256.slice(0, 12)}…, this run's ${current.testSha256.slice(0, 12)}…); the baseline must be the same dataset: run it again on this data`,
      { field: "baseline" },
    );
  }
}
