// The matrix's pages: `/matrix?runs=a,b,c` (each run's metrics with their intervals on top, then one
// row per example with each run's prediction and scores, the rows where the runs disagree marked) and
// `/matrix/tests?runs=…` (every pair of runs compared, Holm-adjusted). The runs page's picking of runs
// is pick.ts. Every stored value goes through `html`.
import { pValueText } from "../../evaluate/compare.js";
import type { RunSummary } from "../../store/records.js";
import { html, link, Markup, num } from "../html.js";
import { fields } from "../fields.js";
import type { MatrixData, PairTest } from "./matrix.js";
import { models, pager, type MetricLine } from "../pages.js";
import type { ViewRow } from "../data/source.js";

const STYLE = html`<style>tr[data-disagree] td{background:#fff8c5}tr[data-disagree] td.failed{background:#fff1f0}td.failed{background:#fff1f0}
.scores{color:#555}.matrix td.cell{max-width:320px}</style>`;

/** The runs' part of the matrix URLs: `runs=a,b,c` (full ids). */
function runsParam(runs: readonly RunSummary[]): string {
  return runs.map((r) => r.id).join(",");
}

/** One run's head: its link (`data-run-id`), name and model. */
function runHead(run: RunSummary, i: number): Markup {
  return html`<th data-run="${run.id}">${String.fromCharCode(65 + i)}: <a href="/runs/${encodeURIComponent(run.id)}" data-run-id="${run.id}">${run.name}</a>
<br><code>${run.id.slice(0, 8)}</code>${models(run) === "" ? "" : html` · ${models(run)}`}</th>`;
}

/** A metric's value and interval in a run's column. */
function metricCell(run: RunSummary, line: MetricLine | undefined): Markup {
  if (line === undefined) return html`<td class="muted">—</td>`;
  const ci = line.pending ? "interval being computed: reload in a moment" : line.ci === undefined ? "no interval" : `95% CI ${num(line.ci[0])} to ${num(line.ci[1])} (${line.method})`;
  return html`<td><span class="num" data-metric="${line.name}" data-run="${run.id}">${num(line.value)}</span> <span class="muted" data-metric-ci="${line.name}">${ci}</span></td>`;
}

/** The runs' metrics table: one row per metric, a column per run. */
function metricsTable(runs: RunSummary[], metrics: MetricLine[][], shared: string[]): Markup {
  const names = [...new Set([...shared, ...metrics.flat().map((l) => l.name)])];
  return html`<table id="matrix-metrics"><thead><tr><th>metric</th>${runs.map(runHead)}</tr></thead><tbody>
${names.map((name) => html`<tr><td>${name}${shared.includes(name) ? "" : html` <span class="muted">(not in every run)</span>`}</td>${runs.map((r, i) => metricCell(r, metrics[i]!.find((l) => l.name === name)))}</tr>`)}
</tbody></table>`;
}

/** A run's cell of one example: its prediction (or error) and its scores. */
function runCell(run: RunSummary, row: ViewRow | undefined): Markup {
  if (row === undefined) return html`<td class="muted" data-run="${run.id}">—</td>`;
  const scores = Object.entries(row.scores).map(([m, v]) => `${m} ${num(v)}`).join(" · ");
  return html`<td class="cell${row.error === null ? "" : " failed"}" data-run="${run.id}"><a href="/runs/${encodeURIComponent(run.id)}/rows/${row.index}">#${row.index}</a> ${row.error === null ? fields(row.prediction) : html`<span class="worse">failed:</span> ${fields(row.error)}`}
<div class="scores" data-scores>${scores}</div></td>`;
}

/** `/matrix?runs=…`: the runs' metrics with their intervals, then the examples side by side. */
export function matrixPage(d: MatrixData): Markup {
  const runs = runsParam(d.runs);
  const keep = { runs, disagree: d.query.disagree ? 1 : undefined };
  return html`${STYLE}<h1>Matrix: ${d.runs.length} runs over ${d.examples} examples</h1>
<h2>Metrics</h2>${metricsTable(d.runs, d.metrics, d.shared)}
<p><a href="${link("/matrix/tests", { runs })}" data-tests>Pairwise tests</a> of the runs on ${d.shared.join(", ")} (each pair as <code>typelm compare</code> tests it, p-values adjusted by Holm over every pair and metric).</p>
<h2>Examples</h2>
<p id="disagree-count"><b>${d.disagreeing}</b> of ${d.examples} examples have scores that differ between the runs (on ${d.shared.join(", ")}), marked.</p>
<form class="filters" method="get" action="/matrix"><input type="hidden" name="runs" value="${runs}">
<label>only where the runs differ<input type="checkbox" name="disagree" value="1"${new Markup(d.query.disagree ? " checked" : "")}></label>
<button type="submit">Apply</button> <a href="${link("/matrix", { runs })}">clear</a></form>
<table id="matrix" class="matrix"><thead><tr><th>example</th><th>inputs</th><th>expected</th>${d.runs.map(runHead)}</tr></thead><tbody>
${d.rows.map((r) => {
    const first = r.cells.find((c) => c !== undefined);
    return html`<tr data-example-id="${r.exampleId}"${new Markup(r.disagree ? ' data-disagree="1"' : "")}><td>${r.exampleId}</td>
<td class="cell">${fields(first?.inputs)}</td><td class="cell">${fields(first?.expected)}</td>${d.runs.map((run, i) => runCell(run, r.cells[i]))}</tr>`;
  })}</tbody></table>
${d.rows.length === 0 ? html`<p class="muted" id="no-rows">No example${d.query.disagree ? " where the runs differ" : ""}.</p>` : ""}
${pager("/matrix", keep, d.query.offset, d.query.limit, d.total)}`;
}

/** `/matrix/tests?runs=…`: every pair of runs compared on every shared metric, Holm-adjusted over them all. */
export function matrixTestsPage(d: { runs: RunSummary[]; metrics: MetricLine[][]; shared: string[]; tests: PairTest[] }): Markup {
  const letter = new Map(d.runs.map((r, i) => [r.id, String.fromCharCode(65 + i)]));
  const confidence = d.tests[0]?.confidence ?? 0.95;
  return html`${STYLE}<p><a href="${link("/matrix", { runs: runsParam(d.runs) })}">← the matrix</a></p><h1>Pairwise tests of ${d.runs.length} runs</h1>
${metricsTable(d.runs, d.metrics, d.shared)}
<p>Each pair of runs is compared as <code>typelm compare</code> compares two runs: paired by example, difference second − first. The ${d.tests.length} p-values
(${d.runs.length * (d.runs.length - 1) / 2} pairs × ${d.shared.length} metric${d.shared.length === 1 ? "" : "s"}) are adjusted together by Holm's method; the verdict reads the adjusted p-value at the ${num((1 - confidence) * 100, 0)}% level.</p>
<table id="pair-tests"><thead><tr><th>pair</th><th>metric</th><th>first</th><th>second</th><th>difference</th><th>${Number((confidence * 100).toPrecision(6))}% CI</th><th>p-value</th><th>p (Holm)</th><th>test</th><th>verdict</th></tr></thead><tbody>
${d.tests.map((t) => {
    const significant = t.pAdjusted < 1 - t.confidence;
    return html`<tr data-pair="${letter.get(t.runA)}${letter.get(t.runB)}" data-metric="${t.metric}"><td>${letter.get(t.runA)} → ${letter.get(t.runB)}</td><td>${t.metric}</td>
<td class="num">${num(t.a)}</td><td class="num">${num(t.b)}</td><td class="num">${signedText(t.diff)}</td><td class="num">${signedText(t.ci[0])} to ${signedText(t.ci[1])}</td>
<td class="num">${pValueText(t.pValue)}</td><td class="num" data-p-holm>${pValueText(t.pAdjusted)}</td><td>${t.test}</td>
<td class="${significant ? (t.diff > 0 ? "better" : "worse") : "muted"}">${significant ? "significant" : "not significant"}</td></tr>`;
  })}</tbody></table>`;
}

function signedText(v: number): string {
  return `${v > 0 ? "+" : v < 0 ? "−" : ""}${Math.abs(v).toFixed(3)}`;
}
