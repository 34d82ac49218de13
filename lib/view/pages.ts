// The pages of runs: the list, an evaluation (metrics with intervals, rows paged and filtered on the
// server) and one example. Every stored value goes through `html`, which escapes it.
import { runTitle } from "../evaluate/stored-run.js";
import type { ModelCall } from "../lm/usage-scope.js";
import type { EvaluationRow, RunSummary } from "../store/records.js";
import { clip, html, link, Markup, num, valueText } from "./html.js";
import type { RowQuery, RunQuery, ViewRow } from "./queries.js";

/** A run's metric with its 95% interval, as `typelm show` prints it. */
export interface MetricLine {
  name: string;
  value: number;
  ci: [number, number] | undefined;
  method: string;
  /** The interval is being computed (a large run's bootstrap): the page asks for it again. */
  pending?: boolean;
}

export const KINDS = ["evaluation", "optimization"];
export const STATUSES = ["running", "completed", "failed", "stopped"];

function options(values: readonly string[], chosen: string | undefined, any: string): Markup {
  return html`<option value="">${any}</option>${values.map((v) => html`<option value="${v}"${new Markup(v === chosen ? " selected" : "")}>${v}</option>`)}`;
}

export function models(run: RunSummary): string {
  const m = run.config["models"];
  return Array.isArray(m) ? m.map((x) => String(x)).join(", ") : "";
}

function pager(path: string, query: Record<string, string | number | boolean | undefined>, offset: number, limit: number, total: number): Markup {
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
<table id="runs"><thead><tr><th>run</th><th>kind</th><th>name</th><th>model</th><th>status</th><th>started</th><th>score</th></tr></thead><tbody>
${result.runs.map((r) => html`<tr data-kind="${r.kind}" data-status="${r.status}">
<td><a href="/runs/${encodeURIComponent(r.id)}" data-run-id="${r.id}">${r.id.slice(0, 8)}</a></td><td>${r.kind}</td><td>${runTitle(r.name, r.kind, r.config)}</td>
<td>${models(r)}</td><td class="status-${r.status}">${r.status}</td><td>${r.startedAt}</td><td class="num">${num(r.score)}</td></tr>`)}
</tbody></table>`}
${pager("/", keep, query.offset, query.limit, result.total)}`;
}

function runHeader(run: RunSummary): Markup {
  return html`<h1>${run.name} <span class="muted">(${run.kind})</span></h1>
<p>run <code>${run.id}</code> · <span class="status-${run.status}" id="run-status">${run.status}</span> · started ${run.startedAt}${run.endedAt === null ? "" : html` · ended ${run.endedAt}`}
${models(run) === "" ? "" : html` · model ${models(run)}`}</p>
${run.error === null ? "" : html`<pre class="worse">${run.error}</pre>`}`;
}

/** The columns of an evaluation's rows table, shared by the server's rendering and the live script. */
export function rowCells(runId: string, r: EvaluationRow): Markup {
  return html`<td class="num"><a href="/runs/${encodeURIComponent(runId)}/rows/${r.index}">${r.index}</a></td><td>${r.exampleId ?? "—"}</td>
<td class="cell">${clip(valueText(r.inputs))}</td><td class="cell">${clip(valueText(r.expected))}</td>
<td class="cell">${clip(valueText(r.prediction))}</td><td class="cell">${Object.entries(r.scores).map(([m, v]) => `${m} ${num(v)}`).join("\n")}</td>
<td class="cell">${r.error === null ? "" : clip(r.error)}</td>`;
}

function rowLine(runId: string, r: ViewRow): Markup {
  return html`<tr data-example-id="${r.exampleId ?? `#${r.index}`}" data-index="${r.index}"${new Markup(r.error === null ? "" : ' class="failed"')}>${rowCells(runId, r)}</tr>`;
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
  return html`${runHeader(run)}
<p><span id="row-count">${args.counts.rows}</span> examples recorded, <span id="failed-count">${args.counts.failed}</span> failed${typeof run.config["examples"] === "number" ? html` (of ${run.config["examples"]})` : ""}</p>
<h2>Metrics</h2>
${args.metrics.length === 0 ? html`<p class="muted">No metric recorded yet.</p>` : html`<table id="metrics" data-run="${run.id}"><thead><tr><th>metric</th><th>value</th><th>95% CI</th><th>method</th></tr></thead><tbody>
${args.metrics.map((m) => html`<tr><td>${m.name}</td><td class="num" data-metric="${m.name}">${num(m.value)}</td>
<td class="num" data-metric-ci="${m.name}"${new Markup(m.pending ? ' data-pending="1"' : "")}>${m.pending ? "computing…" : m.ci === undefined ? "—" : `${num(m.ci[0])} to ${num(m.ci[1])}`}</td><td data-metric-method="${m.name}">${m.method}</td></tr>`)}
</tbody></table>${run.status === "running" ? html`<p class="muted">The run is going on: the metrics are those of the rows recorded when the page was loaded.</p>` : ""}`}
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
<table id="rows" data-run="${run.id}" data-after="${args.lastSeq}" data-live="${live ? "1" : ""}" data-query="${new URLSearchParams(Object.entries(keep).filter(([, v]) => v !== undefined && v !== "" && v !== false).map(([k, v]): [string, string] => [k, String(v)])).toString()}">
<thead><tr><th>#</th><th>example</th><th>inputs</th><th>expected</th><th>prediction</th><th>scores</th><th>error</th></tr></thead>
<tbody>${args.rows.rows.map((r) => rowLine(run.id, r))}</tbody></table>
${args.rows.rows.length === 0 ? html`<p class="muted" id="no-rows">No example${query.failed || query.label || query.text || query.maxScore !== undefined ? " matches these filters" : " recorded yet"}.</p>` : ""}
${pager(path, keep, query.offset, query.limit, args.rows.total)}`;
}

/**
 * The page's script: fills in intervals still being computed (a large run's bootstrap), and on a
 * running evaluation's page adds the rows written after the last shown, polling each second.
 */
export const LIVE_SCRIPT = `
(function () {
  var metrics = document.getElementById("metrics");
  function fillIntervals() {
    if (!metrics || metrics.querySelectorAll("[data-pending]").length === 0) return;
    fetch("/api/runs/" + encodeURIComponent(metrics.getAttribute("data-run")), { cache: "no-store" })
      .then(function (res) { return res.json(); })
      .then(function (data) {
        (data.metrics || []).forEach(function (m) {
          if (m.pending || !m.ci) return;
          metrics.querySelectorAll("[data-metric-ci]").forEach(function (cell) {
            if (cell.getAttribute("data-metric-ci") !== m.name) return;
            cell.textContent = m.ci[0].toFixed(3) + " to " + m.ci[1].toFixed(3);
            cell.removeAttribute("data-pending");
          });
          metrics.querySelectorAll("[data-metric-method]").forEach(function (cell) {
            if (cell.getAttribute("data-metric-method") === m.name) cell.textContent = m.method;
          });
        });
        setTimeout(fillIntervals, 1000);
      }, function () { setTimeout(fillIntervals, 2000); });
  }
  setTimeout(fillIntervals, 500);
})();
(function () {
  var table = document.getElementById("rows");
  if (!table || table.getAttribute("data-live") !== "1") return;
  var run = table.getAttribute("data-run");
  var after = Number(table.getAttribute("data-after")) || 0;
  var query = table.getAttribute("data-query");
  var body = table.tBodies[0];
  function cell(text, cls) { var td = document.createElement("td"); if (cls) td.className = cls; td.textContent = text; return td; }
  function clip(t) { return t.length <= ${400} ? t : t.slice(0, ${399}) + "\\u2026"; }
  function show(v) { return v === null || v === undefined ? "\\u2014" : typeof v === "string" ? v : v.truncated === true && typeof v.start === "string" ? v.start + "\\u2026" : JSON.stringify(v); }
  function add(r) {
    var tr = document.createElement("tr");
    tr.setAttribute("data-example-id", r.exampleId === null ? "#" + r.index : r.exampleId);
    tr.setAttribute("data-index", String(r.index));
    if (r.error !== null) tr.className = "failed";
    var first = cell("", "num"); var a = document.createElement("a");
    a.href = "/runs/" + encodeURIComponent(run) + "/rows/" + r.index; a.textContent = String(r.index); first.appendChild(a);
    tr.appendChild(first);
    tr.appendChild(cell(r.exampleId === null ? "\\u2014" : r.exampleId));
    tr.appendChild(cell(clip(show(r.inputs)), "cell"));
    tr.appendChild(cell(clip(show(r.expected)), "cell"));
    tr.appendChild(cell(clip(show(r.prediction)), "cell"));
    tr.appendChild(cell(Object.keys(r.scores).map(function (m) { return m + " " + Number(r.scores[m]).toFixed(3); }).join("\\n"), "cell"));
    tr.appendChild(cell(r.error === null ? "" : clip(r.error), "cell"));
    var rows = body.rows, at = null;
    for (var i = 0; i < rows.length; i++) if (Number(rows[i].getAttribute("data-index")) === r.index) { rows[i].remove(); break; }
    for (var i = 0; i < rows.length; i++) if (Number(rows[i].getAttribute("data-index")) > r.index) { at = rows[i]; break; }
    body.insertBefore(tr, at);
    var none = document.getElementById("no-rows"); if (none) none.remove();
  }
  function poll() {
    fetch("/api/runs/" + encodeURIComponent(run) + "/rows?after=" + after + (query ? "&" + query : ""), { cache: "no-store" })
      .then(function (res) { return res.json(); })
      .then(function (data) {
        data.rows.forEach(function (r) { add(r); if (r.seq > after) after = r.seq; });
        document.getElementById("row-count").textContent = String(data.counts.rows);
        document.getElementById("failed-count").textContent = String(data.counts.failed);
        var status = document.getElementById("run-status");
        status.textContent = data.status; status.className = "status-" + data.status;
        if (data.status === "running" || data.rows.length > 0) setTimeout(poll, 1000);
      }, function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 1000);
})();
`;

/** An example's model calls as a transcript: each call's messages, then its reply. */
export function callsSection(calls: ModelCall[] | null): Markup {
  if (calls === null || calls.length === 0) {
    return html`<h2>Model calls</h2><p class="muted" id="calls">${calls === null ? "This store records no model calls (it was written by a typelm that did not)." : "No model call was recorded for this example (the evaluation ran with recordCalls: false, or the module made none)."}</p>`;
  }
  return html`<h2>Model calls (${calls.length})</h2><div id="calls">${calls.map((c, i) => html`<section class="call" data-call="${i}">
<div><b>call ${i + 1}</b> · ${c.provider}/${c.model} · ${c.inputTokens} input tokens · ${c.outputTokens} output tokens · ${num(c.latencyMs, 0)} ms${c.cost === null ? "" : ` · cost ${num(c.cost, 6)}`}${c.cached ? html` · <b data-cached="1">cached</b>` : ""}</div>
${c.messages.map((m) => html`<div class="msg" data-role="${m.role}"><div class="role">${m.role}</div><pre>${m.content}</pre></div>`)}
<div class="msg" data-role="reply"><div class="role">reply</div><pre class="reply">${c.reply}</pre></div></section>`)}</div>`;
}

/** `/runs/<id>/rows/<index>`: one example in full. */
export function rowPage(run: RunSummary, row: ViewRow, calls: Markup): Markup {
  const base = `/runs/${encodeURIComponent(run.id)}`;
  const block = (title: string, value: unknown, id: string) => html`<h2>${title}</h2><pre id="${id}">${valueText(value, true)}</pre>`;
  return html`<p><a href="${base}">← ${run.name}</a> · <a href="${base}/rows/${row.index - 1}">previous</a> · <a href="${base}/rows/${row.index + 1}">next</a></p>
<h1>Example ${row.index}${row.exampleId === null ? "" : html` <code>${row.exampleId}</code>`}</h1>
<p>${num(row.durationMs, 0)} ms · ${row.inputTokens} input tokens · ${row.outputTokens} output tokens · cost ${num(row.cost, 6)}</p>
${block("Inputs", row.inputs, "inputs")}${block("Expected", row.expected, "expected")}${block("Prediction", row.prediction, "prediction")}
<h2>Scores</h2><table id="scores"><tbody>${Object.entries(row.scores).map(([m, v]) => html`<tr><td>${m}</td><td class="num" data-metric="${m}">${num(v)}</td></tr>`)}</tbody></table>
${row.details === undefined ? "" : html`<h2>What the metrics said</h2><table id="details"><thead><tr><th>metric</th><th>verdict or score</th><th>rationale</th></tr></thead><tbody>${Object.entries(row.details).map(([m, d]) => html`<tr data-details="${m}"><td>${m}</td><td>${valueText(d.verdict ?? d.score ?? "")}</td><td class="cell">${valueText(d.rationale ?? Object.fromEntries(Object.entries(d).filter(([k]) => k !== "verdict" && k !== "score")))}</td></tr>`)}</tbody></table>`}
${row.error === null ? "" : html`<h2>Error</h2><pre id="error" class="worse">${row.error}</pre>`}
${calls}`;
}
