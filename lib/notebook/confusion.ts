import { ValidationError } from "../errors.js";
import type { EvaluationRow } from "../store/records.js";
import { show, type MimeBundle } from "./bundle.js";
import { chartBundle } from "./chart.js";
import { htmlTable, textTable } from "./html.js";
import { expectObject } from "./input.js";
import { REPORT_EXPECTED, reportRows, type ReportInput } from "./report.js";

/** What a failed example "predicted": it counts against its true label instead of vanishing. */
export const FAILED = "(failed)";

const isLabel = (v: unknown) => typeof v === "string" || typeof v === "boolean";

/** The compared field: the one asked for, else the first expected output whose values are labels. */
function labelField(rows: readonly EvaluationRow[], field: string | undefined): string {
  if (field !== undefined) return field;
  const first = rows[0]?.expected ?? {};
  const found = Object.keys(first).find((k) => rows.every((r) => isLabel(r.expected?.[k])));
  if (!found) {
    throw new ValidationError(
      `display.confusion: no expected output field holds labels (strings or booleans) in every row; fields seen: ${Object.keys(first).join(", ") || "none"}. ` +
        "Pass the field to compare: display.confusion(report, \"label\").",
      { field: "field" },
    );
  }
  return found;
}

/** Expected × predicted label counts of one field, as `confusionMatrix` and `display.confusion` count them. */
export interface ConfusionMatrix {
  field: string;
  /** Column labels: expected labels first (sorted), then labels only ever predicted, then FAILED when an example failed. */
  labels: string[];
  /** Row labels: the labels expected by some example (the first entries of `labels`). */
  expected: string[];
  /** counts[i][j]: examples whose expected label is expected[i] and predicted label labels[j]. */
  counts: number[][];
}

/**
 * Counts expected vs predicted labels: the report's own `confusion()` when it has one (an
 * `EvaluationReport` knows the declared labels), else counted from the rows (a lab store run).
 */
export function confusionMatrix(report: ReportInput, field?: string): ConfusionMatrix {
  expectObject(report, "display.confusion", REPORT_EXPECTED);
  if (typeof report.confusion === "function") {
    const own = report.confusion(field);
    const failed = own.unanswered.some((n) => n > 0);
    return {
      field: own.field,
      labels: failed ? [...own.labels, FAILED] : [...own.labels],
      expected: [...own.labels],
      counts: own.matrix.map((row, i) => (failed ? [...row, own.unanswered[i]!] : [...row])),
    };
  }
  const rows = reportRows(report);
  const name = labelField(rows, field);
  const pairs = rows.map((r) => {
    const predicted = r.prediction?.[name];
    return [String(r.expected?.[name]), r.prediction === null || predicted === undefined ? FAILED : String(predicted)] as const;
  });
  const expected = [...new Set(pairs.map(([e]) => e))].sort();
  const predictedOnly = [...new Set(pairs.map(([, p]) => p))].filter((p) => p !== FAILED && !expected.includes(p)).sort();
  const labels = [...expected, ...predictedOnly, ...(pairs.some(([, p]) => p === FAILED) ? [FAILED] : [])];
  const counts = expected.map(() => labels.map(() => 0));
  for (const [e, p] of pairs) counts[expected.indexOf(e)]![labels.indexOf(p)]!++;
  return { field: name, labels, expected, counts };
}

/** The confusion bundle: a heatmap (expected × predicted, with counts) and the same matrix as a table. */
export async function confusionBundle(report: ReportInput, field?: string): Promise<MimeBundle> {
  const m = confusionMatrix(report, field);
  const values = m.expected.flatMap((e, i) => m.labels.map((p, j) => ({ expected: e, predicted: p, count: m.counts[i]![j]! })));
  const max = Math.max(1, ...values.map((v) => v.count));
  const axisSort = m.labels;
  const side = Math.min(60, Math.max(28, Math.floor(420 / m.labels.length)));
  const spec = {
    title: `Confusion matrix: ${m.field}`,
    data: { values },
    width: { step: side },
    height: { step: side },
    encoding: {
      x: { field: "predicted", type: "nominal", sort: axisSort, title: "predicted", axis: { labelAngle: -40 } },
      y: { field: "expected", type: "nominal", sort: m.expected, title: "expected" },
    },
    layer: [
      {
        mark: { type: "rect", stroke: "#ddd" },
        encoding: { color: { field: "count", type: "quantitative", scale: { scheme: "blues", domain: [0, max] }, title: "examples" } },
      },
      {
        mark: { type: "text", fontSize: 11 },
        encoding: {
          text: { field: "count", type: "quantitative" },
          color: { condition: { test: `datum.count > ${max / 2}`, value: "white" }, value: "black" },
        },
      },
    ],
  };
  const headers = ["expected \\ predicted", ...m.labels];
  const rows = m.expected.map((label, i) => [label, ...m.counts[i]!.map(String)]);
  // Expected labels are the first columns, so the diagonal is counts[i][i].
  const correct = m.expected.reduce((sum, _, i) => sum + m.counts[i]![i]!, 0);
  const total = values.reduce((sum, v) => sum + v.count, 0);
  const text = `Confusion matrix for ${m.field}: ${correct} of ${total} on the diagonal\n${textTable(headers, rows)}`;
  return chartBundle(spec, `confusion matrix for ${m.field}`, text, htmlTable(headers, rows));
}

/** Shows the confusion matrix of a classification evaluation; returns the bundle outside a notebook. */
export async function displayConfusion(report: ReportInput, field?: string): Promise<MimeBundle | undefined> {
  return show(await confusionBundle(report, field));
}
