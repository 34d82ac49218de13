// The pages of runs: the list, an evaluation (metrics with intervals, rows paged and filtered on the
// server) and one example. Every stored value goes through `html`, which escapes it.
import { runTitle } from "../evaluate/stored-run.js";
import type { EvaluationRow, RunSummary } from "../store/records.js";
import { sourceLink, usageSection } from "./evaluation-usage.js";
import { fields } from "./fields.js";
import { html, link, Markup, num } from "./html.js";
import type { RowQuery, RunQuery, ViewRow } from "./data/queries.js";
import { pickBar, pickCell } from "./matrix/pick.js";

/** A run's metric with its 95% interval, as `typelm show` prints it. */
export interface MetricLine {
  name: string;
  value: number;
  ci: [number, number] | undefined;
  method: string;
  /** The interval is being computed (a large run's bootstrap): the page asks for it again. */
  pending?: boolean;
}

export const KINDS = ["evaluation", "optimization", "traces"];
export const STATUSES = ["running", "completed", "failed", "stopped"];

function options(values: readonly string[], chosen: string | undefined, any: string): Markup {
  return html`<option value="">${any}</option>${values.map((v) => html`<option value="${v}"${new Markup(v === chosen ? " selected" : "")}>${v}</option>`)}`;
}

export function models(run: RunSummary): string {
  const m = run.config["models"];
  return Array.isArray(m) ? m.map((x) => String(x)).join(", ") : "";
}

/** The links to a list's previous and next pages, and where it is. */
export function pager(path: string, query: Record<string, string | number | boolean | undefined>, offset: number, limit: number, total: number): Markup {
  const pageNo = Math.floor(offset / limit) + 1;
  const pages = Math.max(1, Math.ceil(total / limit));
  return html`<div class="pager">${offset > 0 ? html`<a rel="prev" href="${link(path, { ...query, page: pageNo - 1 })}">← previous</a>` : ""}
<span>page ${pageNo} of ${pages} (${total} in all)</span>
${offset + limit < total ? html`<a rel="next" href="${link(path, { ...query, page: pageNo + 1 })}">next →</a>` : ""}</div>`;
}

/** `/`: the runs, newest first, with the kind, status, name and model filters. */
export function runsPage(result: { runs: RunSummary[]; total: number }, query: RunQuery): Markup {
  const keep = { kind: query.kind, status: query.status, name: query.name, model: query.model };
  return html`<h1>Runs</h1>
<form class="filters" method="get" action="/">
<label>kind<select name="kind">${options(KINDS, query.kind, "any")}</select></label>
<label>status<select name="status">${options(STATUSES, query.status, "any")}</select></label>
<label>name<input name="name" value="${query.name ?? ""}"></label>
<label>model<input name="model" value="${query.model ?? ""}"></label>
<button type="submit">Filter</button></form>
${result.runs.length === 0 ? html`<p class="muted">No runs${query.kind || query.status || query.name || query.model ? " match these filters" : " in this store yet"}.</p>` : html`
<table id="runs"><thead><tr><th>pick</th><th>run</th><th>kind</th><th>name</th><th>model</th><th>status</th><th>started</th><th>score</th></tr></thead><tbody>
${result.runs.map((r) => html`<tr data-kind="${r.kind}" data-status="${r.status}">${pickCell(r)}
<td><a href="/runs/${encodeURIComponent(r.id)}" data-run-id="${r.id}">${r.id.slice(0, 8)}</a></td><td>${r.kind}</td><td>${runTitle(r.name, r.kind, r.config)}</td>
<td>${models(r)}</td><td class="status-${r.status}">${r.status}</td><td>${r.startedAt}</td><td class="num">${num(r.score)}</td></tr>`)}
</tbody></table>${pickBar()}`}
${pager("/", keep, query.offset, query.limit, result.total)}`;
}

function runHeader(run: RunSummary): Markup {
  return html`<h1>${run.name} <span class="muted">(${run.kind})</span></h1>
<p>run <code>${run.id}</code> · <span class="status-${run.status}" id="run-status">${run.status}</span> · started ${run.startedAt}${run.endedAt === null ? "" : html` · ended ${run.endedAt}`}
${models(run) === "" ? "" : html` · model ${models(run)}`}</p>
${run.error === null ? "" : html`<pre class="worse">${run.error}</pre>`}`;
}

/** The columns of an evaluation's rows table (the live script builds the same in the browser). */
export function rowCells(runId: string, r: EvaluationRow): Markup {
  return html`<td class="num"><a href="/runs/${encodeURIComponent(runId)}/rows/${r.index}">${r.index}</a></td><td>${r.exampleId ?? "—"}</td>
<td class="cell">${fields(r.inputs)}</td><td class="cell">${fields(r.expected)}</td>
<td class="cell">${fields(r.prediction)}</td><td class="cell">${fields(Object.fromEntries(Object.entries(r.scores).map(([m, v]) => [m, num(v)])))}</td>
<td class="cell">${r.error === null ? "" : fields(r.error)}</td>`;
}

/**
 * Why a row is marked on the page: `error` when it failed, `wrong` when its score on `metric` is below
 * full (0 on a 0/1 metric), else undefined. The live script marks the rows it adds the same way.
 */
export function rowMark(r: EvaluationRow, metric: string | undefined): "error" | "wrong" | undefined {
  if (r.error !== null) return "error";
  const score = metric === undefined ? undefined : r.scores[metric];
  return typeof score === "number" && score < 1 ? "wrong" : undefined;
}

function rowLine(runId: string, r: ViewRow, metric: string | undefined): Markup {
  const mark = rowMark(r, metric);
  return html`<tr data-example-id="${r.exampleId ?? `#${r.index}`}" data-index="${r.index}"${mark === undefined ? "" : html` data-failed="${mark}"`}${new Markup(r.error === null ? "" : ' class="failed"')}>${rowCells(runId, r)}</tr>`;
}

/** `/runs/<id>` of an evaluation. */
export function evaluationPage(args: {
  run: RunSummary; counts: { rows: number; failed: number }; metrics: MetricLine[]; rows: { rows: ViewRow[]; total: number };
  query: RowQuery; labels: string[]; metricNames: string[]; lastSeq: number;
}): Markup {
  const { run, query } = args;
  const path = `/runs/${encodeURIComponent(run.id)}`;
  const keep = {
    failed: query.failed, label: query.label, text: query.text, metric: query.metric,
    max: query.maxScore, sort: query.sort === "index" ? undefined : query.sort, desc: query.descending,
  };
  // The rows the live script may append to: the first page in index order (new rows come last).
  const live = run.status === "running" && query.offset === 0 && (query.sort ?? "index") === "index" && !query.descending;
  return html`${runHeader(run)}${sourceLink(run)}
<p><span id="row-count">${args.counts.rows}</span> examples recorded, <span id="failed-count">${args.counts.failed}</span> failed${typeof run.config["examples"] === "number" ? html` (of ${run.config["examples"]})` : ""}</p>
<h2>Metrics</h2>
${args.metrics.length === 0 ? html`<p class="muted">No metric recorded yet.</p>` : html`<table id="metrics" data-run="${run.id}"><thead><tr><th>metric</th><th>value</th><th>95% CI</th><th>method</th></tr></thead><tbody>
${args.metrics.map((m) => html`<tr><td>${m.name}</td><td class="num" data-metric="${m.name}">${num(m.value)}</td>
<td class="num" data-metric-ci="${m.name}"${new Markup(m.pending ? ' data-pending="1"' : "")}>${m.pending ? "computing…" : m.ci === undefined ? "—" : `${num(m.ci[0])} to ${num(m.ci[1])}`}</td><td data-metric-method="${m.name}">${m.method}</td></tr>`)}
</tbody></table>${run.status === "running" ? html`<p class="muted">The run is going on: the metrics are those of the rows recorded when the page was loaded.</p>` : ""}`}
${usageSection(run)}
<h2>Examples</h2>
<form class="filters" method="get" action="${path}">
<label>failed only<input type="checkbox" name="failed" value="1"${new Markup(query.failed ? " checked" : "")}></label>
<label>label<input name="label" list="labels" value="${query.label ?? ""}"></label><datalist id="labels">${args.labels.map((l) => html`<option value="${l}">`)}</datalist>
<label>text<input name="text" value="${query.text ?? ""}"></label>
<label>metric<select name="metric">${args.metricNames.map((m) => html`<option value="${m}"${new Markup(m === query.metric ? " selected" : "")}>${m}</option>`)}</select></label>
<label>score at most<input name="max" size="5" value="${query.maxScore ?? ""}"></label>
<label>sort<select name="sort">${["index", "score", "duration"].map((s) => html`<option value="${s}"${new Markup(s === (query.sort ?? "index") ? " selected" : "")}>${s}</option>`)}</select></label>
<label>descending<input type="checkbox" name="desc" value="1"${new Markup(query.descending ? " checked" : "")}></label>
<button type="submit">Apply</button> <a href="${path}">clear</a></form>
<table id="rows" data-run="${run.id}" data-mark-metric="${query.metric ?? ""}" data-after="${args.lastSeq}" data-live="${live ? "1" : ""}" data-query="${new URLSearchParams(Object.entries(keep).filter(([, v]) => v !== undefined && v !== "" && v !== false).map(([k, v]): [string, string] => [k, String(v)])).toString()}">
<thead><tr><th>#</th><th>example</th><th>inputs</th><th>expected</th><th>prediction</th><th>scores</th><th>error</th></tr></thead>
<tbody>${args.rows.rows.map((r) => rowLine(run.id, r, query.metric))}</tbody></table>
${args.rows.rows.length === 0 ? html`<p class="muted" id="no-rows">No example${query.failed || query.label || query.text || query.maxScore !== undefined ? " matches these filters" : " recorded yet"}.</p>` : ""}
${pager(path, keep, query.offset, query.limit, args.rows.total)}`;
}

