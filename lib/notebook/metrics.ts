import { ValidationError } from "../errors.js";
import { show, type MimeBundle } from "./bundle.js";
import { chartBundle } from "./chart.js";
import { escapeHtml, formatNumber, htmlTable, textTable } from "./html.js";
import { expectObject } from "./input.js";
import { REPORT_EXPECTED, reportIntervals, reportMetrics, reportRows, type ReportInput } from "./report.js";

/** Options of `display.metrics`: one label per report. */
export interface MetricsOptions {
  /** One label per report, in order (default: each report's `name`, else "run 1", "run 2", ...). */
  labels?: readonly string[];
}

/**
 * The metrics bundle: one bar per metric and report, side by side, with the report's 95% interval
 * (`report.ci`) as an error bar, and the same numbers as a table followed by each interval's method
 * (`report.ciMethod`).
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
    methods: intervalMethods(report),
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
  const note = methodsNote(runs, names);
  const table = textTable(headers, rows) + (note === "" ? "" : `\n${note}`);
  const after = htmlTable(headers, rows) + (note === "" ? "" : `<div style="font:12px sans-serif;color:#666;margin:2px 0">${escapeHtml(note)}</div>`);
  return chartBundle(spec, `metrics: ${names.join(", ")}`, table, after);
}

/** Metric name → the method of its interval, from a report's `ciMethod` (an `EvaluationReport` has it). */
function intervalMethods(report: ReportInput): Map<string, string> {
  const methods = (report as { ciMethod?: unknown }).ciMethod;
  const out = new Map<string, string>();
  if (methods === null || typeof methods !== "object") return out;
  for (const [name, method] of Object.entries(methods)) if (typeof method === "string") out.set(name, method);
  return out;
}

/**
 * "95% intervals: accuracy wilson, f1_score bootstrap-bca": each metric's interval method, named once
 * when every run used the same for it, else per run. Empty when no run has intervals.
 */
function methodsNote(runs: readonly { label: string; intervals: ReadonlyMap<string, unknown>; methods: ReadonlyMap<string, string> }[], names: readonly string[]): string {
  const parts: string[] = [];
  for (const name of names) {
    const used = runs.filter((r) => r.intervals.has(name)).map((r) => ({ label: r.label, method: r.methods.get(name) ?? "method not recorded" }));
    if (used.length === 0) continue;
    const distinct = [...new Set(used.map((u) => u.method))];
    parts.push(distinct.length === 1 ? `${name} ${distinct[0]}` : `${name} ${used.map((u) => `${u.method} (${u.label})`).join(", ")}`);
  }
  return parts.length === 0 ? "" : `95% intervals: ${parts.join("; ")}`;
}

/** Shows accuracy, F1 and the other metrics of one or more evaluations side by side; returns the bundle outside a notebook. */
export async function displayMetrics(reports: ReportInput | readonly ReportInput[], options?: MetricsOptions): Promise<MimeBundle | undefined> {
  return show(await metricsBundle(reports, options));
}
