// The runs page's picking of runs to compare: a checkbox per run, a link the page's script points at
// `/compare/a/b` (two runs) or `/matrix?runs=…` (more), and a plain form that opens the matrix of the
// picked runs without script.
import type { RunSummary } from "../../store/records.js";
import { html, Markup } from "../html.js";

/** A run's checkbox on the runs page (an optimization's is disabled: only evaluations are compared). */
export function pickCell(run: RunSummary): Markup {
  return html`<td><input type="checkbox" form="pick" name="runs" value="${run.id}" data-select-run="${run.id}" aria-label="pick ${run.name}"${new Markup(run.kind === "evaluation" ? "" : ' disabled title="only evaluation runs are compared"')}></td>`;
}

/**
 * Under the runs table: the link to compare the picked runs (the page's script points it at
 * `/compare/a/b` for two, `/matrix?runs=…` for more, older run first) and, without script, a button
 * that opens the matrix of the picked runs.
 */
export function pickBar(): Markup {
  return html`<form id="pick" method="get" action="/matrix" class="filters"><a data-compare href="/matrix" aria-disabled="true">pick two or more evaluation runs to compare them</a>
<noscript><button type="submit">Compare the picked runs</button></noscript></form>`;
}

/** The runs page's script: keeps `a[data-compare]` pointing at the comparison of the picked runs. */
export const PICK_SCRIPT = `
(function () {
  var link = document.querySelector("a[data-compare]");
  if (!link) return;
  function update() {
    var boxes = document.querySelectorAll("input[data-select-run]:checked"), ids = [];
    for (var i = boxes.length - 1; i >= 0; i--) ids.push(encodeURIComponent(boxes[i].getAttribute("data-select-run")));
    link.href = ids.length === 2 ? "/compare/" + ids[0] + "/" + ids[1] : "/matrix?runs=" + ids.join(",");
    link.setAttribute("aria-disabled", ids.length < 2 ? "true" : "false");
    link.textContent = ids.length < 2 ? "pick two or more evaluation runs to compare them"
      : ids.length === 2 ? "compare the 2 picked runs" : "compare the " + ids.length + " picked runs side by side";
  }
  document.addEventListener("change", function (e) { if (e.target && e.target.hasAttribute && e.target.hasAttribute("data-select-run")) update(); });
  update();
})();
`;
