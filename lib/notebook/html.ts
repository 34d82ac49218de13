/** HTML building blocks shared by the display helpers. Every value that reaches HTML goes through `escapeHtml`. */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for use in HTML content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
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

/** One table cell: `text` is escaped here; `style` is added to the cell (for highlighting). */
export interface Cell {
  text: string;
  style?: string;
}

/** An HTML table from already-formatted cell texts (escaped here). */
export function htmlTable(headers: readonly string[], rows: readonly (readonly (string | Cell)[])[], caption?: string): string {
  const head = headers.map((h) => `<th style="${CELL_STYLE};background:#f3f3f3">${escapeHtml(h)}</th>`).join("");
  const body = rows
    .map((row) => {
      const cells = row.map((c) => {
        const cell = typeof c === "string" ? { text: c } : c;
        return `<td style="${CELL_STYLE}${cell.style ? ";" + cell.style : ""}">${escapeHtml(cell.text)}</td>`;
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

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function clip(text: string, width: number): string {
  return text.length > width ? text.slice(0, width - 1) + "…" : text;
}
