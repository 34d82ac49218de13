// The review queue's page (/review): the filters, then one table row per row to review with its
// inputs, expected output, prediction, scores and latest review; in review mode, a hidden editor per
// row (the corrected expected output as JSON, a note) the page's script (script.ts) opens from the
// keyboard. Every stored value goes through `html`, so a note or a reply is only ever text. A viewer
// started without --review shows none of it: a sentence saying how to start one that writes.
import { html, num, valueText, type Markup } from "../html.js";
import { fields } from "../fields.js";
import type { QueueItem, QueueQuery } from "./queue.js";

/** The keys the queue answers to, as the page lists them. */
const KEYS = "j / k next / previous · p pass · f fail · 0–9 a score · e edit the expected output · n a note · Enter save · Esc leave an editor";

/** What a viewer started without --review shows at /review: nothing that writes. */
export function readOnlyReviewPage(): Markup {
  return html`<h1>Review queue</h1>
<p id="read-only">This viewer was started read-only, so nothing can be reviewed here. Start it with <code>typelm view --review</code>
and open the address it prints (it carries the session's token).</p>`;
}

/** The queue's page in review mode. */
export function reviewPage(items: readonly QueueItem[], runCount: number, query: QueueQuery): Markup {
  return html`<h1>Review queue</h1>
<form class="filters" method="get" action="/review">
<label>run<input name="run" value="${query.run ?? ""}" placeholder="newest ${runCount} runs"></label>
<label>judge or metric<input name="metric" value="${query.metric ?? ""}"></label>
<label>score at most<input name="max" value="${query.maxScore ?? ""}" size="5"></label>
<label>user feedback<select name="feedback"><option value=""${sel(query.feedback === undefined)}>any or none</option><option value="negative"${sel(query.feedback === "negative")}>thumbs-down</option><option value="positive"${sel(query.feedback === "positive")}>thumbs-up</option><option value="any"${sel(query.feedback === "any")}>any feedback</option></select></label>
<label>order<select name="order"><option value="unreviewed"${sel(query.unreviewedFirst)}>unreviewed first</option><option value="index"${sel(!query.unreviewedFirst)}>as recorded</option></select></label>
<button type="submit">Filter</button></form>
<p class="muted" id="review-keys">${KEYS}</p>
<p id="review-status" role="status" aria-live="polite"></p>
${items.length === 0 ? html`<p class="muted" id="review-empty">No rows to review${query.maxScore !== undefined ? " at or under this score" : ""}${query.feedback !== undefined ? " with this feedback" : ""}: evaluation and traces runs' rows appear here.</p>` : html`
<table id="review-queue"><thead><tr><th>run</th><th>example</th><th>inputs</th><th>expected</th><th>prediction</th><th>scores</th><th>review</th></tr></thead><tbody>
${items.map(rowOf)}
</tbody></table>`}`;
}

function sel(on: boolean): Markup {
  return html`${on ? html` selected` : ""}`;
}

function rowOf(item: QueueItem): Markup {
  const { row, run, review } = item;
  const scores = Object.fromEntries(Object.entries(row.scores).map(([m, v]) => [m, num(v)]));
  return html`<tr data-review-row data-run-id="${run.id}" data-example-id="${item.exampleId}"${review === undefined ? "" : html` data-reviewed="${String(review.verdict)}"`}${row.error === null ? "" : html` data-failed`}>
<td><a href="/runs/${encodeURIComponent(run.id)}/rows/${row.index}">${run.name}</a> <span class="muted">${run.kind}</span></td><td>${item.exampleId}</td>
<td class="cell">${fields(row.inputs)}</td>
<td class="cell"><div data-expected-shown>${fields(review?.expected ?? row.expected)}</div><textarea data-expected-edit hidden rows="6" cols="40" aria-label="corrected expected output (JSON)">${valueText(review?.expected ?? row.expected, true)}</textarea></td>
<td class="cell">${row.error === null ? fields(row.prediction) : html`${fields(row.prediction)}<div class="worse">${row.error}</div>`}</td>
<td class="cell">${fields(scores)}</td>
<td class="cell">${reviewCell(item)}</td></tr>`;
}

/** The review column: the verdict (and one pending), the note and its editor, the user's feedback, who reviewed. */
function reviewCell(item: QueueItem): Markup {
  const { review, feedback } = item;
  const verdict = html`<div><span class="name">verdict:</span> <span data-verdict>${review === undefined ? "—" : String(review.verdict)}</span> <span data-pending class="muted"></span></div>`;
  const note = html`<div><span class="name">note:</span> <span data-note>${review?.note ?? ""}</span></div><input data-note-edit hidden size="30" aria-label="note" value="${review?.note ?? ""}">`;
  const user = feedback === undefined
    ? ""
    : html`<div data-feedback="${String(feedback.score)}"><span class="name">user:</span> ${feedback.score <= 0 ? "thumbs-down" : "thumbs-up"} (${num(feedback.score)})${feedback.comment === null ? "" : html` “${feedback.comment}”`}</div>`;
  const who = html`<div class="muted" data-reviewer>${review === undefined ? "" : `${review.reviewer} · ${review.createdAt}`}</div>`;
  return html`${verdict}${note}${user}${who}`;
}
