// The work of `rescore` (lib/evaluate/rescore.ts), loaded at its first call so `import "typelm"` does not load it.
import { ValidationError } from "../errors.js";
import { inSpan } from "../instrument/bus.js";
import { Module } from "../module.js";
import { FewShotExample } from "../prompt/few-shot.js";
import type { Lab, LabStore } from "../store/lab-store.js";
import type { EvaluationRow, EvaluationRun } from "../store/records.js";
import { Evaluation, type EvaluationOptions, type ReportOf } from "./evaluation.js";
import type { MetricSpec } from "./scoring.js";
import type { RescoreOptions } from "./rescore.js";
import { modelMetricChecks } from "./model-metrics.js";

/** `rescore`, loaded at its first call (lib/evaluate/rescore.ts). */
export async function rescoreRun<const M extends MetricSpec>(runId: string, options: RescoreOptions<M>): Promise<ReportOf<M>> {
  if (typeof runId !== "string" || runId === "") throw new ValidationError(`rescore: expected an evaluation run id; received ${JSON.stringify(runId)}`, { field: "runId" });
  if (options === null || typeof options !== "object" || !Array.isArray(options.metrics) || options.metrics.length === 0) {
    throw new ValidationError("rescore: options.metrics must name at least one metric (a name, a function or a judge)", { field: "metrics" });
  }
  const store = options.lab ?? (await import("../store/lab-store.js")).labFromConfig();
  if (store === null) throw new ValidationError("rescore reads the run from the lab store, but the store is off (lab: null or c.lab = false)", { field: "lab" });
  const source = await sourceRun(store, runId);
  const rows = [...source.rows].sort((a, b) => a.index - b.index);
  checkUniqueIds(source.id, rows);
  const examples = rows.map((row) => new FewShotExample({ input: row.inputs, output: row.expected, id: row.exampleId ?? undefined }));
  const replay = new StoredPredictions(new Map(examples.map((e, i) => [e.input, rows[i]!])));
  const { metrics, ...evaluationOptions } = options;
  // Each judge's model before the run: none or the stand-in refused, then one call on the first stored answer.
  const checks = await modelMetricChecks(metrics);
  checks.checkModels(metrics);
  const answered = rows.findIndex((row) => row.error === null && row.prediction !== null);
  if (answered >= 0) await checks.checkAnswers(metrics, examples[answered]!, rows[answered]!.prediction!, JUDGE_CHECK_MS);
  const ev = new Evaluation({ name: source.name, lab: store, ...evaluationOptions });
  const extraConfig = {
    module: source.config["module"], models: source.config["models"] ?? [], rescoredFrom: source.id,
    ...(source.status === "failed" ? { sourceStatus: "failed" } : {}),
  };
  const warnings = source.status === "failed" ? [{ code: RESCORE_FAILED_SOURCE, message: failedSourceWarning(source, rows.length) }] : [];
  return inSpan(async () => (await import("./evaluation-run.js")).evaluateRun<M>(ev, { moduleInstance: replay, testExamples: examples, metrics }, extraConfig, warnings));
}

/** How long the check before a rescore waits for each judge's first answer (ms). */
const JUDGE_CHECK_MS = 120_000;

/** The `code` of the warning a rescore of a failed run gives. */
const RESCORE_FAILED_SOURCE = "TYPELM_RESCORE_FAILED_SOURCE";

/** The rescored run's remark on a source that failed: its error, and how many of its examples have rows. */
function failedSourceWarning(source: EvaluationRun, rowCount: number): string {
  const planned = source.config["examples"];
  const of = typeof planned === "number" && planned !== rowCount ? ` of its ${planned} examples` : "";
  return `rescored from run ${source.id}, which failed${source.error === null ? "" : ` (${source.error})`}: ` +
    `only its ${rowCount} stored rows${of} are scored, so this run stands for that run's rows, not for a finished evaluation.`;
}

/** Two rows of one example id would pair wrongly wherever runs are compared by example id: refused with the rows named. */
function checkUniqueIds(runId: string, rows: readonly EvaluationRow[]): void {
  const seen = new Map<string, number>();
  for (const row of rows) {
    if (row.exampleId === null) continue;
    const first = seen.get(row.exampleId);
    if (first !== undefined) {
      throw new ValidationError(
        `rescore: run ${runId} holds example id ${JSON.stringify(row.exampleId)} twice (rows ${first} and ${row.index}); rows are paired by example id ` +
          "(typelm compare, the gate), so a rescore of it could not be compared. Give each example its own id and evaluate again.",
        { field: "runId" },
      );
    }
    seen.set(row.exampleId, row.index);
  }
}

/** The run to score again; `await` serves both engines (PostgreSQL reads are asynchronous). */
async function sourceRun(store: Lab, runId: string): Promise<EvaluationRun> {
  const run = await store.run(runId);
  if (run === undefined) throw new ValidationError(`rescore: no run with id ${JSON.stringify(runId)} in ${store.path} (typelm runs lists them)`, { field: "runId" });
  if (run.kind !== "evaluation") throw new ValidationError(`rescore: run ${runId} is an ${run.kind} run; rescore scores an evaluation run's stored predictions`, { field: "runId" });
  if (run.status === "running") {
    throw new ValidationError(
      `rescore: evaluation run ${run.id} is still running (started ${run.startedAt}): its rows are not all written. Rescore it once it has ended ` +
        "(typelm runs shows its status); a run whose process was stopped stays running until it is resumed (Evaluation.evaluate({ resume }), or typelm run --batch again).",
      { field: "runId" },
    );
  }
  if (run.rows.length === 0) throw new ValidationError(`rescore: evaluation run ${runId} has no stored rows to score`, { field: "runId" });
  return run;
}

/** Answers each example with the prediction stored for it, or fails with the row's stored error; calls no model. */
class StoredPredictions extends Module {
  constructor(private readonly rows: Map<object, EvaluationRow>) {
    super();
  }

  async forward(inputs: Record<string, unknown>): Promise<Record<string, unknown>> {
    const row = this.rows.get(inputs);
    if (row === undefined) throw new TypeError("rescore: an example without its stored row (a bug: please report it)");
    // A row that failed (its program, or a metric then) stays failed with the same error: the rescored run has its source's failures.
    if (row.error !== null) throw storedError(row.error);
    if (row.prediction === null) throw storedError("Error: the stored row has no prediction");
    return row.prediction;
  }
}

/** The stored `Name: message` as an error with that name and message, so the new row says the same. */
function storedError(text: string): Error {
  const match = /^([A-Za-z_$][\w$]*): ([\s\S]*)$/.exec(text);
  const error = new Error(match === null ? text : match[2]);
  if (match !== null) error.name = match[1]!;
  return error;
}
