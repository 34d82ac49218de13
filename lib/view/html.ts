// HTML for the viewer's pages. Every interpolated value of the `html` template is escaped unless it is
// markup this module built (`Markup`), so a stored value (a model's reply, a dataset's text) can only
// ever be text on the page.
import { isCut } from "./data/source.js";
import { escapeHtml } from "../notebook/html.js";

/** Markup built by `html` (safe to insert as it is). */
export class Markup {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Markup | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Markup) return part.text;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

/** A template whose values are escaped (arrays joined, null/undefined/false left out, `Markup` kept). */
export function html(strings: TemplateStringsArray, ...values: Part[]): Markup {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Markup(out);
}

/** Characters of one value a table cell shows; the whole value is on the row's page. */
export const CELL_CHARS = 400;

/** A value as text: strings as they are, a value cut in a page of rows as its start, everything else as JSON (indented when `pretty`). */
export function valueText(value: unknown, pretty = false): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return value;
  // A value too long for a page of rows (see ViewRow.truncated): its start; the example's page has it whole.
  if (isCut(value)) return `${value.start}… (${value.characters} characters in all)`;
  try {
    return JSON.stringify(value, null, pretty ? 2 : undefined) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `text` cut to `max` characters with an ellipsis. */
export function clip(text: string, max = CELL_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A number at three decimals, or a dash. */
export function num(value: number | null | undefined, digits = 3): string {
  return value === null || value === undefined || !Number.isFinite(value) ? "—" : value.toFixed(digits);
}

/** A path of the viewer with its query string (empty values left out). */
export function link(path: string, query: Record<string, string | number | boolean | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "" && v !== false) params.set(k, String(v));
  const q = params.toString();
  return q === "" ? path : `${path}?${q}`;
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}
header{background:#23395d;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:baseline}
header a{color:#fff;text-decoration:none;font-weight:600}header .store{margin-left:auto;font-size:12px;opacity:.8}
main{padding:12px 16px;max-width:1400px}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d4d4d4;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f6}td.cell{white-space:pre-wrap;word-break:break-word;max-width:420px;font-family:ui-monospace,monospace;font-size:12px}
tr[data-failed] td{background:#fff1f0}tr[data-failed] td:first-child{box-shadow:inset 4px 0 0 #cf222e}tr[data-failed=wrong] td{background:#fff8e6}tr[data-failed=wrong] td:first-child{box-shadow:inset 4px 0 0 #bf8700}.num{text-align:right;font-variant-numeric:tabular-nums}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:8px;border:1px solid #e1e4e8;margin:4px 0}
form.filters{display:flex;gap:10px;flex-wrap:wrap;align-items:end;margin:8px 0;padding:8px;background:#f6f8fa;border:1px solid #e1e4e8}
form.filters label{display:flex;flex-direction:column;font-size:12px}
.muted{color:#666}.better{color:#116329}.worse{color:#a40e26}.pager a,.pager span{margin-right:10px}
.status-running{color:#9a6700}.status-failed{color:#a40e26}.status-completed{color:#116329}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px}.del{background:#ffebe9}.ins{background:#dafbe1}
.call{border:1px solid #d4d4d4;margin:8px 0;padding:6px 10px}.msg{margin:4px 0}.role{font-weight:600;font-size:12px;color:#555}
.fields{display:block}.field{margin:1px 0}.field>.name{font-weight:600;color:#444}
.field>.fields,.field>ol.items{margin:2px 0 2px 1.4em}ol.items{margin:2px 0;padding-left:1.6em}
.v{white-space:pre-wrap;word-break:break-word}details.fold,details.fold>summary{display:inline}details.fold>summary{cursor:pointer;list-style:none}details.fold>summary .muted{text-decoration:underline dotted}details.fold[open]>summary>.v{display:none}
div.block{background:#f6f8fa;padding:8px;border:1px solid #e1e4e8;margin:4px 0}td.cell .fields{font-family:inherit}
.media{display:inline-flex;flex-direction:column;align-items:flex-start;gap:2px;vertical-align:top;margin:2px 0}.media img{max-width:240px;max-height:240px;border:1px solid #d4d4d4;background:#fff;image-rendering:auto}.media audio{width:260px}.media-about{font-size:11px}
`;

/** A whole page: the header, `body`, and (with a nonce) the page's one inline script. */
export function page(title: string, storePath: string, body: Markup, script?: { nonce: string; code: string }): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title} · typelm view</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="/favicon.ico" type="image/svg+xml">
<style>${new Markup(STYLE)}</style></head>
<body><header><a href="/">typelm view</a><a href="/">Runs</a><a href="/registry">Registry</a><span class="store">${storePath}</span></header>
<main>${body}</main>${script === undefined ? "" : new Markup(`<script nonce="${escapeHtml(script.nonce)}">${script.code}</script>`)}</body></html>`.text;
}
