// The model calls a row keeps (`lab_rows.calls_json`), read back with their long texts from
// `lab_texts`. Shared by both engines of the lab store and the run viewer (which reads over its own
// connection).
//
// The form written (an array, one object per call; short keys, defaults left out):
//   { m: "provider/model" (left out when the call before it in the row had the same),
//     q: messages, each "<role letter>:<content>" or "<role letter>#<hash of the content in lab_texts>"
//        (role letters s, u, a: system, user, assistant),
//     r: the reply (inline), i, o: input and output tokens, c: cost (left out when unknown),
//     t: latency in ms, k: 1 when answered from the cache (left out otherwise),
//     f: ms to the first text chunk of a streamed call (left out otherwise),
//     e: by message index, what a message carries beside its text (media parts), each media value as its
//        reference (media/refs.ts; a data URL in a text is one too): left out when none }
// Texts a later row may send again (system prompts, demo turns: every message but the call's last
// user message, when longer than 128 characters) are stored once by hash; the last user message
// and the reply are the example's own and stay in the row, as do short texts.
// Rows written before this form (objects with `provider`, `model`, `messages` of { role, content }
// or { role, text: hash }, `reply` or `replyHash`, ...) read back as they were written.
import type { Database } from "better-sqlite3";
import { redactString } from "../instrument/redact.js";
import { nodeCrypto } from "../load-sync.js";
import type { ModelCall } from "../lm/usage-scope.js";
import { messageExtras, textWithMediaRefs, type KeepMedia } from "./media/refs.js";

/** A call as `calls_json` kept it before the compact form: long texts by their hash in lab_texts. */
export interface StoredCall {
  provider: string; model: string; messages: { role: ModelCall["messages"][number]["role"]; content?: string; text?: string }[];
  reply?: string; replyHash?: string; inputTokens: number; outputTokens: number; cost: number | null; latencyMs: number; cached: boolean;
}

/** A call as `calls_json` keeps it now (see the top of this file). */
export interface CompactCall {
  m?: string; p?: string; q: string[]; r: string; i: number; o: number; c?: number; t: number; k?: 1; f?: number;
  /** Reasoning, cache-read and cache-write tokens, each only when not 0. */
  x?: number; h?: number; w?: number;
  e?: Record<number, Record<string, unknown>>;
}

type Role = ModelCall["messages"][number]["role"];
const LETTER: Record<Role, string> = { system: "s", user: "u", assistant: "a" };
const ROLE: Record<string, Role> = { s: "system", u: "user", a: "assistant" };

/** Texts up to this many characters are kept in the call's row: shorter than their hash's row would be. */
export const INLINE_TEXT = 128;

/** Text hashes computed lately: a system prompt sent with every call is hashed once. */
const textHashes = new Map<string, string>();

/** The key of a text in lab_texts: the first 128 bits of its sha256, hex. */
export function textHash(text: string): string {
  let hash = textHashes.get(text);
  if (hash === undefined) {
    hash = nodeCrypto().createHash("sha256").update(text).digest("hex").slice(0, 32);
    if (textHashes.size >= 512) textHashes.clear();
    textHashes.set(text, hash);
  }
  return hash;
}

/**
 * `calls` as `calls_json` keeps them, every text with registered secrets masked. `keep(hash, text)`
 * is called for each text stored by its hash (the engine writes it to lab_texts unless it has it).
 */
export function encodeCalls(calls: readonly ModelCall[], keep: (hash: string, text: string) => void, keepMedia: KeepMedia = () => undefined): string {
  let previous: string | undefined;
  const out: CompactCall[] = [];
  for (const call of calls) {
    let lastUser = -1;
    for (let i = call.messages.length - 1; i >= 0; i--) {
      if (call.messages[i]!.role === "user") {
        lastUser = i;
        break;
      }
    }
    const q = call.messages.map((m, i) => {
      const clean = redactString(typeof m.content === "string" ? textWithMediaRefs(m.content, keepMedia) : "");
      const letter = LETTER[m.role] ?? "u";
      // A text holding a NUL character stays in the row's JSON (escaped there): PostgreSQL's lab_texts cannot store it.
      if (i === lastUser || clean.length <= INLINE_TEXT || clean.includes("\u0000")) return `${letter}:${clean}`;
      const hash = textHash(clean);
      keep(hash, clean);
      return `${letter}#${hash}`;
    });
    // Built by assignment, keys always in one order: objects spread together conditionally made this
    // (and JSON.stringify of them) several times slower.
    const compact = {} as CompactCall;
    // A provider whose name holds a slash keeps it apart (p), so "m" splits at its first slash.
    const apart = call.provider.includes("/");
    const model = apart ? call.model : `${call.provider}/${call.model}`;
    if (apart) compact.p = call.provider;
    if (apart || model !== previous) compact.m = model;
    compact.q = q;
    compact.r = redactString(textWithMediaRefs(call.reply, keepMedia));
    compact.i = call.inputTokens;
    compact.o = call.outputTokens;
    if (call.cost !== null && Number.isFinite(call.cost)) compact.c = call.cost;
    compact.t = call.latencyMs;
    if (call.cached) compact.k = 1;
    if (call.firstTokenMs !== undefined && Number.isFinite(call.firstTokenMs)) compact.f = call.firstTokenMs;
    if (call.reasoningTokens) compact.x = call.reasoningTokens;
    if (call.cacheReadTokens) compact.h = call.cacheReadTokens;
    if (call.cacheWriteTokens) compact.w = call.cacheWriteTokens;
    const extras = messageExtras(call.messages, keepMedia);
    if (extras !== undefined) compact.e = extras;
    previous = apart ? undefined : model;
    out.push(compact);
  }
  return JSON.stringify(out);
}

/** The calls of a row's `calls_json`, their long texts taken from `textOf` (a hash lab_texts lacks reads as ""). */
export function decodeCalls(json: string, textOf: (hash: string) => string | undefined): ModelCall[] {
  const read = (hash: string | undefined) => (hash === undefined ? "" : textOf(hash) ?? "");
  let model: [string, string] = ["", ""];
  return parse<(CompactCall | StoredCall)[]>(json).map((c): ModelCall => {
    if (!("q" in c)) {
      return {
        provider: c.provider, model: c.model, messages: c.messages.map((m) => ({ role: m.role, content: m.content ?? read(m.text) })),
        reply: c.reply ?? read(c.replyHash), inputTokens: c.inputTokens, outputTokens: c.outputTokens, cost: c.cost, latencyMs: c.latencyMs, cached: c.cached,
      };
    }
    if (c.p !== undefined) model = [c.p, c.m ?? ""];
    else if (c.m !== undefined) {
      const slash = c.m.indexOf("/");
      model = [c.m.slice(0, slash), c.m.slice(slash + 1)];
    }
    return {
      provider: model[0], model: model[1],
      messages: c.q.map((m, i) => ({ role: ROLE[m[0]!] ?? "user", content: m[1] === "#" ? read(m.slice(2)) : m.slice(2), ...c.e?.[i] })),
      reply: c.r, inputTokens: c.i, outputTokens: c.o, cost: c.c ?? null, latencyMs: c.t, cached: c.k === 1,
      ...(c.f === undefined ? {} : { firstTokenMs: c.f }),
      ...(c.x === undefined ? {} : { reasoningTokens: c.x }),
      ...(c.h === undefined ? {} : { cacheReadTokens: c.h }),
      ...(c.w === undefined ? {} : { cacheWriteTokens: c.w }),
    };
  });
}

/** The calls of a row's `calls_json`, their long texts read back from lab_texts (a SQLite file). */
export function storedCalls(db: Database, json: string): ModelCall[] {
  const textOf = db.prepare<[string], { text: string }>("SELECT text FROM lab_texts WHERE hash = ?");
  return decodeCalls(json, (hash) => textOf.get(hash)?.text);
}

function parse<T>(text: string): T {
  return JSON.parse(text) as T;
}
