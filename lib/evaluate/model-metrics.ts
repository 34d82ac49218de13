// What an evaluation checks of metrics that call a model of their own (judges): every such metric's
// model resolved before the run, one call of each before the first row, and a warning when one gave
// every row the same verdict. The judge room provides a loader of these checks when it loads (lib/judge/judge.ts),
// which loads them at the first evaluation with a judge among its metrics;
// evaluate/ sees judges only through this interface and the metric interface, never by importing them.
import type { FewShotExample } from "../prompt/few-shot.js";

/** The `code` of the warning an evaluation gives when a judge gave one verdict to every row it judged. */
export const JUDGE_ONE_VERDICT = "TYPELM_JUDGE_ONE_VERDICT";

/** A row as the one-verdict check reads it. */
export interface JudgedRow {
  error: string | null;
  scores: Record<string, number>;
  details?: Record<string, Record<string, unknown>>;
}

/** The checks of metrics with a model of their own; see lib/judge/judge-check.ts for what each does. */
export interface ModelMetricChecks {
  /** Resolves each such metric's model, with no call; throws a ConfigurationError for one without a usable model. */
  checkModels(metrics: readonly unknown[] | undefined): void;
  /** One call of each such metric on `example` and `prediction`, before the run. */
  checkAnswers(
    metrics: readonly unknown[] | undefined, example: FewShotExample, prediction: Record<string, unknown>, timeoutMs: number, checked?: Set<unknown>,
  ): Promise<void>;
  /** One sentence for each such metric that gave every row it judged the same verdict. */
  oneVerdictWarnings(metrics: readonly unknown[] | undefined, rows: readonly JudgedRow[]): string[];
}

/** The checks when no metric has a model of its own. */
const NONE: ModelMetricChecks = {
  checkModels: () => {},
  checkAnswers: async () => {},
  oneVerdictWarnings: () => [],
};

/**
 * What the judge room provides: for an evaluation's metrics, the promise of its checks (loaded at first
 * use) when some metric is a judge, else undefined (no checks to load).
 */
export type ModelMetricChecksLoader = (metrics: readonly unknown[] | undefined) => Promise<ModelMetricChecks> | undefined;

/** No metric has a model of its own until the judge room has loaded (then no Judge can exist either). */
let provided: ModelMetricChecksLoader = () => undefined;

/** Called once by the judge room as it loads, with a loader of its checks (so loading it does not load them). */
export function provideModelMetricChecks(load: ModelMetricChecksLoader): void {
  provided = load;
}

/**
 * The checks in force for `metrics`: the judge room's when some metric is a judge (loaded at the first
 * such call), else ones that find no such metric.
 */
export async function modelMetricChecks(metrics: readonly unknown[] | undefined): Promise<ModelMetricChecks> {
  return (await provided(metrics)) ?? NONE;
}
