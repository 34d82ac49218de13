import { ValidationError } from "../errors.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { TraceEntry } from "../predict/trace.js";
import type { EvaluationRow } from "../store/records.js";
import { labelOf, textOf, type FieldInfo } from "./fields.js";
import { defaultMetric, isMetricObject, metricScore, sameValue, type Metric, type MetricObject, type MetricScore } from "./metric.js";
import { exactMatch, macroF1, tokenF1 } from "./metrics.js";

const BUILTIN_METRICS = ["accuracy", "f1_score", "exact_match", "token_f1"] as const;
/** The built-in metrics: "accuracy", "f1_score", "exact_match" and "token_f1". */
export type BuiltinMetricName = (typeof BUILTIN_METRICS)[number];

/**
 * Names a metric may not have: they are keys of the report's `metrics`, of every row's `scores` and
 * of the stored JSON, where `__proto__` is no key at all (assigning it sets the prototype, so the
 * metric silently vanished) and `constructor` / `prototype` would shadow what objects carry.
 */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** What `Evaluation.evaluate` accepts in `metrics`: a built-in name, a metric function or a metric object (a `Judge`). */
export type MetricSpec = BuiltinMetricName | Metric | MetricObject;

/** One metric of a run, resolved: its report name and how it scores one example. */
export interface ResolvedMetric {
  name: string;
  builtin: BuiltinMetricName | undefined;
  /** Scores one prediction in [0, 1]; throws when the metric fails. */
  score(example: FewShotExample, prediction: Record<string, unknown>, trace: readonly TraceEntry[]): Promise<MetricScore>;
}

/**
 * Resolves metric names and functions, checking them all before any model is called. With no
 * metrics, the default metric (every expected field equal) is reported as `accuracy`.
 */
export function resolveMetrics(specs: readonly MetricSpec[] | undefined, fields: readonly FieldInfo[]): ResolvedMetric[] {
  if (specs !== undefined && !Array.isArray(specs)) {
    throw new ValidationError(`Evaluation metrics must be an array of metric names, functions or judges; received ${typeof specs}`, { field: "metrics" });
  }
  const list = specs === undefined || specs.length === 0 ? ["accuracy" as const] : specs;
  const resolved: ResolvedMetric[] = [];
  const names = new Set<string>();
  list.forEach((spec, i) => {
    let metric: ResolvedMetric;
    if (typeof spec === "function") {
      const name = spec.name || `metric${i}`;
      metric = { name, builtin: undefined, score: async (ex, p, t) => metricScore(await spec(ex, p, t), name) };
    } else if (isMetricObject(spec)) {
      const { name } = spec;
      metric = { name, builtin: undefined, score: async (ex, p, t) => metricScore(await spec.metric(ex, p, t), name) };
    } else if (typeof spec === "string" && (BUILTIN_METRICS as readonly string[]).includes(spec)) {
      metric = builtin(spec as BuiltinMetricName, fields);
    } else {
      throw new ValidationError(
        `Unknown metric ${JSON.stringify(spec)} at metrics[${i}]: expected one of ${BUILTIN_METRICS.map((n) => `"${n}"`).join(", ")} ` +
          "or a function (example, prediction, trace?) => number | boolean | { score, feedback }, or a Judge",
        { field: `metrics[${i}]` },
      );
    }
    if (RESERVED_NAMES.has(metric.name)) {
      throw new ValidationError(
        `metrics[${i}] is named "${metric.name}", a name every JavaScript object already has a use for ` +
          `(it would vanish from report.metrics or shadow the object's own); rename the function, e.g. const my_metric = (example, prediction) => ...`,
        { field: `metrics[${i}]` },
      );
    }
    if (names.has(metric.name)) {
      throw new ValidationError(`Two metrics are named "${metric.name}" (metrics[${i}]); give each function its own name`, { field: `metrics[${i}]` });
    }
    names.add(metric.name);
    resolved.push(metric);
  });
  return resolved;
}

function builtin(name: BuiltinMetricName, fields: readonly FieldInfo[]): ResolvedMetric {
  const perField = (ex: FewShotExample, p: Record<string, unknown>, fn: (field: FieldInfo, pred: unknown, gold: unknown) => number): number => {
    if (fields.length === 0) return 0;
    let sum = 0;
    for (const f of fields) sum += fn(f, p?.[f.name], ex.output[f.name]);
    return sum / fields.length;
  };
  const scorers: Record<BuiltinMetricName, (ex: FewShotExample, p: Record<string, unknown>) => number> = {
    accuracy: (ex, p) => (defaultMetric(ex, p) ? 1 : 0),
    exact_match: (ex, p) => (fields.every((f) => matchesExactly(p?.[f.name], ex.output[f.name])) ? 1 : 0),
    token_f1: (ex, p) => perField(ex, p, (_f, pred, gold) => tokenF1(textOf(pred), textOf(gold))),
    // Per example, a label scores 1/0 and free text its token F1; the report's value is computed over
    // the whole run (macro-F1 for labels), see `aggregate`.
    f1_score: (ex, p) => perField(ex, p, (f, pred, gold) => (f.label ? (sameValue(pred, gold) ? 1 : 0) : tokenF1(textOf(pred), textOf(gold)))),
  };
  const scorer = scorers[name];
  return { name, builtin: name, score: async (ex, p) => ({ score: scorer(ex, p), feedback: undefined }) };
}

/** Strings match after SQuAD normalisation; other values when equal. */
function matchesExactly(predicted: unknown, gold: unknown): boolean {
  if (typeof gold === "string" && typeof predicted === "string") return exactMatch(predicted, gold) === 1;
  return sameValue(predicted, gold);
}

/**
 * A metric's value over the run: the mean of the rows' scores (failed rows count 0), except
 * `f1_score`, which is macro-F1 over the labels for label fields (a failed example is a miss for its
 * gold label) and the mean token F1 for free text, averaged over the expected fields.
 */
export function aggregate(metric: ResolvedMetric, rows: readonly EvaluationRow[], fields: readonly FieldInfo[]): number {
  if (rows.length === 0) return 0;
  if (metric.builtin !== "f1_score" || fields.length === 0) {
    let sum = 0;
    for (const row of rows) sum += row.scores[metric.name] ?? 0;
    return sum / rows.length;
  }
  let total = 0;
  for (const f of fields) {
    if (f.label) {
      const gold = rows.map((r) => labelOf(r.expected[f.name]) ?? "");
      const predicted = rows.map((r) => (r.error === null && r.prediction !== null ? labelOf(r.prediction[f.name]) : null));
      total += macroF1(gold, predicted);
    } else {
      let sum = 0;
      for (const r of rows) sum += r.error === null && r.prediction !== null ? tokenF1(textOf(r.prediction[f.name]), textOf(r.expected[f.name])) : 0;
      total += sum / rows.length;
    }
  }
  return total / fields.length;
}
