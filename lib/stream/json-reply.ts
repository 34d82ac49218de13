/**
 * Finds the JSON in a reply as it streams, by the rules the reply extractor (`extractJson`)
 * applies to the whole reply, and feeds it to a `JsonReader`:
 * - a reply that starts (after white space) with `{` is the JSON itself (native structured output
 *   and bare JSON);
 * - otherwise the first fenced block labelled json (```json, jsonc, json5), which the extractor
 *   tries before any other block or any JSON in prose.
 * Only these replies are read while streaming (`confident`): for any other reply (JSON in prose,
 * an unlabelled block) the extractor's choice is known only at the end, so fields are reported then.
 */
import { JsonReader } from "./json-reader.js";

type State = "lead" | "scan" | "skip" | "json" | "off";

const FENCE_OPEN = "```";
const JSON_LANG = /^(json|jsonc|json5)$/i;
const LANG = /^[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?$/;

/** Streams a reply's JSON into a reader; the reader's members go to `onMember`. */
export class JsonReplyReader {
  readonly reader: JsonReader;
  private state: State = "lead";
  /** Text kept between chunks while a fence's opening line is incomplete (a few characters). */
  private carry = "";

  constructor(onMember: (name: string, value: unknown) => void) {
    this.reader = new JsonReader(onMember);
  }

  /** Whether the reply is being read (JSON found where the extractor looks first). */
  get confident(): boolean {
    return this.state === "json" && !this.reader.failed;
  }

  /** Reads one piece of the reply. */
  push(chunk: string): void {
    if (this.state === "json") return this.reader.push(chunk);
    if (this.state === "off") return;
    if (this.state === "lead") {
      const start = chunk.search(/\S/);
      if (start === -1) return;
      if (chunk[start] === "{") {
        this.state = "json";
        return this.reader.push(chunk.slice(start));
      }
      this.state = "scan";
      chunk = chunk.slice(start);
    }
    this.scan(chunk);
  }

  /** Looks for the opening of a fenced block; skips blocks that are not JSON. */
  private scan(chunk: string): void {
    let text = this.carry + chunk;
    this.carry = "";
    for (;;) {
      const at = text.indexOf(FENCE_OPEN);
      if (at === -1) {
        // A fence may start across the chunk boundary: keep the last two characters.
        this.carry = text.slice(-2);
        return;
      }
      const body = at + FENCE_OPEN.length;
      if (this.state === "skip") {
        this.state = "scan"; // the block closed
        text = text.slice(body);
        continue;
      }
      const nl = text.indexOf("\n", body);
      if (nl === -1) {
        if (text.length - at > 64) { // not a fence opening: no newline soon after ```
          text = text.slice(body);
          continue;
        }
        this.carry = text.slice(at);
        return;
      }
      const lang = LANG.exec(text.slice(body, nl));
      if (lang !== null && JSON_LANG.test(lang[1]!)) {
        this.state = "json";
        return this.reader.push(text.slice(nl + 1));
      }
      if (lang !== null) this.state = "skip";
      text = text.slice(lang !== null ? nl + 1 : body);
    }
  }

  /** Whether the value grew since the last call. */
  takeChanged(): boolean {
    return this.reader.takeChanged();
  }

  /** The value read so far (see `JsonReader.snapshot`). */
  snapshot(): unknown {
    return this.reader.snapshot();
  }
}
