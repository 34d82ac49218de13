// Text a model or a dataset wrote, put into markdown (report.md) so that it shows as the same text
// and never as markup: GitHub renders CommonMark with the GFM extensions, where an instruction such
// as "![x](https://attacker.example/p.png)" would load a remote image, "[a](url)" or a bare URL would
// link, a backtick would start code and HTML would be HTML.

/**
 * Inline text: HTML characters as entities (no tag, no <autolink>), backslash before every character
 * that opens inline markup (links and images need "[", code "`", emphasis "*" and "_", strikethrough
 * "~", GitHub's math "$", table cells "|"), and GFM's bare autolinks broken ("https\://", "www\.",
 * "\@"). An "_" between two letters or digits cannot open or close emphasis, so it is kept as is
 * (snake_case labels stay readable); so are ( ) ! : and the like, which make nothing without "[".
 * Newlines are kept: the caller decides what a line break means where the text goes.
 */
export function markdownInline(text: string): string {
  return text
    .replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"))
    .replace(/[\\`*~[\]|$@]/g, (c) => `\\${c}`)
    .replace(/_/g, (c, at: number, all: string) => (WORD.test(all[at - 1] ?? "") && WORD.test(all[at + 1] ?? "") ? c : "\\_"))
    .replace(/:(?=\/\/)/g, "\\:")
    .replace(/(www)\./gi, "$1\\.");
}

const WORD = /^[\p{L}\p{N}]$/u;

/** A table cell: inline text on one line (CR, LF and CRLF become a space, so the row stays one row). */
export function markdownCell(text: string): string {
  return markdownInline(text).replace(/\r\n|\r|\n/g, " ");
}

/**
 * A block quote ("> " before each line) whose lines cannot start a block of their own: heading,
 * list, thematic break, setext underline, fence or indented code.
 */
export function markdownQuote(text: string): string[] {
  return text.split(/\r\n|\r|\n/).map((line) => `> ${lineStart(markdownInline(line))}`);
}

function lineStart(line: string): string {
  // Leading space or tab as an entity is text, not indentation (four spaces would make code).
  if (/^[ \t]/.test(line)) return `${line[0] === " " ? "&#32;" : "&#9;"}${line.slice(1)}`;
  return line.replace(/^[#+=-]/, "\\$&").replace(/^(\d{1,9})([.)])/, "$1\\$2");
}

/** A code span holding `text` as is, on one line, with a fence longer than any backtick run inside. */
export function markdownCode(text: string): string {
  const flat = text.replace(/\r\n|\r|\n/g, " ");
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = longest > 0 || flat.startsWith(" ") || flat.endsWith(" ") ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}
