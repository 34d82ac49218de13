import { ValidationError } from "../errors.js";
import { checkModule, type Module, type Tunable } from "../module.js";
import type { Metric } from "../evaluate/metric.js";
import { checkExampleTimeout } from "../evaluate/timeout.js";
import { batchSettings, type BatchOption } from "../batch/settings.js";

/** Options every optimizer checks the same way when it is constructed. */
export interface CommonOptions {
  metric?: Metric;
  seed?: number;
  progress?: boolean;
  /** USD: the run stops (status "stopped", best program so far returned) once its trials have cost this much. */
  maxCost?: number;
  /** Seconds per example (program call plus metric) before it is a failed example with a timeout error. */
  exampleTimeout?: number;
  /** The full-validation passes (not the minibatches) through the provider's batch service. */
  batch?: BatchOption;
  [key: string]: unknown;
}

/**
 * Checks an optimizer's options: the named counts are integers ≥ their minimum, `seed` an integer,
 * `metric` a function, `maxCost` a positive number of USD and `exampleTimeout` a positive number of
 * seconds. Throws a `ValidationError` naming the option.
 */
export function checkOptions(optimizer: string, options: CommonOptions, counts: Record<string, number>): void {
  for (const [name, min] of Object.entries(counts)) {
    const v = options[name];
    if (v !== undefined && (typeof v !== "number" || !Number.isInteger(v) || v < min)) {
      throw new ValidationError(`${optimizer} option ${name} must be an integer ≥ ${min}; received ${JSON.stringify(v)}`, { field: name });
    }
  }
  if (options.seed !== undefined && !Number.isSafeInteger(options.seed)) {
    throw new ValidationError(`${optimizer} option seed must be an integer; received ${JSON.stringify(options.seed)}`, { field: "seed" });
  }
  if (options.progress !== undefined && typeof options.progress !== "boolean") {
    throw new ValidationError(`${optimizer} option progress must be true or false; received ${JSON.stringify(options.progress)}`, { field: "progress" });
  }
  if (options.maxCost !== undefined && (typeof options.maxCost !== "number" || !Number.isFinite(options.maxCost) || options.maxCost <= 0)) {
    throw new ValidationError(`${optimizer} option maxCost must be a positive number of USD; received ${JSON.stringify(options.maxCost)}`, { field: "maxCost" });
  }
  checkExampleTimeout(optimizer, options.exampleTimeout);
  batchSettings(optimizer, options.batch);
  if (options.metric !== undefined && typeof options.metric !== "function") {
    throw new ValidationError(`${optimizer} option metric must be a function (example, prediction, trace?) => score; received ${typeof options.metric}`, { field: "metric" });
  }
}

/**
 * Checks `metricThreshold` (a number in (0, 1]: the least score a bootstrap teacher run needs for its
 * trace to become demos) and refuses `bootstrapThreshold`, its former name. Throws a `ValidationError`
 * naming the option.
 */
export function checkMetricThreshold(optimizer: string, options: Record<string, unknown>): void {
  if (options.bootstrapThreshold !== undefined) {
    throw new ValidationError(
      `${optimizer} option bootstrapThreshold is now metricThreshold (as DSPy names it); without it a teacher run is kept when its score is above 0`,
      { field: "bootstrapThreshold" },
    );
  }
  const t = options.metricThreshold;
  if (t !== undefined && (typeof t !== "number" || !Number.isFinite(t) || t <= 0 || t > 1)) {
    throw new ValidationError(
      `${optimizer} option metricThreshold must be a number above 0 and at most 1 (the least metric score a teacher run needs to give demos); received ${JSON.stringify(t)}`,
      { field: "metricThreshold" },
    );
  }
}

/** The module's predictors, or a `ValidationError` when it is not a module or has none to tune. */
export function tunablePredictors(optimizer: string, moduleInstance: unknown): [string, Tunable & Module][] {
  const module = checkModule(`${optimizer}.compile`, moduleInstance);
  const predictors = module.namedPredictors();
  if (predictors.length === 0) {
    throw new ValidationError(`${optimizer}.compile: ${module.constructor.name} has no predictors to tune`, { field: "moduleInstance" });
  }
  return predictors;
}
