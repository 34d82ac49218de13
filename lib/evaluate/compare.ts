import { ValidationError } from "../errors.js";
import type { EvaluationRow } from "../store/records.js";
import { fieldsOf } from "./report.js";
import { jackknifeStandardError } from "./stats/bootstrap.js";
import { f1AggregateFields, f1Statistic } from "./stats/f1-statistic.js";
import { holm } from "./stats/holm.js";
import { mcnemarComparison } from "./stats/mcnemar.js";
import { mcnemarMde, normalMde } from "./stats/mde.js";
import type { CiMethod, Interval, PairedTest } from "./stats/methods.js";
import { metricStatistic } from "./stats/metric-interval.js";
import { macroF1PermutationTest, signFlipTest } from "./stats/permutation.js";
import { differenceStatistic, jackknife } from "./stats/statistic.js";
import { invertPairedTest } from "./stats/test-inversion.js";

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
  /** Interval of the difference at `confidence`, computed as `ciMethod` says. */
  ci: Interval;
  /**
   * How `ci` was computed; each excludes 0 exactly when `significant`: `"clopper-pearson"` for 0/1
   * scores (the exact interval of the share improved among the changed examples, scaled to a
   * difference); `"sign-flip-inversion"` and `"permutation-macro-f1-inversion"` for the others (the
   * shifts of the difference that the same permutation test does not reject, see `invertPairedTest`).
   */
  ciMethod: CiMethod;
  /** Two-sided p-value of `test`. */
  pValue: number;
  /** `pValue` adjusted for the other comparisons it is reported with (Holm); on its own, `pValue`. */
  pAdjusted: number;
  /** `pValue < 1 − confidence`. */
  significant: boolean;
  /**
   * `"mcnemar-exact"` when every score is 0 or 1; `"permutation-macro-f1"` for the built-in `f1_score`
   * of label fields (a paired permutation test of the macro-F1 difference); else `"sign-flip"` (the
   * paired sign-flip permutation test of the mean difference).
   */
  test: PairedTest;
  confidence: number;
  /**
   * The smallest true difference these n examples and the observed share of changed examples detect
   * with 80% power at the level 1 − confidence: exact binomial power of the McNemar test for 0/1
   * scores, else (z_{1−α/2} + z_{0.8})·se with the jackknife standard error of the difference. Null when
   * no example changed, or when too few changed for the exact test ever to reject.
   */
  mde: number | null;
  /** Example ids whose score rose from A to B, in A's row order (`#index` for a row without an id). */
  better: string[];
  /** Example ids whose score fell. */
  worse: string[];
}

/**
 * Compares two evaluations of the same examples on one metric. Rows are paired by `exampleId`. For
 * 0/1 scores: the exact McNemar test and its dual Clopper–Pearson interval. For the built-in
 * `f1_score` of label fields: a permutation test of the macro-F1 difference (swapping the two
 * predictions of an example). Otherwise: the paired sign-flip test of the mean difference. In both the
 * interval inverts the same test (the shifts it does not reject), so it excludes 0 exactly when the
 * test is significant. `mde` is the difference detectable with 80% power; `pAdjusted` equals `pValue` until
 * `adjustComparisons` adjusts a family of comparisons.
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
  const scoreA = rowsA.map((r) => r.scores?.[metric] ?? 0);
  const scoreB = rowsB.map((r) => r.scores?.[metric] ?? 0);
  const better: string[] = [], worse: string[] = [];
  rowsA.forEach((row, i) => {
    if (scoreB[i]! > scoreA[i]!) better.push(idOf(row));
    else if (scoreB[i]! < scoreA[i]!) worse.push(idOf(row));
  });

  const fields = fieldsOf(a) ?? fieldsOf(b);
  const fieldsA = f1AggregateFields(metric, rowsA, fields, valueA);
  const fieldsB = f1AggregateFields(metric, rowsB, fields, valueB);
  const binary = (s: number) => s === 0 || s === 1;
  let pValue: number, test: PairedTest, ci: Interval, ciMethod: CiMethod, mde: number | null;
  if (fieldsA !== null && fieldsB !== null && fieldsA.some((f) => f.label)) {
    // Macro-F1 is not a mean of per-row scores: test and interval recompute it.
    const result = macroF1PermutationTest(rowsA, rowsB, fieldsA, { keepPatterns: true });
    pValue = result.pValue;
    test = "permutation-macro-f1";
    // Both f1_scores lie in [0, 1], so the difference in [−1, 1].
    ci = invertPairedTest(result.observed, result.patterns!, confidence, pValue < 1 - confidence, 1);
    ciMethod = "permutation-macro-f1-inversion";
    const se = jackknifeStandardError(jackknife(n, differenceStatistic(f1Statistic(rowsA, fieldsA), f1Statistic(rowsB, fieldsA), n)));
    mde = result.changed === 0 || n < 2 ? null : normalMde(se, confidence);
  } else if (scoreA.every(binary) && scoreB.every(binary)) {
    // Every rise is 0 → 1 and every fall 1 → 0: the discordant pairs are `better` and `worse`.
    const result = mcnemarComparison(better.length, worse.length, n, confidence);
    pValue = result.pValue;
    ci = result.ci;
    test = "mcnemar-exact";
    ciMethod = "clopper-pearson";
    mde = mcnemarMde(n, better.length + worse.length, confidence);
  } else {
    const differences = scoreB.map((s, i) => s - scoreA[i]!);
    const result = signFlipTest(differences, undefined, undefined, true);
    pValue = result.pValue;
    test = "sign-flip";
    // A changed example's difference is at most the scores' range: 1 for scores in [0, 1].
    let lowest = Infinity, highest = -Infinity;
    for (const s of [...scoreA, ...scoreB]) {
      lowest = Math.min(lowest, s);
      highest = Math.max(highest, s);
    }
    const range = lowest >= 0 && highest <= 1 ? 1 : highest - lowest;
    const changed = differences.filter((d) => d !== 0).length;
    const observed = differences.reduce((x, y) => x + y, 0) / n;
    ci = invertPairedTest(observed, result.patterns!, confidence, pValue < 1 - confidence, (changed / n) * range);
    ciMethod = "sign-flip-inversion";
    const statA = metricStatistic(metric, rowsA, fields, valueA);
    const statB = metricStatistic(metric, rowsB, fields, valueB);
    mde = better.length + worse.length === 0 || n < 2 ? null : normalMde(jackknifeStandardError(jackknife(n, differenceStatistic(statA, statB, n))), confidence);
  }
  return {
    metric, n, a: valueA, b: valueB, diff: valueB - valueA, ci, ciMethod, pValue, pAdjusted: pValue, significant: pValue < 1 - confidence, test, confidence,
    mde, better, worse,
  };
}

/**
 * Holm's adjustment over a family of comparisons (e.g. every metric × model of one report): copies
 * of the comparisons with `pAdjusted` set to the Holm-adjusted p-value of each. `significant` still
 * reads the unadjusted `pValue` (the first metric is the primary one).
 */
export function adjustComparisons<T extends { pValue: number }>(comparisons: readonly T[]): (T & { pAdjusted: number })[] {
  const adjusted = holm(comparisons.map((c) => c.pValue));
  return comparisons.map((c, i) => ({ ...c, pAdjusted: adjusted[i]! }));
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

/** A p-value for a table cell, without the "p": "0.065", "0.0002", "< 0.0001", "1". */
export function pValueText(p: number): string {
  return formatPValue(p).replace(/^p\s*(= )?/, "");
}

/** "significant at the 5% level" or "not significant at the 5% level". */
export function significanceWords(c: Pick<Comparison, "significant" | "confidence">): string {
  const level = Number(((1 - c.confidence) * 100).toPrecision(6));
  return `${c.significant ? "significant" : "not significant"} at the ${level}% level`;
}

/** "mde 0.262 (80% power)", or why there is none. */
export function describeMde(mde: number | null): string {
  return mde === null ? "mde: none (too few changed examples for 80% power)" : `mde ${mde.toFixed(3)} (80% power)`;
}

/**
 * The comparison in one line: "+0.269 (95% CI +0.183 to +0.356, clopper-pearson), p < 0.0001,
 * mcnemar-exact: significant at the 5% level". A Holm-adjusted p that differs from p follows p; a
 * result that is not significant ends with its minimum detectable effect ("; mde 0.262 (80% power)").
 * The interval's method, Holm's p and the mde are left out when the comparison does not carry them
 * (results written before they existed).
 */
export function describeComparison(
  c: Pick<Comparison, "diff" | "ci" | "pValue" | "test" | "significant" | "confidence"> & Partial<Pick<Comparison, "ciMethod" | "pAdjusted" | "mde">>,
): string {
  const percent = Number((c.confidence * 100).toPrecision(6));
  const method = c.ciMethod === undefined ? "" : `, ${c.ciMethod}`;
  const adjusted = c.pAdjusted === undefined || c.pAdjusted === c.pValue ? "" : `, Holm-adjusted ${formatPValue(c.pAdjusted)}`;
  const mde = c.significant || c.mde === undefined ? "" : `; ${describeMde(c.mde)}`;
  return `${signed(c.diff)} (${percent}% CI ${signed(c.ci[0])} to ${signed(c.ci[1])}${method}), ${formatPValue(c.pValue)}${adjusted}, ${c.test}: ${significanceWords(c)}${mde}`;
}
