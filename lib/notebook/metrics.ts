import { ValidationError } from "../errors.js";
import { show, type MimeBundle } from "./bundle.js";
import { chartBundle } from "./chart.js";
import { formatNumber, htmlTable, textTable } from "./html.js";
import { expectObject } from "./input.js";
import { REPORT_EXPECTED, reportIntervals, reportMetrics, reportRows, type ReportInput } from "./report.js";

/** Options of `display.metrics`: one label per report. */
export interface MetricsOptions {
  /** One label per report, in order (default: each report's `name`, else "run 1", "run 2", ...). */
  labels?: readonly string[];
}

/**
 * The metrics bundle: one bar per metric and report, side by side, with the report's 95% interval
 * (`report.ci`) as an error bar, and the same numbers as a table.
 */
export async function metricsBundle(reports: ReportInput | readonly ReportInput[], options: MetricsOptions = {}): Promise<MimeBundle> {
  const list: readonly ReportInput[] = Array.isArray(reports) ? reports : [reports as ReportInput];
  list.forEach((report, i) => expectObject(report, "display.metrics", `${REPORT_EXPECTED}, or an array of them`, Array.isArray(reports) ? ` as reports[${i}]` : ""));
  if (list.length === 0) {
    throw new ValidationError("display.metrics: nothing to draw: no reports were given. Pass an Evaluation report, a lab store run, or an array of them.", { field: "reports" });
  }
  const seen = new Map<string, number>();
  // Two runs with one name would share a bar: the second becomes "name (2)".
  const unique = (label: string) => {
    const n = (seen.get(label) ?? 0) + 1;
    seen.set(label, n);
    return n === 1 ? label : `${label} (${n})`;
  };
  const runs = list.map((report, i) => ({
    label: unique(options.labels?.[i] ?? report.name ?? `run ${i + 1}`),
    metrics: reportMetrics(report),
    intervals: reportIntervals(report),
    examples: reportRows(report).length,
    failures: reportRows(report).filter((r) => r.error).length,
  }));
  const names = [...new Set(runs.flatMap((r) => [...r.metrics.keys()]))];
  // A metric's 95% interval (report.ci) rides along as low/high, drawn as an error bar over its bar.
  const values = runs.flatMap((r) => names.filter((n) => r.metrics.has(n)).map((n) => {
    const interval = r.intervals.get(n);
    const value = { run: r.label, metric: n, value: r.metrics.get(n)! };
    return interval === undefined ? value : { ...value, low: interval[0], high: interval[1] };
  }));
  const withIntervals = values.some((v) => "low" in v);
  if (values.length === 0) {
    // An empty chart would look like a drawing failure; say why instead.
    throw new ValidationError(
      `display.metrics: nothing to draw: ${runs.map((r) => JSON.stringify(r.label)).join(", ")} ${runs.length === 1 ? "has" : "have"} no metric values and no rows ` +
        "(a run that has not finished an example yet?). Pass a finished Evaluation report or lab.run(id) of a run with rows.",
      { field: "reports" },
    );
  }
  const spec = {
    title: "Metrics by run",
    data: { values },
    width: { step: 28 * Math.max(1, runs.length) + 24 },
    height: 240,
    encoding: {
      x: { field: "metric", type: "nominal", title: null, sort: names, axis: { labelAngle: 0 } },
      xOffset: { field: "run", type: "nominal", sort: runs.map((r) => r.label) },
      y: { field: "value", type: "quantitative", title: "score", scale: { domain: [0, 1] } },
      color: { field: "run", type: "nominal", title: "run", sort: runs.map((r) => r.label) },
    },
    layer: [
      { mark: { type: "bar" } },
      ...(withIntervals
        ? [{
          transform: [{ filter: "isValid(datum.low) && isValid(datum.high)" }],
          mark: { type: "errorbar", ticks: { size: 8 }, thickness: 1.5, color: "#333" },
          encoding: { y: { field: "low", type: "quantitative", title: "score" }, y2: { field: "high" }, color: { value: "#333" } },
        }]
        : []),
      {
        // The value is written above the bar, or above its error bar.
        transform: [{ calculate: "isValid(datum.high) ? max(datum.high, datum.value) : datum.value", as: "top" }],
        mark: { type: "text", dy: -6, fontSize: 10 },
        encoding: { y: { field: "top", type: "quantitative", title: "score" }, text: { field: "value", type: "quantitative", format: ".2f" } },
      },
    ],
  };
  const headers = ["run", ...names, "examples", "failures"];
  const cell = (r: (typeof runs)[number], n: string) => {
    const interval = r.intervals.get(n);
    const value = formatNumber(r.metrics.get(n));
    return interval === undefined || !r.metrics.has(n) ? value : `${value} (${formatNumber(interval[0])}–${formatNumber(interval[1])})`;
  };
  const rows = runs.map((r) => [r.label, ...names.map((n) => cell(r, n)), String(r.examples), String(r.failures)]);
  const table = textTable(headers, rows);
  return chartBundle(spec, `metrics: ${names.join(", ")}`, table, htmlTable(headers, rows));
}

/** Shows accuracy, F1 and the other metrics of one or more evaluations side by side; returns the bundle outside a notebook. */
export async function displayMetrics(reports: ReportInput | readonly ReportInput[], options?: MetricsOptions): Promise<MimeBundle | undefined> {
  return show(await metricsBundle(reports, options));
}
