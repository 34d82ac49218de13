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
  // The host sets helpers.outputFull to false at the start of each run; write() answers true once the
  // run's output is full, and from then on a log costs nothing (no formatting, no call out of the guest).
  const helpers = { outputFull: false };
  // Slicing before the host call keeps one huge log line from being copied out of the guest.
  const make = (level) => (...args) => {
    if (helpers.outputFull) return;
    let text = args.map(format).join(" ");
    if (text.length > limit) text = text.slice(0, limit + 1);
    if (write(level, text) === true) helpers.outputFull = true;
  };
  globalThis.console = {
    log: make("log"), info: make("info"), warn: make("warn"), error: make("error"), debug: make("debug"),
  };

  // Tagged so that undefined, bigint and functions survive the trip as JSON.
  helpers.encode = (v) => {
    if (typeof v === "function") return stringify({ v: describeFunction(v) });
    if (typeof v === "bigint") return stringify({ big: toText(v) });
    if (typeof v === "symbol") return stringify({ v: toText(v) });
    try {
      return stringify({ v });
    } catch (e) {
      return stringify({ v: toText(v) });
    }
  };
  helpers.decode = (text) => parse(text);
  return helpers;
})()`;
}
