// The gate's vocabulary: its level and default tolerance, verdicts, cases and results, a baseline as
// read, and the rows results.json keeps (turned back into rows `compare` pairs).
import { ValidationError } from "../../errors.js";
import type { ComparableReport, Comparison } from "../../evaluate/compare.js";
import type { EvaluationRow, RunStatus } from "../../store/records.js";

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
