import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigurationError, ValidationError } from "../../errors.js";
import { compare, formatPValue, pValueText, signed, type ComparableReport, type Comparison } from "../../evaluate/compare.js";
import { inferFields } from "../../evaluate/fields.js";
import { f1AggregateFields } from "../../evaluate/stats/f1-statistic.js";
import { dropPValue, pairsNeeded, rulesOutDrop, tangoLowerBound } from "../../evaluate/stats/paired-difference.js";
import type { EvaluationRow, RunStatus } from "../../store/records.js";
import { printable } from "../terminal.js";

/**
 * The regression gate: a run's test rows paired with a baseline's, per model and metric, and a verdict
 * on the primary metric (the experiment's first), from one-sided tests at level `GATE_ALPHA`: `failed`
 * when the candidate is significantly worse, `passed` when not failed and the difference's lower bound
 * is at or above −tolerance, `inconclusive` otherwise. Other metrics are reported but never decide it.
 */

/** The gate's one-sided level: a drop is significant, and a bound is drawn, at 5%. */
export const GATE_ALPHA = 0.05;

/** The drop the gate tolerates when `--tolerance` (or `--max-drop`) is not given. */
export const DEFAULT_TOLERANCE = 0.05;

/** The primary metric's verdict: significantly worse, a larger drop than the tolerance ruled out, or neither. */
export type GateVerdict = "passed" | "failed" | "inconclusive";

/** One example of a test evaluation as results.json keeps it (enough to pair and recompute every metric). */
export interface ResultRow {
  id: string;
  expected: Record<string, unknown>;
  /** The prediction's output values, or null when the example failed. */
  prediction: Record<string, unknown> | null;
  scores: Record<string, number>;
}

/** What the baseline was run on: the experiment's name and the hash of the test split's data file (null when not recorded). */
export interface BaselineIdentity {
  experiment: string | null;
  /** sha256 of the test split's file (the data file's, for a split data file). */
  testSha256: string | null;
}

/** Where the baseline came from and each model's test evaluation in it. */
export interface GateBaseline {
  /** "results.json at <path>" or "run <id>". */
  source: string;
  /** Model id → the evaluation to compare with; `"*"` when one evaluation stands for every model (a run id). */
  models: Map<string, ComparableReport>;
  /** The experiment and dataset the baseline records (absent: not recorded, which `checkBaselineIdentity` refuses). */
  identity?: BaselineIdentity;
}

/** An evaluation run read for `--baseline <run id>`. */
export interface BaselineRun {
  id: string;
  rows: EvaluationRow[];
  metrics: Record<string, number>;
  status: RunStatus;
  /** The run's recorded config: `typelm run` records `experiment: { name, dataset, testSha256 }` there. */
  config: Record<string, unknown>;
}

/** The primary metric's decision: its verdict and the numbers behind it. */
export interface GateDecision {
  verdict: GateVerdict;
  /** Candidate − baseline. */
  diff: number;
  /** One-sided lower confidence bound of the difference at 1 − GATE_ALPHA. */
  low: number;
  /** How `low` was drawn: `"tango-score"` for 0/1 scores, else the comparison's interval method at 90% two-sided. */
  lowMethod: string;
  /** One-sided p-value of "no drop" (small when the candidate is worse). */
  pValue: number;
  /** The test behind `pValue`. */
  test: string;
  /** About how many examples would make an inconclusive verdict conclusive at the rates seen (null: none would, or not inconclusive). */
  needed: number | null;
}

/** One model × metric of the gate. */
export interface GateCase {
  model: string;
  metric: string;
  primary: boolean;
  /** The paired comparison at 95% (what the terminal and the summary show for every metric). */
  comparison: Comparison;
  /** The primary metric's decision; null for the other metrics. */
  decision: GateDecision | null;
  /** Why this case fails the gate (a regression, or an inconclusive verdict not allowed), or null. */
  failure: string | null;
}

/** The gate's outcome: every case, the overall verdict and whether the command exits 1. */
export interface GateResult {
  baseline: string;
  /** The largest drop `passed` rules out. */
  tolerance: number;
  /** `--allow-underpowered`: an inconclusive verdict exits 0 (with its warning). */
  allowUnderpowered: boolean;
  cases: GateCase[];
  /** `failed` when any primary case failed, else `inconclusive` when any was, else `passed`. */
  verdict: GateVerdict;
  /** Sentences for inconclusive cases: how many examples would make them conclusive. */
  warnings: string[];
  /** The command exits 1: the verdict is `failed`, or `inconclusive` without `allowUnderpowered`. */
  failed: boolean;
}

/** Turns results.json's rows into rows `compare` pairs. */
export function rowsToReport(rows: readonly ResultRow[], metrics: Readonly<Record<string, number>>): ComparableReport {
  const results: EvaluationRow[] = rows.map((r, index) => ({
    index, exampleId: r.id, inputs: {}, expected: r.expected, prediction: r.prediction, scores: r.scores,
    error: r.prediction === null ? "failed" : null, durationMs: 0, inputTokens: 0, outputTokens: 0, cost: 0,
  }));
  return { results, metrics };
}

/** Rows of an evaluation report in results.json's form. */
export function resultRows(rows: readonly EvaluationRow[]): ResultRow[] {
  return rows.map((r) => ({ id: r.exampleId ?? `#${r.index}`, expected: r.expected, prediction: r.prediction, scores: r.scores }));
}

interface StoredEvaluation { metrics?: unknown; rows?: unknown; failures?: unknown }

/** A tolerance must be a number in [0, 1): the drop `passed` rules out. */
export function checkTolerance(value: number, option = "--tolerance"): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value >= 1) {
    throw new ValidationError(
      `${option} expects the largest drop to tolerate, a number from 0 up to (not including) 1, e.g. 0.05 for 5 points; received ${String(value)}`,
      { field: "tolerance" },
    );
  }
  return value;
}

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

/**
 * The verdict for paired 0/1 scores (n pairs, `improved` went 0 → 1 and `worsened` 1 → 0): `failed`
 * when the exact one-sided McNemar test rejects "no drop" at `GATE_ALPHA`; `passed` when not failed and
 * Tango's one-sided lower bound (unconditional: it does not collapse when few pairs changed) is at or
 * above −tolerance; `inconclusive` otherwise.
 */
export function pairedShareDecision(improved: number, worsened: number, n: number, tolerance: number): GateDecision {
  const pValue = dropPValue(improved, worsened);
  const low = tangoLowerBound(improved, worsened, n, GATE_ALPHA);
  const verdict: GateVerdict = pValue <= GATE_ALPHA ? "failed" : rulesOutDrop(improved, worsened, n, tolerance, GATE_ALPHA) ? "passed" : "inconclusive";
  return {
    verdict, diff: (improved - worsened) / n, low, lowMethod: "tango-score", pValue, test: "mcnemar-exact (one-sided)",
    needed: verdict === "inconclusive" ? pairsNeeded(improved, worsened, n, tolerance, GATE_ALPHA) : null,
  };
}

/**
 * The verdict for a graded metric (or `f1_score`) from the paired comparison at the one-sided level:
 * the test's p-value halved on the side of the difference, the low end of the 90% two-sided interval.
 * All of the gate's use of `compare` for graded metrics is here.
 */
export function gradedDecision(baseline: ComparableReport, current: ComparableReport, metric: string, tolerance: number): GateDecision {
  const c = compare(baseline, current, { metric, confidence: 1 - 2 * GATE_ALPHA });
  const pValue = c.diff < 0 ? c.pValue / 2 : 1 - c.pValue / 2;
  // No example changed: the resampled interval collapses to [0, 0]. A per-example difference in [−1, 1]
  // that was never seen is bounded as a 0/1 one is (no changed pair among n), not by 0.
  const low = c.better.length + c.worse.length === 0 ? Math.min(c.ci[0], tangoLowerBound(0, 0, c.n, GATE_ALPHA)) : c.ci[0];
  const verdict: GateVerdict = c.diff < 0 && pValue < GATE_ALPHA ? "failed" : low >= -tolerance ? "passed" : "inconclusive";
  // The interval narrows as 1/√n: the n at which its low end would reach −tolerance at this difference.
  const needed = verdict !== "inconclusive" || !(c.diff + tolerance > 0) || !(c.diff - low > 0)
    ? null : c.better.length + c.worse.length === 0 ? pairsNeeded(0, 0, c.n, tolerance, GATE_ALPHA) : Math.ceil(c.n * ((c.diff - low) / (c.diff + tolerance)) ** 2);
  return { verdict, diff: c.diff, low, lowMethod: `${c.ciMethod} (90% two-sided)`, pValue, test: `${c.test} (one-sided)`, needed };
}

/**
 * Pairs each model's test evaluation with the baseline's on every metric and decides the primary
 * metric's verdict. Example ids must match (a `ValidationError` names the first that does not); a
 * model the baseline lacks is an error.
 */
export function runGate(
  baseline: GateBaseline,
  current: readonly { model: string; report: ComparableReport }[],
  metrics: readonly string[],
  options: { tolerance?: number | undefined; allowUnderpowered?: boolean | undefined } = {},
): GateResult {
  const tolerance = checkTolerance(options.tolerance ?? DEFAULT_TOLERANCE);
  const allowUnderpowered = options.allowUnderpowered === true;
  const cases: GateCase[] = [];
  const warnings: string[] = [];
  for (const { model, report } of current) {
    const base = baseline.models.get(model) ?? baseline.models.get("*");
    if (base === undefined) {
      throw new ValidationError(
        `--baseline: ${baseline.source} has no model "${printable(model)}" (it has ${[...baseline.models.keys()].map((m) => `"${printable(m)}"`).join(", ")}); run the gate with the same --lm as the baseline`,
        { field: "baseline" },
      );
    }
    metrics.forEach((metric, i) => {
      if (typeof base.metrics[metric] !== "number") {
        throw new ValidationError(`--baseline: ${baseline.source} has no metric "${printable(metric)}" for model "${printable(model)}"`, { field: "baseline" });
      }
      let comparison: Comparison;
      try {
        comparison = compare(base, report, { metric });
      } catch (error) {
        if (error instanceof ValidationError) {
          throw new ValidationError(`--baseline: model "${printable(model)}": ${error.message.replace(/^compare: /, "")} (the baseline is the first report, this run the second)`, { field: "baseline" });
        }
        throw error;
      }
      const primary = i === 0;
      let decision: GateDecision | null = null;
      let failure: string | null = null;
      if (primary) {
        decision = comparison.test === "mcnemar-exact"
          ? pairedShareDecision(comparison.better.length, comparison.worse.length, comparison.n, tolerance)
          : gradedDecision(base, report, metric, tolerance);
        if (decision.verdict === "failed") {
          failure = `failed: ${metric} fell significantly: ${signed(decision.diff)}, one-sided ${formatPValue(decision.pValue)}`;
        } else if (decision.verdict === "inconclusive") {
          const warning = inconclusiveSentence(model, metric, decision, tolerance, comparison.n);
          warnings.push(warning);
          if (!allowUnderpowered) failure = warning;
        }
      }
      cases.push({ model, metric, primary, comparison, decision, failure });
    });
  }
  const verdicts = cases.flatMap((c) => (c.decision === null ? [] : [c.decision.verdict]));
  const verdict: GateVerdict = verdicts.includes("failed") ? "failed" : verdicts.includes("inconclusive") ? "inconclusive" : "passed";
  return {
    baseline: baseline.source, tolerance, allowUnderpowered, cases, verdict, warnings,
    failed: verdict === "failed" || (verdict === "inconclusive" && !allowUnderpowered),
  };
}

function inconclusiveSentence(model: string, metric: string, d: GateDecision, tolerance: number, n: number): string {
  const more = d.needed === null
    ? "no number of examples would settle it at this difference"
    : `about ${roughly(d.needed)} examples (this run has ${n}) would make it conclusive if the scores change at the same rate`;
  return `inconclusive: ${model} ${metric}: the data cannot rule out a drop larger than ${tolerance} ` +
    `(difference ${signed(d.diff)}, one-sided 95% lower bound ${signed(d.low)}); ${more}`;
}

/** A count rounded to two significant figures (an estimate, not a promise). */
function roughly(n: number): string {
  if (n < 100) return String(n);
  const step = 10 ** (Math.floor(Math.log10(n)) - 1);
  return (Math.ceil(n / step) * step).toLocaleString("en-US");
}

function xml(text: string): string {
  // XML 1.0 forbids most control characters even as references: drop them.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "")
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

function numbers(c: Comparison): string {
  const percent = Number((c.confidence * 100).toPrecision(6));
  return `baseline ${c.a.toFixed(3)}, this run ${c.b.toFixed(3)}, difference ${signed(c.diff)} ` +
    `(${percent}% CI ${signed(c.ci[0])} to ${signed(c.ci[1])}), ${formatPValue(c.pValue)}, ${c.test}, n = ${c.n}`;
}

/** The primary metric's numbers: values, difference, its one-sided bound and test, and the verdict. */
function decisionNumbers(c: GateCase, tolerance: number): string {
  const k = c.comparison, d = c.decision!;
  return `baseline ${k.a.toFixed(3)}, this run ${k.b.toFixed(3)}, difference ${signed(d.diff)} ` +
    `(one-sided 95% lower bound ${signed(d.low)}, ${d.lowMethod}), one-sided ${formatPValue(d.pValue)}, ${d.test}, ` +
    `tolerance ${tolerance}, n = ${k.n}: ${d.verdict}`;
}

function caseNumbers(c: GateCase, tolerance: number): string {
  return c.decision === null ? `${numbers(c.comparison)}: ${secondaryWords(c.comparison)}` : decisionNumbers(c, tolerance);
}

/** What a metric that does not decide the gate did, in words (never a bare "ok"). */
function secondaryWords(k: Comparison): string {
  return `not gated, ${k.significant ? (k.diff < 0 ? "significantly worse" : "significantly better") : "no significant change"}`;
}

/**
 * JUnit XML: one testsuite, one testcase per model × metric, a `<failure>` with the numbers on a
 * regression (and on an inconclusive verdict unless `--allow-underpowered`); each testcase's output
 * names its verdict.
 */
export function junitXml(result: GateResult, suite: string): string {
  const failures = result.cases.filter((c) => c.failure !== null).length;
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="typelm" tests="${result.cases.length}" failures="${failures}">`,
    `  <testsuite name="${xml(suite)}" tests="${result.cases.length}" failures="${failures}" errors="0" skipped="0">`,
  ];
  for (const c of result.cases) {
    const text = caseNumbers(c, result.tolerance);
    lines.push(`    <testcase classname="${xml(`${suite}.${c.model}`)}" name="${xml(`${c.metric}${c.primary ? " (primary)" : ""}`)}">`);
    if (c.failure !== null) lines.push(`      <failure message="${xml(c.failure)}" type="${c.decision?.verdict === "inconclusive" ? "inconclusive" : "regression"}">${xml(text)}</failure>`);
    lines.push(`      <system-out>${xml(text)}</system-out>`, `    </testcase>`);
  }
  lines.push(`  </testsuite>`, `</testsuites>`, "");
  return lines.join("\n");
}

/**
 * Text for one cell of a Markdown table: control characters shown as escapes, HTML's `& < >` as
 * entities, and the characters Markdown reads (`\ | \` * _ [ ] ~`) escaped, so a name cannot break
 * the table, open a code span or a link, or inject HTML.
 */
export function markdownCell(text: string): string {
  return printable(text)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/[\\`|*_[\]~]/g, (ch) => `\\${ch}`);
}

/** A Markdown table of the gate for a CI job's step summary: the verdict word for each case. */
export function markdownSummary(result: GateResult, suite: string): string {
  const lines = [
    `### typelm gate: ${markdownCell(suite)} ${result.verdict}${result.verdict === "inconclusive" && result.allowUnderpowered ? " (allowed by --allow-underpowered)" : ""}`,
    "",
    `Baseline: ${markdownCell(result.baseline)}; tolerance ${result.tolerance} (the largest drop a pass rules out, one-sided 5% level)`,
    "",
    "| model | metric | baseline | this run | difference | interval | p | verdict |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const c of result.cases) {
    const k = c.comparison, d = c.decision;
    const interval = d === null ? `${signed(k.ci[0])} to ${signed(k.ci[1])}` : `≥ ${signed(d.low)} (one-sided 95%)`;
    const p = d === null ? pValueText(k.pValue) : `${pValueText(d.pValue)} (one-sided)`;
    const verdict = d === null ? secondaryWords(k) : d.verdict;
    lines.push(`| ${markdownCell(c.model)} | ${markdownCell(c.metric)}${c.primary ? " (primary)" : ""} | ${k.a.toFixed(3)} | ${k.b.toFixed(3)} | ${signed(k.diff)} | ${interval} | ${p} | ${verdict} |`);
  }
  for (const w of result.warnings) lines.push("", `> ${markdownCell(w)}`);
  return lines.join("\n") + "\n\n";
}

/** The gate in terminal lines, ending with the verdict. */
export function gateLines(result: GateResult): string[] {
  return [
    `gate against ${result.baseline} (tolerance ${result.tolerance}):`,
    ...result.cases.map((c) => `  ${c.model} ${c.metric}${c.primary ? " (primary)" : ""}: ${caseNumbers(c, result.tolerance)}${c.decision?.verdict === "failed" ? ` — REGRESSION: ${(c.failure ?? "").replace(/^failed: /, "")}` : ""}`),
    ...result.warnings.map((w) => `warning: ${w}`),
    result.verdict === "inconclusive" && result.allowUnderpowered ? "gate: inconclusive (allowed by --allow-underpowered: exit 0)" : `gate: ${result.verdict}`,
  ];
}
