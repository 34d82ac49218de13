/**
 * Reads a TOON reply as it streams, by the rules `call()` reads it with (`parseToonReply`): the
 * body of a ```toon block, or the whole reply when it does not start with a fence. A top-level
 * field written on one line (`label: positive`, `tags[2]: a,b`) is complete when its line is; a
 * field written as an indented block (an object, a table, a list) when the next top-level line or
 * the closing fence arrives. Each field's lines are decoded once, by the same TOON codec; the line
 * being written is only searched for its key (a short prefix) and its string value is unquoted
 * piece by piece, so the cost per chunk does not grow with the reply.
 */
import { toon } from "../prompt/toon-data.js";

type State = "lead" | "fence" | "body" | "done" | "off";

/** `key: rest`, `key[N]: rest`, `key[N]{a,b}:`; the key possibly quoted. */
const HEADER = /^("(?:[^"\\]|\\.)*"|[^\s:[{"][^:[{]*?)(\[[^\]]*\])?(\{[^}]*\})?:(.*)$/;
const SIMPLE_KEY = /^([A-Za-z_$][\w$.-]*): /;
const UNESCAPE: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };

/** The string value of the line being written, unquoted as it arrives. */
interface Growing {
  name: string;
  value: string;
  quoted: boolean | undefined;
  escape: boolean;
  closed: boolean;
}

/** Streams a TOON reply; each complete top-level field goes to `onMember(name, value)` as decoded. */
export class ToonReplyReader {
  private state: State = "lead";
  private line = "";
  private block: { name: string; lines: string[] } | undefined;
  private growing: Growing | undefined;
  /** Whether the line being written was searched for its key without success (a long line). */
  private keyless = false;
  private readonly values: Record<string, unknown> = {};
  private changed = false;

  constructor(private readonly onMember: (name: string, value: unknown) => void) {}

  /** Whether the reply is being read (a ```toon block or a bare TOON reply). */
  get confident(): boolean {
    return this.state === "body" || this.state === "done";
  }

  /** Whether the value grew since the last call. */
  takeChanged(): boolean {
    const c = this.changed;
    this.changed = false;
    return c;
  }

  /** Reads one piece of the reply. */
  push(chunk: string): void {
    if (this.state === "done" || this.state === "off") return;
    if (this.state === "lead") {
      const start = chunk.search(/\S/);
      if (start === -1) return;
      this.state = chunk.startsWith("```", start) || (chunk[start] === "`" && chunk.length - start < 3) ? "fence" : "body";
      chunk = chunk.slice(start);
    }
    let from = 0;
    for (let nl = chunk.indexOf("\n"); nl !== -1 && this.reading(); nl = chunk.indexOf("\n", from)) {
      this.grow(chunk.slice(from, nl));
      const line = this.line.endsWith("\r") ? this.line.slice(0, -1) : this.line;
      this.line = "";
      this.growing = undefined;
      this.keyless = false;
      this.endLine(line);
      from = nl + 1;
    }
    if (from < chunk.length && this.reading()) this.grow(chunk.slice(from));
  }

  private reading(): boolean {
    return this.state !== "done" && this.state !== "off";
  }

  /** More text of the current line: finds its key, then unquotes its string value piece by piece. */
  private grow(piece: string): void {
    if (piece === "") return;
    this.line += piece;
    if (this.state !== "body" || this.growing === undefined) {
      if (this.state !== "body" || this.keyless || this.line.startsWith(" ")) return;
      const key = SIMPLE_KEY.exec(this.line.length > 200 ? this.line.slice(0, 200) : this.line);
      if (key === null) {
        this.keyless = this.line.length > 200;
        return;
      }
      this.growing = { name: key[1]!, value: "", quoted: undefined, escape: false, closed: false };
      piece = this.line.slice(key[0].length);
    }
    const g = this.growing;
    if (g.closed) return;
    for (let i = 0; i < piece.length; i++) {
      const ch = piece[i]!;
      if (g.quoted === undefined) {
        g.quoted = ch === '"';
        if (g.quoted) continue;
      }
      if (!g.quoted) {
        g.value += piece.slice(i);
        break;
      }
      if (g.escape) {
        g.value += UNESCAPE[ch] ?? ch;
        g.escape = false;
      } else if (ch === "\\") g.escape = true;
      else if (ch === '"') {
        g.closed = true;
        break;
      }
      else {
        const stop = piece.slice(i).search(/["\\]/);
        const end = stop === -1 ? piece.length : i + stop;
        g.value += piece.slice(i, end);
        i = end - 1;
      }
    }
    this.changed = true;
  }

  /** A complete line: the fence's opening or closing, a top-level field, or a line of an open block. */
  private endLine(line: string): void {
    if (this.state === "fence") {
      this.state = /^```[ \t]*toon[ \t]*$/i.test(line) ? "body" : "off";
      return;
    }
    if (line.startsWith("```")) {
      this.closeBlock();
      this.state = "done";
      return;
    }
    if (line.trim() === "") return;
    if (line.startsWith(" ")) {
      this.block?.lines.push(line);
      return;
    }
    this.closeBlock();
    const header = HEADER.exec(line);
    if (header === null) return;
    if (header[4]!.trim() !== "") this.decode([line]);
    else this.block = { name: header[1]!, lines: [line] };
  }

  /** The open block field is complete (a new top-level line, the closing fence). */
  private closeBlock(): void {
    const block = this.block;
    this.block = undefined;
    if (block !== undefined) this.decode(block.lines);
  }

  /** Call at the end of the reply: a block still open is complete. */
  end(): void {
    if (this.state === "body") this.closeBlock();
  }

  private decode(lines: string[]): void {
    let decoded: Record<string, unknown>;
    try {
      decoded = toon().decode(lines.join("\n")) as Record<string, unknown>;
    } catch {
      this.state = "off"; // not TOON after all: `call()` decides at the end
      return;
    }
    for (const [name, value] of Object.entries(decoded)) {
      this.values[name] = value;
      this.changed = true;
      this.onMember(name, value);
    }
  }

  /** The fields read so far, with the string being written. */
  snapshot(): Record<string, unknown> {
    const out = { ...this.values };
    if (this.growing !== undefined && !(this.growing.name in out)) out[this.growing.name] = this.growing.value;
    return out;
  }
}
