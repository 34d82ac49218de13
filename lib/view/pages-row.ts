// The page of one evaluated example: its inputs, expected values, prediction, scores and error as
// fields, what its metrics said (a judge's verdict and rationale), and its model calls as a transcript
// (a structured reply as fields, its raw text a click away). Every stored value is escaped text.
import type { ModelCall } from "../lm/usage-scope.js";
import type { RunSummary } from "../store/records.js";
import { fields, replyFields } from "./fields.js";
import { html, type Markup, num } from "./html.js";
import { textWithMedia } from "./media.js";
import type { ViewRow } from "./data/queries.js";

/** An example's model calls as a transcript: each call's messages, then its reply. */
export function callsSection(calls: ModelCall[] | null): Markup {
  if (calls === null || calls.length === 0) {
    return html`<h2>Model calls</h2><p class="muted" id="calls">${calls === null ? "This store records no model calls (it was written by a typelm that did not)." : "No model call was recorded for this example (the evaluation ran with recordCalls: false, or the module made none)."}</p>`;
  }
  return html`<h2>Model calls (${calls.length})</h2><div id="calls">${calls.map((c, i) => html`<section class="call" data-call="${i}">
<div><b>call ${i + 1}</b> · ${c.provider}/${c.model} · ${c.inputTokens} input tokens · ${c.outputTokens} output tokens · ${num(c.latencyMs, 0)} ms${c.cost === null ? "" : ` · cost ${num(c.cost, 6)}`}${c.cached ? html` · <b data-cached="1">cached</b>` : ""}</div>
${c.messages.map((m) => html`<div class="msg" data-role="${m.role}"><div class="role">${m.role}</div><pre>${textWithMedia(m.content)}</pre>${extras(m)}</div>`)}
<div class="msg" data-role="reply"><div class="role">reply</div>${replyFields(c.reply)}</div></section>`)}</div>`;
}

/** What a recorded message carries beside its text (media parts: references shown as media), as fields. */
function extras(message: object): Markup | "" {
  const rest = Object.entries(message).filter(([k]) => k !== "role" && k !== "content");
  return rest.length === 0 ? "" : html`<div class="msg-parts">${fields(Object.fromEntries(rest))}</div>`;
}

/** `/runs/<id>/rows/<index>`: one example in full. */
export function rowPage(run: RunSummary, row: ViewRow, calls: Markup): Markup {
  const base = `/runs/${encodeURIComponent(run.id)}`;
  const block = (title: string, value: unknown, id: string) => html`<h2>${title}</h2><div class="block" id="${id}">${fields(value)}</div>`;
  return html`<p><a href="${base}">← ${run.name}</a> · <a href="${base}/rows/${row.index - 1}">previous</a> · <a href="${base}/rows/${row.index + 1}">next</a></p>
<h1>Example ${row.index}${row.exampleId === null ? "" : html` <code>${row.exampleId}</code>`}</h1>
<p>${num(row.durationMs, 0)} ms · ${row.inputTokens} input tokens · ${row.outputTokens} output tokens · cost ${num(row.cost, 6)}</p>
${block("Inputs", row.inputs, "inputs")}${block("Expected", row.expected, "expected")}${block("Prediction", row.prediction, "prediction")}
<h2>Scores</h2><table id="scores"><tbody>${Object.entries(row.scores).map(([m, v]) => html`<tr><td>${m}</td><td class="num" data-metric="${m}">${num(v)}</td></tr>`)}</tbody></table>
${row.details === undefined ? "" : html`<h2>What the metrics said</h2><table id="details"><thead><tr><th>metric</th><th>verdict or score</th><th>rationale</th></tr></thead><tbody>${Object.entries(row.details).map(([m, d]) => html`<tr data-details="${m}"><td>${m}</td><td>${fields(d.verdict ?? d.score ?? "")}</td><td class="cell" data-rationale="${m}">${fields(d.rationale ?? Object.fromEntries(Object.entries(d).filter(([k]) => k !== "verdict" && k !== "score")))}</td></tr>`)}</tbody></table>`}
${row.error === null ? "" : html`<h2>Error</h2><pre id="error" class="worse">${row.error}</pre>`}
${calls}`;
}
