/**
 * Guest-side JavaScript evaluated once in every fresh QuickJS context, before any model code.
 *
 * It installs `console` on top of one host function and returns a small helper object that the host
 * keeps a handle to. Values cross the boundary as JSON text: the host never walks guest objects
 * itself, so getters, proxies and cycles only ever run (and loop) inside the guest, under its
 * time limit. The builtins are captured here, before model code can replace `JSON` or `String`.
 */

/** Name of the host write function; the prelude captures it and deletes the global. */
export const WRITE_FUNCTION = "__typelm_write";

export function preludeSource(maxOutputChars: number): string {
  return `(() => {
  "use strict";
  const write = globalThis.${WRITE_FUNCTION};
  delete globalThis.${WRITE_FUNCTION};
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const toText = String;
  const limit = ${Math.max(0, Math.floor(maxOutputChars))};

  const describeFunction = (f) => "[Function" + (f.name ? ": " + f.name : "") + "]";
  const format = (v) => {
    if (typeof v === "string") return v;
    if (typeof v === "function") return describeFunction(v);
    if (v instanceof Error) return v.name + ": " + v.message;
    if (v !== null && typeof v === "object") {
      try {
        const text = stringify(v);
        if (text !== undefined) return text;
      } catch (_) {}
    }
    return toText(v);
  };
  // Slicing before the host call keeps one huge log line from being copied out of the guest.
  const make = (level) => (...args) => {
    let text = args.map(format).join(" ");
    if (text.length > limit) text = text.slice(0, limit + 1);
    write(level, text);
  };
  globalThis.console = {
    log: make("log"), info: make("info"), warn: make("warn"), error: make("error"), debug: make("debug"),
  };

  return {
    // Tagged so that undefined, bigint and functions survive the trip as JSON.
    encode(v) {
      if (typeof v === "function") return stringify({ v: describeFunction(v) });
      if (typeof v === "bigint") return stringify({ big: toText(v) });
      if (typeof v === "symbol") return stringify({ v: toText(v) });
      try {
        return stringify({ v });
      } catch (e) {
        return stringify({ v: toText(v) });
      }
    },
    decode(text) {
      return parse(text);
    },
  };
})()`;
}
