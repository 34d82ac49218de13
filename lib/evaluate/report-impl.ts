// The bodies of `EvaluationReport` (lib/evaluate/report.ts): its confidence intervals and their methods
// (computed on first read), its confusion matrices and per-label statistics, and its JSON form.
// Deferred (scripts/deferred-modules.mjs): loaded at the first such read, not at `import "typelm"`.
import { ValidationError } from "../errors.js";
import type { EvaluationRow } from "../store/records.js";
import { labelOf, type FieldInfo } from "./fields.js";
import { labelsOf, perLabel as labelStats, type LabelStats } from "./metrics.js";
import type { ConfusionMatrix, EvaluationReport, EvaluationSummary } from "./report.js";
import type { CiMethod, Interval } from "./stats/methods.js";
import { isShare, metricInterval } from "./stats/metric-interval.js";

/** What a report keeps apart from its public fields: the expected fields' kinds, and its intervals once known. */
export interface ReportState {
  readonly fields: readonly FieldInfo[];
  ci: Record<string, Interval> | undefined;
  ciMethod: Record<string, CiMethod> | undefined;
}

/** `report.ci`: each metric's interval, computed (with its method) from the rows at the first read. */
export function reportCi(metrics: Record<string, number>, results: readonly EvaluationRow[], state: ReportState): Record<string, Interval> {
  if (state.ci === undefined) computeIntervals(metrics, results, state);
  return state.ci!;
}

/** `report.ciMethod`: each metric's interval method; for intervals given without methods, the method the rows call for. */
export function reportCiMethod(metrics: Record<string, number>, results: readonly EvaluationRow[], state: ReportState): Record<string, CiMethod> {
  if (state.ciMethod === undefined) {
    if (state.ci === undefined) computeIntervals(metrics, results, state);
    else {
      // Intervals given without their methods: the method the rows call for.
      const methods: Record<string, CiMethod> = {};
      for (const name of Object.keys(metrics)) methods[name] = isShare(name, results, state.fields, metrics[name]) ? "wilson" : "bootstrap-bca";
      state.ciMethod = methods;
    }
  }
  return state.ciMethod!;
}

function computeIntervals(metrics: Record<string, number>, results: readonly EvaluationRow[], state: ReportState): void {
  const ci: Record<string, Interval> = {};
  const methods: Record<string, CiMethod> = {};
  for (const [name, value] of Object.entries(metrics)) {
    const { interval, method } = metricInterval(name, results, state.fields, value);
    ci[name] = interval;
    methods[name] = method;
  }
  state.ci = ci;
  state.ciMethod ??= methods;
}

/** `report.confusion(field)`: gold label against predicted label for a classification field (default: the first label field). */
export function reportConfusion(results: readonly EvaluationRow[], fields: readonly FieldInfo[], field: string | undefined): ConfusionMatrix {
  const f = labelField(fields, field, "confusion");
  const { gold, predicted } = labels(results, f.name);
  const all = orderedLabels(f, gold, predicted);
  const index = new Map(all.map((l, i) => [l, i]));
  const matrix = all.map(() => all.map(() => 0));
  const unanswered = all.map(() => 0);
  gold.forEach((g, i) => {
    const row = index.get(g)!;
    const p = predicted[i];
    if (p === null || p === undefined) unanswered[row]!++;
    else matrix[row]![index.get(p)!]!++;
  });
  return { field: f.name, labels: all, matrix, unanswered };
}

/** `report.perLabel(field)`: precision, recall, F1 and support per label of a classification field. */
export function reportPerLabel(results: readonly EvaluationRow[], fields: readonly FieldInfo[], field: string | undefined): Record<string, LabelStats> {
  const f = labelField(fields, field, "perLabel");
  const { gold, predicted } = labels(results, f.name);
  const out: Record<string, LabelStats> = {};
  for (const label of orderedLabels(f, gold, predicted)) out[label] = labelStats(gold, predicted, label);
  return out;
}

/** `report.toJSON()`: metrics, rows, failures, feedback, totals, run id, name, intervals and their methods. */
export function reportJSON(report: EvaluationReport): EvaluationSummary {
  return {
    metrics: report.metrics, results: report.results, failures: report.failures, feedback: report.feedback,
    inputTokens: report.inputTokens, outputTokens: report.outputTokens, cost: report.cost, durationMs: report.durationMs, judge: report.judge, runId: report.runId, name: report.name,
    ci: report.ci, ciMethod: report.ciMethod,
  };
}

function labels(results: readonly EvaluationRow[], field: string): { gold: string[]; predicted: (string | null)[] } {
  return {
    gold: results.map((r) => labelOf(r.expected[field]) ?? ""),
    predicted: results.map((r) => (r.error === null && r.prediction !== null ? labelOf(r.prediction[field]) : null)),
  };
}

function labelField(fields: readonly FieldInfo[], field: string | undefined, method: string): FieldInfo {
  const labelFields = fields.filter((f) => f.label);
  if (field === undefined) {
    const first = labelFields[0];
    if (first !== undefined) return first;
    throw new ValidationError(
      `report.${method}(): no classification field among the expected outputs (${fields.map((f) => f.name).join(", ") || "none"}); ` +
        "expected an enum, boolean or single-word label field. Pass the field name to use another.",
      { field: "field" },
    );
  }
  const found = fields.find((f) => f.name === field);
  if (found === undefined) {
    throw new ValidationError(
      `report.${method}("${field}"): no such expected output field; the examples have: ${fields.map((f) => f.name).join(", ")}`,
      { field },
    );
  }
  return found;
}

function orderedLabels(f: FieldInfo, gold: readonly string[], predicted: readonly (string | null)[]): string[] {
  const seen = labelsOf(gold, predicted);
  return [...new Set([...(f.labels ?? []), ...seen])];
}
