// The evaluation page's one inline script (run under the page's nonce): fills in the intervals still
// being computed and, on a running run's page, adds the rows written since, built as the server
// builds them (values as fields, failed and wrong rows marked), from text only.
import { FIELDS_SCRIPT } from "./fields.js";

/**
 * The page's script: fills in intervals still being computed (a large run's bootstrap), and on a
 * running evaluation's page adds the rows written after the last shown, polling each second.
 */
export const LIVE_SCRIPT = `${FIELDS_SCRIPT}
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
  var markMetric = table.getAttribute("data-mark-metric");
  function cell(text, cls) { var td = document.createElement("td"); if (cls) td.className = cls; td.textContent = text; return td; }
  function fieldsCell(v) { var td = cell("", "cell"); td.appendChild(typelmFields(v)); return td; }
  function add(r) {
    var tr = document.createElement("tr");
    tr.setAttribute("data-example-id", r.exampleId === null ? "#" + r.index : r.exampleId);
    tr.setAttribute("data-index", String(r.index));
    if (r.error !== null) { tr.className = "failed"; tr.setAttribute("data-failed", "error"); }
    else if (markMetric && typeof r.scores[markMetric] === "number" && r.scores[markMetric] < 1) tr.setAttribute("data-failed", "wrong");
    var first = cell("", "num"); var a = document.createElement("a");
    a.href = "/runs/" + encodeURIComponent(run) + "/rows/" + r.index; a.textContent = String(r.index); first.appendChild(a);
    tr.appendChild(first);
    tr.appendChild(cell(r.exampleId === null ? "\\u2014" : r.exampleId));
    tr.appendChild(fieldsCell(r.inputs));
    tr.appendChild(fieldsCell(r.expected));
    tr.appendChild(fieldsCell(r.prediction));
    var scores = {}; Object.keys(r.scores).forEach(function (m) { scores[m] = Number(r.scores[m]).toFixed(3); });
    tr.appendChild(fieldsCell(scores));
    tr.appendChild(r.error === null ? cell("", "cell") : fieldsCell(r.error));
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

