import { ValidationError } from "../errors.js";
import { show, type MimeBundle } from "./bundle.js";
import { chartBundle } from "./chart.js";
import { formatNumber, htmlTable, textTable } from "./html.js";
import { expectObject } from "./input.js";
import { REPORT_EXPECTED, reportMetrics, reportRows, type ReportInput } from "./report.js";

export interface MetricsOptions {
  /** One label per report, in order (default: each report's `name`, else "run 1", "run 2", ...). */
  labels?: readonly string[];
}

/** The metrics bundle: one bar per metric and report, side by side, and the same numbers as a table. */
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
    examples: reportRows(report).length,
    failures: reportRows(report).filter((r) => r.error).length,
  }));
  const names = [...new Set(runs.flatMap((r) => [...r.metrics.keys()]))];
  const values = runs.flatMap((r) => names.filter((n) => r.metrics.has(n)).map((n) => ({ run: r.label, metric: n, value: r.metrics.get(n)! })));
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
      { mark: { type: "text", dy: -6, fontSize: 10 }, encoding: { text: { field: "value", type: "quantitative", format: ".2f" } } },
    ],
  };
  const headers = ["run", ...names, "examples", "failures"];
  const rows = runs.map((r) => [r.label, ...names.map((n) => formatNumber(r.metrics.get(n))), String(r.examples), String(r.failures)]);
  const table = textTable(headers, rows);
  return chartBundle(spec, `metrics: ${names.join(", ")}`, table, htmlTable(headers, rows));
}

/** Shows accuracy, F1 and the other metrics of one or more evaluations side by side; returns the bundle outside a notebook. */
export async function displayMetrics(reports: ReportInput | readonly ReportInput[], options?: MetricsOptions): Promise<MimeBundle | undefined> {
  return show(await metricsBundle(reports, options));
}
