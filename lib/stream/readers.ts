/**
 * The streaming reply readers (`json-reply.ts` with its `json-reader.ts`, and `toon-reply.ts`) load
 * when a stream opens, not at `import "typelm"`: only `stream()` reads a reply while it arrives.
 * `openStream` awaits `loadReplyReaders()` before its run starts (a stream's body is async anyway),
 * so the predictors' taps, which must be made synchronously, find them loaded.
 */
import type { JsonReplyReader } from "./json-reply.js";
import type { ToonReplyReader } from "./toon-reply.js";

/** The reader classes, once loaded. */
export interface ReplyReaders {
  JsonReplyReader: typeof JsonReplyReader;
  ToonReplyReader: typeof ToonReplyReader;
}

let loaded: ReplyReaders | undefined;
let loading: Promise<ReplyReaders> | undefined;

/** Loads the readers (once); resolves with them. */
export function loadReplyReaders(): Promise<ReplyReaders> {
  loading ??= Promise.all([import("./json-reply.js"), import("./toon-reply.js")]).then(([json, toon]) => {
    loaded = { JsonReplyReader: json.JsonReplyReader, ToonReplyReader: toon.ToonReplyReader };
    return loaded;
  });
  return loading;
}

/** The readers if `loadReplyReaders` has finished, else undefined. */
export function replyReaders(): ReplyReaders | undefined {
  return loaded;
}
