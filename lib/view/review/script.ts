// The review queue page's script (runs under the page's nonce, as every viewer script): takes the
// session token from the address's fragment (#token=…, never sent to the server, then removed from the
// address bar) into this tab's sessionStorage, and drives the queue from the keyboard. Every write is a
// `POST /api/reviews` with a JSON body and the token in the `X-Typelm-Token` header (no cookie), so
// another site's page can neither send one nor read the token. Stored text is set as textContent only.

/** The style the page adds for the row under review. */
export const REVIEW_STYLE = "tr.current td{background:#eef4ff}tr.current td:first-child{box-shadow:inset 4px 0 0 #0969da}tr[data-reviewed] td:last-child{background:#f0fff4}textarea,input[data-note-edit]{font:12px ui-monospace,monospace}";

/** The queue's keyboard: j/k, p/f, digits, e, n, Enter, Escape (see the page's key line). */
export const REVIEW_SCRIPT = `
(function () {
  var KEY = "typelm-review-token";
  var m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(KEY, decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  var token = sessionStorage.getItem(KEY);
  var status = document.getElementById("review-status");
  function say(text, bad) { status.textContent = text; status.className = bad ? "worse" : "muted"; }
  if (!token) say("No session token in this tab: open the address typelm view --review printed (it ends in #token=\\u2026).", true);
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-review-row]"));
  var at = -1, pending = {};
  function q(row, sel) { return row.querySelector(sel); }
  function select(i) {
    if (rows.length === 0) return;
    i = Math.max(0, Math.min(rows.length - 1, i));
    if (at >= 0) rows[at].classList.remove("current");
    at = i;
    rows[at].classList.add("current");
    rows[at].scrollIntoView({ block: "nearest" });
  }
  function current() { return at >= 0 ? rows[at] : null; }
  function mark(verdict) {
    var row = current(); if (!row) return;
    pending[at] = verdict;
    q(row, "[data-pending]").textContent = "\\u2192 " + verdict + " (Enter saves)";
  }
  function open(sel) {
    var row = current(); if (!row) return;
    var field = q(row, sel);
    field.hidden = false;
    field.focus();
  }
  function save() {
    var row = current(); if (!row) return;
    var verdict = pending[at];
    if (verdict === undefined) {
      var shown = row.getAttribute("data-reviewed");
      if (shown === null) { say("Give a verdict first: p pass, f fail, or a digit for a score.", true); return; }
      verdict = shown;
    }
    var body = { runId: row.getAttribute("data-run-id"), exampleId: row.getAttribute("data-example-id"), verdict: verdict === "pass" || verdict === "fail" ? verdict : Number(verdict) };
    var edit = q(row, "[data-expected-edit]");
    if (!edit.hidden) {
      try { body.expected = JSON.parse(edit.value); } catch (e) { say("The expected output is not valid JSON: " + e.message, true); edit.focus(); return; }
      if (body.expected === null || typeof body.expected !== "object" || Array.isArray(body.expected)) { say("The expected output must be a JSON object, field by field.", true); edit.focus(); return; }
    }
    var note = q(row, "[data-note-edit]");
    if (note.value !== "") body.note = note.value;
    if (!token) { say("No session token in this tab: open the address typelm view --review printed.", true); return; }
    var index = at;
    say("Saving\\u2026", false);
    fetch("/api/reviews", { method: "POST", headers: { "content-type": "application/json", "x-typelm-token": token }, body: JSON.stringify(body) })
      .then(function (res) { return res.json().then(function (data) { return { ok: res.ok, data: data }; }); })
      .then(function (r) {
        if (!r.ok) { say("Not saved: " + (r.data && r.data.error ? r.data.error : "the viewer refused it"), true); return; }
        var a = r.data;
        row.setAttribute("data-reviewed", String(a.verdict));
        q(row, "[data-verdict]").textContent = String(a.verdict);
        q(row, "[data-pending]").textContent = "";
        q(row, "[data-note]").textContent = a.note === null ? "" : a.note;
        q(row, "[data-reviewer]").textContent = a.reviewer + " \\u00b7 " + a.createdAt;
        if (a.expected !== null) {
          var shownExpected = q(row, "[data-expected-shown]");
          shownExpected.textContent = "";
          shownExpected.appendChild(typelmFields(a.expected));
        }
        edit.hidden = true; note.hidden = true;
        delete pending[index];
        say("Saved " + body.exampleId + ": " + a.verdict + ".", false);
        if (at === index) select(index + 1);
      })
      .catch(function (e) { say("Not saved: " + e.message, true); });
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target, editing = t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT");
    if (editing) {
      if (!t.hasAttribute("data-expected-edit") && !t.hasAttribute("data-note-edit")) return;
      if (e.key === "Escape") { t.blur(); e.preventDefault(); }
      else if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); t.blur(); save(); }
      return;
    }
    var k = e.key;
    if (k === "j") select(at + 1);
    else if (k === "k") select(at - 1);
    else if (k === "p") mark("pass");
    else if (k === "f") mark("fail");
    else if (/^[0-9]$/.test(k)) mark(k);
    else if (k === "e") open("[data-expected-edit]");
    else if (k === "n") open("[data-note-edit]");
    else if (k === "Enter") save();
    else return;
    e.preventDefault();
  });
  select(0);
})();
`;
