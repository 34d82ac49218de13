// Stored values as fields rather than JSON text: an object as `name: value` lines (a nested object
// indented under its name), an array as numbered items, a long text folded in a <details> after its
// first `FOLD_CHARS` characters. Everything goes through `html`, so a stored value is only ever text.
// `FIELDS_SCRIPT` is the same rendering in the browser, for the rows a live page adds.
import { html, Markup, valueText } from "./html.js";
import { partialJson } from "./partial-json.js";
import { isCut } from "./data/source.js";
import { isMediaRef } from "../store/media/ref-read.js";
import { mediaMarkup } from "./media.js";

/** Characters of a text shown before the rest is folded (opened with a click). */
export const FOLD_CHARS = 400;

/** Nesting shown as fields; anything deeper is shown as its JSON text. */
const MAX_DEPTH = 8;

function text(value: string, fold: number): Markup {
  if (value.length <= fold) return html`<span class="v">${value}</span>`;
  return html`<details class="fold"><summary><span class="v">${value.slice(0, fold)}</span>… <span class="muted">(${value.length} characters: open for all)</span></summary><span class="v">${value}</span></details>`;
}

function render(value: unknown, fold: number, depth: number): Markup {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  if (typeof value === "string") return text(value, fold);
  if (typeof value !== "object") return html`<span class="v">${String(value)}</span>`;
  if (isMediaRef(value)) return mediaMarkup(value);
  // A value cut in a page of rows: its start, read as far as it goes (else as text); the example's page shows it whole.
  if (isCut(value)) {
    const read = partialJson(value.start);
    return html`${read === undefined ? html`<span class="v">${value.start.slice(0, fold)}</span>` : render(read, fold, depth + 1)}… <span class="muted">(${value.characters} characters in all: the example's page shows it whole)</span>`;
  }
  if (depth >= MAX_DEPTH) return text(valueText(value), fold);
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="muted">no items</span>`;
    return html`<ol class="items" start="0">${value.map((item) => html`<li>${render(item, fold, depth + 1)}</li>`)}</ol>`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return html`<span class="muted">none</span>`;
  return html`<div class="fields">${entries.map(([name, v]) => html`<div class="field" data-field="${name}"><span class="name">${name}:</span> ${render(v, fold, depth + 1)}</div>`)}</div>`;
}

/** `value` as fields (see the head of this file); texts longer than `fold` characters are folded. */
export function fields(value: unknown, fold = FOLD_CHARS): Markup {
  return render(value, fold, 0);
}

/** A model's reply: as fields when it is a JSON object or array (the raw text folded under it), else as text. */
export function replyFields(reply: string): Markup {
  const trimmed = reply.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      return html`<div class="reply-fields">${fields(parsed)}</div><details class="raw"><summary class="muted">raw reply</summary><pre class="reply">${reply}</pre></details>`;
    } catch {
      // Not JSON after all: shown as the text it is.
    }
  }
  return html`<pre class="reply">${reply}</pre>`;
}

/**
 * The browser's version of `fields` (ES5, DOM nodes with text only): `typelmFields(value, cut)` gives
 * a node; `cut` marks a value cut in a page of rows. Used by the live page's script.
 */
export const FIELDS_SCRIPT = `
function typelmMedia(ref) {
  var inline = ${JSON.stringify(["image/png", "image/jpeg", "image/gif", "image/webp", "audio/wav", "audio/mpeg"])}.indexOf(ref.mediaType) >= 0;
  var box = document.createElement("span"), src = "/media/" + ref.$media, about = document.createElement("span"), m;
  box.className = "media"; box.setAttribute("data-media", ref.$media); box.setAttribute("data-kind", String(ref.kind));
  about.className = "media-about muted";
  about.textContent = ref.kind + " \u00b7 " + ref.mediaType + " \u00b7 " + ref.size + " B \u00b7 sha256 " + ref.$media.slice(0, 12);
  if (inline && ref.kind === "image") { m = document.createElement("img"); m.src = src; m.alt = about.textContent; }
  else if (inline && ref.kind === "audio") { m = document.createElement("audio"); m.controls = true; var s = document.createElement("source"); s.src = src; s.type = ref.mediaType; m.appendChild(s); }
  else { m = document.createElement("a"); m.href = src; m.setAttribute("download", ""); m.textContent = "download the " + ref.kind; }
  box.appendChild(m); box.appendChild(about); return box;
}
function typelmFields(value, depth) {
  depth = depth || 0;
  function el(tag, cls, textContent) { var e = document.createElement(tag); if (cls) e.className = cls; if (textContent !== undefined) e.textContent = textContent; return e; }
  function txt(s) {
    if (s.length <= ${FOLD_CHARS}) return el("span", "v", s);
    var d = el("details", "fold"), sum = el("summary");
    sum.appendChild(el("span", "v", s.slice(0, ${FOLD_CHARS}))); sum.appendChild(document.createTextNode("\\u2026 "));
    sum.appendChild(el("span", "muted", "(" + s.length + " characters: open for all)"));
    d.appendChild(sum); d.appendChild(el("span", "v", s)); return d;
  }
  if (value === null || value === undefined) return el("span", "muted", "\\u2014");
  if (typeof value === "string") return txt(value);
  if (typeof value !== "object") return el("span", "v", String(value));
  if (typeof value.$media === "string" && /^[0-9a-f]{64}$/.test(value.$media)) return typelmMedia(value);
  if (value.truncated === true && typeof value.start === "string") {
    var c = el("span"); c.appendChild(el("span", "v", value.start.slice(0, ${FOLD_CHARS}))); c.appendChild(document.createTextNode("\\u2026 "));
    c.appendChild(el("span", "muted", "(" + value.characters + " characters in all: the example's page shows it whole)")); return c;
  }
  if (depth >= ${MAX_DEPTH}) return txt(JSON.stringify(value));
  if (Array.isArray(value)) {
    if (value.length === 0) return el("span", "muted", "no items");
    var ol = el("ol", "items"); ol.setAttribute("start", "0");
    value.forEach(function (item) { var li = el("li"); li.appendChild(typelmFields(item, depth + 1)); ol.appendChild(li); });
    return ol;
  }
  var keys = Object.keys(value);
  if (keys.length === 0) return el("span", "muted", "none");
  var box = el("div", "fields");
  keys.forEach(function (k) {
    var f = el("div", "field"); f.setAttribute("data-field", k);
    f.appendChild(el("span", "name", k + ":")); f.appendChild(document.createTextNode(" ")); f.appendChild(typelmFields(value[k], depth + 1));
    box.appendChild(f);
  });
  return box;
}
`;
