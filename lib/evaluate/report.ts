import type { PromptCacheUsage } from "./prompt-cache.js";
import type { EvaluationRow } from "../store/records.js";
import type { FieldInfo } from "./fields.js";
import type { LabelStats } from "./metrics.js";
import type { CiMethod, Interval } from "./stats/methods.js";
import { reportCi, reportCiMethod, reportConfusion, reportJSON, reportPerLabel, type ReportState } from "./report-impl.js";

/** The expected-field kinds of each report, for `compare` (which recomputes `f1_score` on resamples). */
const FIELDS = new WeakMap<object, readonly FieldInfo[]>();

/** The field kinds an `EvaluationReport` was scored with; undefined for any other object. */
export function fieldsOf(report: object): readonly FieldInfo[] | undefined {
  return FIELDS.get(report);
}

/** Counts of gold label (row) against predicted label (column) for one output field. */
export interface ConfusionMatrix {
  field: string;
  /** Row and column order: the declared labels first (enum order), then any other seen. */
  labels: string[];
  /** `matrix[i][j]`: examples whose expected label is `labels[i]` and predicted label `labels[j]`. */
  matrix: number[][];
  /** Per expected label: examples with no predicted label (failed, or the field missing). */
  unanswered: number[];
}

/** The model calls an evaluation's metrics made (judges), apart from the module's. */
export interface JudgeUsage {
  /** Calls answered (cache hits included; they cost nothing). */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** USD; calls whose price is unknown add nothing. */
  cost: number;
}

/** Everything an evaluation measured; each metric is also a property of the report itself. */
export interface EvaluationSummary {
  /** Metric name → value over the run, in [0, 1]. */
  metrics: Record<string, number>;
  /** One row per example, in the order of the examples given. */
  results: EvaluationRow[];
  /** The rows that failed (their `error` says why). */
  failures: EvaluationRow[];
  /** Per row (same order as `results`): metric name → the feedback text the metric returned. */
  feedback: Record<string, string>[];
  /** The module's tokens and cost (the metrics' model calls are in `judge`). */
  inputTokens: number;
  outputTokens: number;
  /** USD. */
  cost: number;
  durationMs: number;
  /**
   * The model calls the metrics made (judges), counted apart from the module's; zeros when no metric
   * called a model. A resumed run counts only the examples run after resuming.
   */
  judge?: JudgeUsage;
  /** The lab store run id, or null when the run was not recorded. */
  runId: string | null;
  /** The `name` given to the Evaluation (charts label the run with it), else undefined. */
  name?: string | undefined;
  /**
   * Metric name → 95% confidence interval `[low, high]`: the modified Wilson interval for a share
   * (every per-example score 0 or 1), BCa bootstrap over the examples for the others (2,000 resamples,
   * seed 0). Computed from the rows when not given.
   */
  ci?: Record<string, Interval>;
  /** Metric name → how its interval was computed: `"wilson"` or `"bootstrap-bca"`. Computed when not given. */
  ciMethod?: Record<string, CiMethod>;
  /** The module's prompt-cache and reasoning tokens and what the cache saved; absent when no call used a prompt cache or reasoned. */
  promptCache?: PromptCacheUsage | undefined;
  /** What the run warns of, one sentence each (a judge that gave every row one verdict; a rescore's failed source). */
  warnings?: string[];
}

/** What `Evaluation.evaluate` returns. */
export class EvaluationReport implements EvaluationSummary {
  readonly metrics: Record<string, number>;
  readonly results: EvaluationRow[];
  readonly failures: EvaluationRow[];
  readonly feedback: Record<string, string>[];
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cost: number;
  readonly durationMs: number;
  /** The model calls the metrics made (judges): calls, tokens and cost, apart from the module's. */
  readonly judge: JudgeUsage;
  readonly runId: string | null;
  readonly name: string | undefined;
  /** The module's prompt-cache and reasoning tokens and what the cache saved; undefined when no call used a prompt cache or reasoned. */
  readonly promptCache: PromptCacheUsage | undefined;
  /** What the run warns of, one sentence each ([] when nothing): a judge that gave every row one verdict, a rescore's failed source. */
  readonly warnings: string[];
  /** Set for a built-in metric when it was asked for (every metric is also `report[name]`). */
  declare readonly accuracy?: number;
  declare readonly f1_score?: number;
  declare readonly exact_match?: number;
  declare readonly token_f1?: number;
  readonly #state: ReportState;

  constructor(summary: EvaluationSummary, fields: readonly FieldInfo[]) {
    this.metrics = summary.metrics;
    this.results = summary.results;
    this.failures = summary.failures;
    this.feedback = summary.feedback;
    this.inputTokens = summary.inputTokens;
    this.outputTokens = summary.outputTokens;
    this.cost = summary.cost;
    this.durationMs = summary.durationMs;
    this.judge = summary.judge ?? { calls: 0, inputTokens: 0, outputTokens: 0, cost: 0 };
    this.runId = summary.runId;
    this.name = summary.name;
    this.warnings = summary.warnings ?? [];
    this.promptCache = summary.promptCache;
    this.#state = { fields, ci: summary.ci, ciMethod: summary.ciMethod };
    FIELDS.set(this, fields);
    for (const [name, value] of Object.entries(summary.metrics)) {
      // A user metric named like a report field ("results", "cost", ...) is only in `metrics`.
      if (!(name in this)) Object.defineProperty(this, name, { value, enumerable: true });
    }
  }

  /**
   * Metric name → 95% confidence interval `[low, high]` of its value. A share (a mean of per-example
   * scores that are all 0 or 1: `accuracy`, `exact_match`, a 0/1 metric function) has the modified
   * Wilson interval (Brown, Cai & DasGupta); `f1_score`, `token_f1` and other metric functions a BCa
   * bootstrap over the examples (2,000 resamples of the rows with replacement, seed 0, so the same rows
   * give the same interval; `f1_score` recomputed as macro-F1 on each resample), except that a value in
   * [0, 1] whose rows show no spread gets the Wilson interval of that value as a share ("wilson").
   * `ciMethod` names the method of each. Computed on first read.
   */
  get ci(): Record<string, Interval> {
    return this.#state.ci ?? reportCi(this.metrics, this.results, this.#state);
  }

  /** Metric name → how `ci` was computed: `"wilson"` for a share, else `"bootstrap-bca"`. */
  get ciMethod(): Record<string, CiMethod> {
    return this.#state.ciMethod ?? reportCiMethod(this.metrics, this.results, this.#state);
  }

  /** The confusion matrix of a classification field (default: the first label field). */
  confusion(field?: string): ConfusionMatrix {
    return reportConfusion(this.results, this.#state.fields, field);
  }

  /** Precision, recall, F1 and support per label of a classification field (default: the first label field). */
  perLabel(field?: string): Record<string, LabelStats> {
    return reportPerLabel(this.results, this.#state.fields, field);
  }

  /** The report as plain JSON: metrics, rows, failures, feedback, totals, run id, name, intervals and their methods. */
  toJSON(): EvaluationSummary {
    return reportJSON(this);
  }
}
