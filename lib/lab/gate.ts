import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigurationError, ValidationError } from "../errors.js";
import { compare, formatPValue, pValueText, signed, type ComparableReport, type Comparison } from "../evaluate/compare.js";
import type { EvaluationRow } from "../store/records.js";
import { printable } from "./terminal.js";

/**
 * The regression gate: a run's test rows paired with a baseline's, per model and metric, and a verdict.
 * The primary metric (the experiment's first) fails the gate when it is significantly worse, or, with
 * `maxDrop`, when the low end of its difference interval is below −maxDrop. Other metrics are reported
 * but never fail it.
 */

/** One example of a test evaluation as results.json keeps it (enough to pair and recompute every metric). */
export interface ResultRow {
  id: string;
  expected: Record<string, unknown>;
  /** The prediction's output values, or null when the example failed. */
  prediction: Record<string, unknown> | null;
  scores: Record<string, number>;
}

/** Where the baseline came from and each model's test evaluation in it. */
export interface GateBaseline {
  /** "results.json at <path>" or "run <id>". */
  source: string;
  /** Model id → the evaluation to compare with; `"*"` when one evaluation stands for every model (a run id). */
  models: Map<string, ComparableReport>;
}

/** One model × metric of the gate. */
export interface GateCase {
  model: string;
  metric: string;
  primary: boolean;
  comparison: Comparison;
  /** Why this case fails the gate, or null. */
  failure: string | null;
}

export interface GateResult {
  baseline: string;
  maxDrop: number | null;
  cases: GateCase[];
  /** Some primary case failed: the command exits 1. */
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

interface StoredEvaluation { metrics?: unknown; rows?: unknown }

/**
 * Reads `--baseline`: a results.json file (each model's optimized test evaluation, else its baseline)
 * or an evaluation run id (or unique prefix) of the lab store, through `runById`.
 */
export function readBaseline(spec: string, cwd: string, byRunId: (id: string) => { id: string; rows: EvaluationRow[]; metrics: Record<string, number> }): GateBaseline {
  const path = resolve(cwd, spec);
  const looksLikeFile = spec.endsWith(".json") || spec.includes("/") || spec.includes("\\");
  if (!existsSync(path)) {
    if (looksLikeFile) throw new ValidationError(`--baseline: no file at ${path}`, { field: "baseline" });
    const run = byRunId(spec);
    return { source: `run ${run.id}`, models: new Map([["*", { results: run.rows, metrics: run.metrics }]]) };
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
    out.set(model, rowsToReport(evaluation.rows as ResultRow[], evaluation.metrics as Record<string, number>));
  }
  if (out.size === 0) throw new ValidationError(`--baseline: ${path} holds no model`, { field: "baseline" });
  return { source: `results.json at ${path}`, models: out };
}

/**
 * Pairs each model's test evaluation with the baseline's on every metric. Example ids must match (a
 * `ValidationError` names the first that does not); a model the baseline lacks is an error.
 */
export function runGate(
  baseline: GateBaseline,
  current: readonly { model: string; report: ComparableReport }[],
  metrics: readonly string[],
  options: { maxDrop?: number | undefined; confidence?: number } = {},
): GateResult {
  const maxDrop = options.maxDrop ?? null;
  if (maxDrop !== null && !(Number.isFinite(maxDrop) && maxDrop >= 0 && maxDrop <= 1)) {
    throw new ValidationError(`--max-drop expects a number between 0 and 1 (e.g. 0.02); received ${String(maxDrop)}`, { field: "maxDrop" });
  }
  const cases: GateCase[] = [];
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
        comparison = compare(base, report, { metric, ...(options.confidence === undefined ? {} : { confidence: options.confidence }) });
      } catch (error) {
        if (error instanceof ValidationError) {
          throw new ValidationError(`--baseline: model "${printable(model)}": ${error.message.replace(/^compare: /, "")} (the baseline is the first report, this run the second)`, { field: "baseline" });
        }
        throw error;
      }
      const primary = i === 0;
      let failure: string | null = null;
      if (primary && comparison.significant && comparison.diff < 0) {
        failure = `${metric} fell significantly: ${signed(comparison.diff)}, ${formatPValue(comparison.pValue)}`;
      } else if (primary && maxDrop !== null && comparison.ci[0] < -maxDrop) {
        failure = `${metric}: the interval's low end ${signed(comparison.ci[0])} is below -${maxDrop}`;
      }
      cases.push({ model, metric, primary, comparison, failure });
    });
  }
  return { baseline: baseline.source, maxDrop, cases, failed: cases.some((c) => c.failure !== null) };
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

/** JUnit XML: one testsuite, one testcase per model × metric, a `<failure>` with the numbers on a regression. */
export function junitXml(result: GateResult, suite: string): string {
  const failures = result.cases.filter((c) => c.failure !== null).length;
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="typelm" tests="${result.cases.length}" failures="${failures}">`,
    `  <testsuite name="${xml(suite)}" tests="${result.cases.length}" failures="${failures}" errors="0" skipped="0">`,
  ];
  for (const c of result.cases) {
    lines.push(`    <testcase classname="${xml(`${suite}.${c.model}`)}" name="${xml(`${c.metric}${c.primary ? " (primary)" : ""}`)}">`);
    if (c.failure !== null) lines.push(`      <failure message="${xml(c.failure)}" type="regression">${xml(numbers(c.comparison))}</failure>`);
    lines.push(`      <system-out>${xml(numbers(c.comparison))}</system-out>`, `    </testcase>`);
  }
  lines.push(`  </testsuite>`, `</testsuites>`, "");
  return lines.join("\n");
}

function cell(text: string): string {
  return printable(text).replace(/\|/g, "\\|");
}

/** A Markdown table of the gate for a CI job's step summary. */
export function markdownSummary(result: GateResult, suite: string): string {
  const lines = [
    `### typelm gate: ${cell(suite)} ${result.failed ? "failed" : "passed"}`,
    "",
    `Baseline: ${cell(result.baseline)}${result.maxDrop === null ? "" : `; max drop ${result.maxDrop}`}`,
    "",
    "| model | metric | baseline | this run | difference | interval | p | verdict |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const c of result.cases) {
    const k = c.comparison;
    const verdict = c.failure !== null ? "regression" : c.primary ? "ok" : k.significant ? (k.diff < 0 ? "worse (not gated)" : "better") : "no significant change";
    lines.push(`| ${cell(c.model)} | ${cell(c.metric)}${c.primary ? " (primary)" : ""} | ${k.a.toFixed(3)} | ${k.b.toFixed(3)} | ${signed(k.diff)} | ${signed(k.ci[0])} to ${signed(k.ci[1])} | ${pValueText(k.pValue)} | ${verdict} |`);
  }
  return lines.join("\n") + "\n\n";
}

/** The gate in terminal lines. */
export function gateLines(result: GateResult): string[] {
  return [
    `gate against ${result.baseline}${result.maxDrop === null ? "" : ` (max drop ${result.maxDrop})`}:`,
    ...result.cases.map((c) => `  ${c.model} ${c.metric}${c.primary ? " (primary)" : ""}: ${numbers(c.comparison)}${c.failure !== null ? ` — REGRESSION: ${c.failure}` : ""}`),
    result.failed ? "gate: failed" : "gate: passed",
  ];
}
