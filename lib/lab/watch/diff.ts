// What `typelm run --watch` prints after a rerun: each evaluation of the new run against the one of
// the same name in the previous good run, short. The comparison is `typelm compare`'s (the same paired
// tests and intervals, Holm over the metrics); then how many examples' predictions changed and, on the
// first metric, how many scored better and worse. When the examples differ (the dataset gained or lost
// rows) there is nothing to pair: each metric's before and after is given without a test.
import { adjustComparisons, compare, pValueText, signed, type Comparison } from "../../evaluate/compare.js";
import type { EvaluationRow, EvaluationRun } from "../../store/records.js";
import { metricsOf } from "../../evaluate/stored-run.js";
import { printable } from "../terminal.js";

/** The lines comparing each evaluation of `now` with the one of the same name in `before` (by name). */
export function watchDifference(before: ReadonlyMap<string, EvaluationRun>, now: readonly EvaluationRun[]): string[] {
  const out: string[] = [];
  for (const run of now) {
    const old = before.get(run.name);
    if (out.length > 0) out.push("");
    if (old === undefined) {
      out.push(`${printable(run.name)} (run ${shortId(run.id)}): new, nothing before it to compare with; ${metricsText(metricsOf(run))}`);
      continue;
    }
    out.push(...evaluationDifference(old, run));
  }
  return out;
}

/** One evaluation against its previous run: a header line, the metrics table, the examples that changed. */
function evaluationDifference(a: EvaluationRun, b: EvaluationRun): string[] {
  const head = `${printable(b.name)}: run ${shortId(b.id)} against ${shortId(a.id)}`;
  const ma = metricsOf(a);
  const mb = metricsOf(b);
  const shared = Object.keys(mb).filter((m) => m in ma);
  const idsA = new Set(a.rows.map(idOf));
  const idsB = new Set(b.rows.map(idOf));
  const added = [...idsB].filter((id) => !idsA.has(id)).length;
  const removed = [...idsA].filter((id) => !idsB.has(id)).length;
  if (shared.length === 0) return [`${head}: no metric in common (before: ${metricsText(ma)}; now: ${metricsText(mb)})`];
  if (added > 0 || removed > 0 || a.rows.length === 0) {
    return [
      `${head}: the examples differ (${a.rows.length} before, ${b.rows.length} now: ${added} added, ${removed} removed), so no paired test`,
      ...table(["metric", "before", "now", "difference"], shared.map((m) => [printable(m), ma[m]!.toFixed(3), mb[m]!.toFixed(3), signed(mb[m]! - ma[m]!)])),
    ];
  }
  const ra = { results: a.rows, metrics: ma };
  const rb = { results: b.rows, metrics: mb };
  let comparisons: Comparison[];
  try {
    comparisons = adjustComparisons(shared.map((metric) => compare(ra, rb, { metric })));
  } catch (error) {
    // Rows holding one example id twice cannot be paired: say so, with the values.
    return [`${head}: cannot pair the examples (${printable(error instanceof Error ? error.message : String(error))})`];
  }
  const several = comparisons.length > 1;
  const percent = Number((comparisons[0]!.confidence * 100).toPrecision(6));
  const first = comparisons[0]!;
  const rowsA = new Map(a.rows.map((r) => [idOf(r), r]));
  const predictions = b.rows.filter((r) => answerOf(r) !== answerOf(rowsA.get(idOf(r)))).length;
  return [
    `${head}, ${first.n} examples paired by id`,
    ...table(
      ["metric", "before", "now", "difference", `${percent}% CI`, "p-value", ...(several ? ["p (Holm)"] : []), "test", "verdict"],
      comparisons.map((c) => [
        printable(c.metric), c.a.toFixed(3), c.b.toFixed(3), signed(c.diff), `${signed(c.ci[0])} to ${signed(c.ci[1])}`, pValueText(c.pValue),
        ...(several ? [pValueText(c.pAdjusted)] : []), c.test, c.significant ? "significant" : "not significant",
      ]),
    ),
    `${predictions} of ${b.rows.length} predictions changed; on ${printable(first.metric)} ${first.better.length} better, ${first.worse.length} worse`,
  ];
}

/** A row's answer as compared between runs: its prediction, or its error. */
function answerOf(row: EvaluationRow | undefined): string {
  if (row === undefined) return "";
  return row.error !== null ? `error: ${row.error}` : JSON.stringify(row.prediction ?? null);
}

function idOf(row: EvaluationRow): string {
  return row.exampleId ?? `#${row.index}`;
}

/** A run id's first 8 characters, enough for `typelm show` and the viewer's `/runs/<id>`. */
export function shortId(id: string): string {
  return printable(id.slice(0, 8));
}

function metricsText(metrics: Record<string, number>): string {
  const entries = Object.entries(metrics);
  return entries.length === 0 ? "no metrics" : entries.map(([m, v]) => `${printable(m)} ${v.toFixed(3)}`).join(", ");
}

/** Columns padded to their widest cell, indented under the header line. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join("  ")}`.trimEnd();
  return [line(header), ...rows.map(line)];
}
