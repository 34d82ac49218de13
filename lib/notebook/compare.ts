import { compare, describeComparison, type ComparableReport, type Comparison } from "../evaluate/compare.js";
import type { EvaluationRow } from "../store/records.js";
import { show, type MimeBundle } from "./bundle.js";
import { escapeHtml, formatNumber, htmlTable, showValue, textTable, type Cell } from "./html.js";
import { expectObject } from "./input.js";
import { REPORT_EXPECTED, reportMetrics, reportRows, type ReportInput } from "./report.js";

/** Options of `display.compare`: the metric, the confidence, the two runs' labels and how many changed examples to show. */
export interface CompareDisplayOptions {
  /** The metric compared (default: the first metric of the first report). */
  metric?: string;
  /** Of the interval, and the significance level 1 − confidence (default 0.95). */
  confidence?: number;
  /** Names of the two runs (default: each report's `name`, else "A" and "B"). */
  labels?: readonly [string, string];
  /** Changed examples shown (default 20); the bundle says how many were left out. */
  limit?: number;
}

/** An `EvaluationReport` as it is (compare knows its fields); a lab store run as rows and metric values. */
function comparable(report: ReportInput): ComparableReport {
  const r = report as Partial<ComparableReport>;
  if (Array.isArray(r.results) && r.metrics !== null && typeof r.metrics === "object") return r as ComparableReport;
  return { results: reportRows(report), metrics: Object.fromEntries(reportMetrics(report)) };
}

const GREEN = "background:#e6f4ea";
const RED = "background:#fce8e6";

/**
 * The comparison bundle: the difference of the metric with its interval (and the interval's method),
 * the p-value and its test (in words when it is not significant, then with the minimum detectable
 * effect), and the examples whose score changed, side by side.
 */
export function compareBundle(a: ReportInput, b: ReportInput, options: CompareDisplayOptions = {}): MimeBundle {
  expectObject(a, "display.compare", REPORT_EXPECTED, " as the first report");
  expectObject(b, "display.compare", REPORT_EXPECTED, " as the second report");
  const ra = comparable(a), rb = comparable(b);
  const c: Comparison = compare(ra, rb, {
    ...(options.metric === undefined ? {} : { metric: options.metric }),
    ...(options.confidence === undefined ? {} : { confidence: options.confidence }),
  });
  const [labelA, labelB] = options.labels ?? [a.name ?? "A", b.name ?? "B"];
  const headline = `${c.metric}: ${labelA} ${formatNumber(c.a)} → ${labelB} ${formatNumber(c.b)}`;
  const difference = `difference ${describeComparison(c)}`;
  const unchanged = c.n - c.better.length - c.worse.length;
  const counts = `${c.n} examples paired by id: ${c.better.length} better, ${c.worse.length} worse, ${unchanged} unchanged`;

  const rowsA = new Map(ra.results.map((r) => [idOf(r), r]));
  const rowsB = new Map(rb.results.map((r) => [idOf(r), r]));
  const better = new Set(c.better), worse = new Set(c.worse);
  const changed = ra.results.map(idOf).filter((id) => better.has(id) || worse.has(id));
  const limit = options.limit ?? 20;
  const shown = changed.slice(0, limit);
  const headers = ["id", "change", "inputs", "expected", `prediction ${labelA}`, `prediction ${labelB}`, `${c.metric} ${labelA} → ${labelB}`];
  const rows = shown.map((id): (string | Cell)[] => {
    const x = rowsA.get(id)!, y = rowsB.get(id)!;
    const rose = better.has(id);
    return [
      id,
      { text: rose ? "better" : "worse", style: rose ? GREEN : RED },
      fields(x.inputs),
      fields(x.expected),
      prediction(x),
      prediction(y),
      `${formatNumber(x.scores?.[c.metric] ?? 0)} → ${formatNumber(y.scores?.[c.metric] ?? 0)}`,
    ];
  });
  const more = changed.length > shown.length ? `${changed.length - shown.length} more changed example${changed.length - shown.length === 1 ? "" : "s"} not shown (limit ${limit})` : "";
  const note = (text: string) => `<div style="font:13px sans-serif;margin:2px 0">${escapeHtml(text)}</div>`;
  const verdict = c.significant ? "" : "color:#666";
  const html = [
    `<div style="font:bold 14px sans-serif;margin:4px 0">${escapeHtml(headline)}</div>`,
    `<div style="font:13px sans-serif;margin:2px 0;${verdict}">${escapeHtml(difference)}</div>`,
    note(counts),
    changed.length === 0 ? note("No example changed.") : htmlTable(headers, rows, "Examples that changed"),
    more ? `<div style="font:12px sans-serif;color:#666">${escapeHtml(more)}</div>` : "",
  ].join("");
  const text = [headline, difference, counts, changed.length === 0 ? "No example changed." : textTable(headers, rows), more].filter(Boolean).join("\n");
  return { "text/html": `<div class="typelm-compare">${html}</div>`, "text/plain": text };
}

/**
 * Shows how a second evaluation of the same examples differs from a first: the metric's difference
 * with its interval, p-value and (when not significant) minimum detectable effect, and the examples
 * that got better or worse. Returns the bundle outside a notebook.
 */
export async function displayCompare(a: ReportInput, b: ReportInput, options?: CompareDisplayOptions): Promise<MimeBundle | undefined> {
  return show(compareBundle(a, b, options));
}

function idOf(row: EvaluationRow): string {
  return row.exampleId ?? `#${row.index}`;
}

function fields(values: Record<string, unknown> | null | undefined): string {
  if (values === null || values === undefined) return "—";
  return Object.entries(values).map(([k, v]) => `${k}: ${showValue(v)}`).join("\n");
}

function prediction(row: EvaluationRow): string {
  if (row.prediction === null || row.prediction === undefined) return row.error ? `failed: ${row.error}` : "—";
  return fields(row.prediction);
}
