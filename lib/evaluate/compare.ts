import { ValidationError } from "../errors.js";
import type { EvaluationRow } from "../store/records.js";
import { fieldsOf } from "./report.js";
import { bootstrapInterval, mcnemarExact, metricStatistic, signFlipTest, type Interval, type PairedTest } from "./stats.js";

/** What `compare` reads of an evaluation: its rows and its metric values (an `EvaluationReport` has both). */
export interface ComparableReport {
  results: readonly EvaluationRow[];
  metrics: Readonly<Record<string, number>>;
}

/** Options of `compare`: the metric compared and the confidence of the interval. */
export interface CompareOptions {
  /** The metric compared (default: the first metric of the first report). */
  metric?: string;
  /** Of the interval, and the significance level 1 − confidence (default 0.95). */
  confidence?: number;
}

/** Report B against report A on the same examples, paired by example id. */
export interface Comparison {
  metric: string;
  /** Pairs (examples in both reports). */
  n: number;
  /** The metric's value in A and in B. */
  a: number;
  b: number;
  /** b − a. */
  diff: number;
  /** Paired percentile bootstrap interval of the difference at `confidence` (2,000 resamples, seed 0). */
  ci: Interval;
  /** Two-sided p-value of `test`. */
  pValue: number;
  /** `pValue < 1 − confidence`. */
  significant: boolean;
  /** "McNemar exact" when every score is 0 or 1; else the paired sign-flip test, "sign-flip exact" or "sign-flip permutation". */
  test: PairedTest;
  confidence: number;
  /** Example ids whose score rose from A to B, in A's row order (`#index` for a row without an id). */
  better: string[];
  /** Example ids whose score fell. */
  worse: string[];
}

/**
 * Compares two evaluations of the same examples on one metric. Rows are paired by `exampleId`; the
 * interval is a paired bootstrap of the difference (the same resampled examples in both, `f1_score`
 * recomputed on each resample); the p-value is the exact McNemar test when every per-example score is
 * 0 or 1, else the paired sign-flip permutation test. Both tests use the per-example scores.
 */
export function compare(a: ComparableReport, b: ComparableReport, options: CompareOptions = {}): Comparison {
  checkReport(a, "first");
  checkReport(b, "second");
  const confidence = options.confidence ?? 0.95;
  if (typeof confidence !== "number" || !(confidence > 0 && confidence < 1)) {
    throw new ValidationError(`compare: confidence must be a number between 0 and 1 (e.g. 0.95); received ${JSON.stringify(confidence)}`, { field: "confidence" });
  }
  const metric = options.metric ?? Object.keys(a.metrics)[0];
  if (metric === undefined) throw new ValidationError("compare: the first report has no metrics to compare", { field: "metric" });
  for (const [report, which] of [[a, "first"], [b, "second"]] as const) {
    if (typeof report.metrics[metric] !== "number") {
      throw new ValidationError(
        `compare: metric "${metric}" is not in both reports; the ${which} has ${Object.keys(report.metrics).map((m) => `"${m}"`).join(", ") || "none"}`,
        { field: "metric" },
      );
    }
  }

  const rowsA = a.results;
  const byId = new Map<string, EvaluationRow>();
  for (const row of b.results) byId.set(idOf(row), row);
  const seen = new Set<string>();
  const rowsB = rowsA.map((row) => {
    const id = idOf(row);
    const other = byId.get(id);
    if (other === undefined) throw mismatch(id, "first", "second");
    seen.add(id);
    return other;
  });
  for (const row of b.results) if (!seen.has(idOf(row))) throw mismatch(idOf(row), "second", "first");
  const n = rowsA.length;
  if (n === 0) throw new ValidationError("compare: the reports hold no examples", { field: "a" });

  const valueA = a.metrics[metric]!;
  const valueB = b.metrics[metric]!;
  const statA = metricStatistic(metric, rowsA, fieldsOf(a), valueA);
  const statB = metricStatistic(metric, rowsB, fieldsOf(b), valueB);
  const ci = bootstrapInterval(n, (indices) => statB(indices) - statA(indices), confidence);

  const scoreA = rowsA.map((r) => r.scores?.[metric] ?? 0);
  const scoreB = rowsB.map((r) => r.scores?.[metric] ?? 0);
  const better: string[] = [], worse: string[] = [];
  rowsA.forEach((row, i) => {
    if (scoreB[i]! > scoreA[i]!) better.push(idOf(row));
    else if (scoreB[i]! < scoreA[i]!) worse.push(idOf(row));
  });

  let pValue: number, test: PairedTest;
  const binary = (s: number) => s === 0 || s === 1;
  if (scoreA.every(binary) && scoreB.every(binary)) {
    // Every rise is 0 → 1 and every fall 1 → 0: the discordant pairs are `better` and `worse`.
    pValue = mcnemarExact(better.length, worse.length);
    test = "McNemar exact";
  } else {
    const result = signFlipTest(scoreB.map((s, i) => s - scoreA[i]!));
    pValue = result.pValue;
    test = result.exact ? "sign-flip exact" : "sign-flip permutation";
  }
  return {
    metric, n, a: valueA, b: valueB, diff: valueB - valueA, ci, pValue, significant: pValue < 1 - confidence, test, confidence, better, worse,
  };
}

/** A row's pairing key: its example id, else `#index`. */
function idOf(row: EvaluationRow): string {
  return row.exampleId ?? `#${row.index}`;
}

function mismatch(id: string, inReport: string, notIn: string): ValidationError {
  return new ValidationError(
    `compare: example "${id}" is in the ${inReport} report but not in the ${notIn}; both reports must hold the same examples (evaluate both on the same test set)`,
    { field: "exampleId" },
  );
}

function checkReport(report: unknown, which: string): asserts report is ComparableReport {
  const r = report as Partial<ComparableReport> | null;
  if (r === null || typeof r !== "object" || !Array.isArray(r.results) || r.metrics === null || typeof r.metrics !== "object") {
    throw new ValidationError(
      `compare: the ${which} report must be an Evaluation report (with results and metrics); received ${r === null ? "null" : Array.isArray(r) ? "an array" : typeof r}`,
      { field: which === "first" ? "a" : "b" },
    );
  }
  const ids = new Set<string>();
  for (const row of r.results) {
    const id = idOf(row);
    if (ids.has(id)) {
      throw new ValidationError(`compare: example "${id}" appears twice in the ${which} report; rows are paired by example id, so each must be unique`, { field: "exampleId" });
    }
    ids.add(id);
  }
}

/** A difference with its sign: "+0.269", "-0.050", "0.000" for none. */
export function signed(value: number, digits = 3): string {
  const text = Math.abs(value).toFixed(digits);
  if (Number(text) === 0) return (0).toFixed(digits);
  return `${value > 0 ? "+" : "-"}${text}`;
}

/** Two significant digits: "p = 0.065", "p = 0.5", "p = 0.0002", "p < 0.0001", "p = 1". */
export function formatPValue(p: number): string {
  if (p < 0.0001) return "p < 0.0001";
  if (p < 0.001) return `p = ${p.toFixed(4)}`;
  return `p = ${Number(p.toPrecision(2))}`;
}

/** "significant at the 5% level" or "not significant at the 5% level". */
export function significanceWords(c: Pick<Comparison, "significant" | "confidence">): string {
  const level = Number(((1 - c.confidence) * 100).toPrecision(6));
  return `${c.significant ? "significant" : "not significant"} at the ${level}% level`;
}

/**
 * The comparison in one line: "+0.269 (95% CI +0.183 to +0.356), p < 0.0001, McNemar exact: significant
 * at the 5% level".
 */
export function describeComparison(c: Pick<Comparison, "diff" | "ci" | "pValue" | "test" | "significant" | "confidence">): string {
  const percent = Number((c.confidence * 100).toPrecision(6));
  return `${signed(c.diff)} (${percent}% CI ${signed(c.ci[0])} to ${signed(c.ci[1])}), ${formatPValue(c.pValue)}, ${c.test}: ${significanceWords(c)}`;
}
