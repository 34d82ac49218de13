/** HTML building blocks shared by the display helpers. Every value that reaches HTML goes through `escapeHtml`. */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for use in HTML content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * Characters of one cell (a table cell, an agent's thought or observation) that a display's HTML
 * shows; the rest is replaced by a marker saying how many were left out. A notebook keeps every
 * bundle in the .ipynb file, so one 50 MB example would otherwise make a 50 MB display. The values
 * themselves are never changed (the store and the examples keep the whole text).
 */
export const HTML_CELL_LIMIT = 3000;

/**
 * Text for HTML content: escaped, and past `HTML_CELL_LIMIT` characters cut (before escaping, so no
 * entity is split, and never inside a surrogate pair) with a grey "… (N more characters)" marker.
 */
export function htmlText(value: unknown): string {
  const text = String(value);
  if (text.length <= HTML_CELL_LIMIT) return escapeHtml(text);
  let cut = HTML_CELL_LIMIT;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  const left = text.length - cut;
  return `${escapeHtml(text.slice(0, cut))}<span style="color:#888">… (${left.toLocaleString("en-US")} more characters)</span>`;
}

/** A value as readable text: strings as they are, everything else as compact JSON. */
export function showValue(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return value;
  if (typeof value === "number") return formatNumber(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Scores and costs: at most four decimals, no trailing noise. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toFixed(4)));
}

const TABLE_STYLE = "border-collapse:collapse;font-family:sans-serif;font-size:13px;margin:4px 0";
const CELL_STYLE = "border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;white-space:pre-wrap";

/** One table cell: `text` is escaped (and a long one cut, see `htmlText`) here; `style` is added to the cell (for highlighting). */
export interface Cell {
  text: string;
  style?: string;
  /** Markup built by typelm for the HTML table (its values already escaped), shown instead of `text`. */
  html?: string;
}

/** An HTML table from already-formatted cell texts (escaped here, long ones cut: `htmlText`). */
export function htmlTable(headers: readonly string[], rows: readonly (readonly (string | Cell)[])[], caption?: string): string {
  const head = headers.map((h) => `<th style="${CELL_STYLE};background:#f3f3f3">${escapeHtml(h)}</th>`).join("");
  const body = rows
    .map((row) => {
      const cells = row.map((c) => {
        const cell = typeof c === "string" ? { text: c } : c;
        return `<td style="${CELL_STYLE}${cell.style ? ";" + cell.style : ""}">${cell.html ?? htmlText(cell.text)}</td>`;
      });
      return `<tr>${cells.join("")}</tr>`;
    })
    .join("");
  const cap = caption ? `<div style="font:bold 13px sans-serif;margin-top:4px">${escapeHtml(caption)}</div>` : "";
  return `${cap}<table style="${TABLE_STYLE}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** The same table as aligned plain text, for `text/plain`. */
export function textTable(headers: readonly string[], rows: readonly (readonly (string | Cell)[])[]): string {
  const texts = rows.map((r) => r.map((c) => oneLine(typeof c === "string" ? c : c.text)));
  const widths = headers.map((h, i) => Math.min(60, Math.max(h.length, ...texts.map((r) => (r[i] ?? "").length))));
  const line = (cells: readonly string[]) => cells.map((c, i) => clip(c, widths[i]!).padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...texts.map(line)].join("\n");
}

/** Whitespace runs as one space; a column is at most 60 wide, so only the start of a long text is read. */
function oneLine(text: string): string {
  return (text.length > HTML_CELL_LIMIT ? text.slice(0, HTML_CELL_LIMIT) : text).replace(/\s+/g, " ").trim();
}

function clip(text: string, width: number): string {
  return text.length > width ? text.slice(0, width - 1) + "…" : text;
}
