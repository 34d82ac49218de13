// Reads what a metric returned (lib/evaluate/metric.ts re-exports it): a score in [0, 1] with its
// feedback and details, or a TypeError naming the metric. Deferred (scripts/deferred-modules.mjs): loaded
// at the first example scored, not at `import "typelm"`.
import type { MetricResult, MetricScore } from "./metric.js";

/**
 * Reads what a metric returned. Throws `TypeError` for anything but a finite score in [0, 1] (or a
 * boolean), so a metric that returns NaN, 7 or a string is caught where it is scored.
 */
export function metricScore(result: MetricResult, metricName: string): MetricScore {
  const isObject = typeof result === "object" && result !== null;
  const raw: unknown = isObject ? (result as { score: unknown }).score : result;
  const feedback = isObject && typeof (result as { feedback?: unknown }).feedback === "string" ? (result as { feedback: string }).feedback : undefined;
  const details = isObject ? (result as { details?: unknown }).details : undefined;
  const score = typeof raw === "boolean" ? (raw ? 1 : 0) : raw;
  if (typeof score !== "number" || !Number.isFinite(score) || score < 0 || score > 1) {
    throw new TypeError(
      `Metric "${metricName}" returned ${describe(raw)}; expected a number in [0, 1], a boolean, or { score, feedback }`,
    );
  }
  if (details !== undefined && (typeof details !== "object" || details === null || Array.isArray(details))) {
    throw new TypeError(`Metric "${metricName}" returned details ${describe(details)}; expected an object of JSON values`);
  }
  return details === undefined ? { score, feedback } : { score, feedback, details: details as Record<string, unknown> };
}

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value === undefined) return "undefined";
  try {
    return `${typeof value} ${JSON.stringify(value)}`;
  } catch {
    return typeof value;
  }
}
