/**
 * Media in the lab store: each media value a row or a recorded model call holds is kept once, by the
 * sha256 of its bytes, in the `media` table (sha256, media_type, kind, size, bytes), and the row or
 * call keeps a small reference in its place, `{"$media": "<sha256>", "kind": "image", "mediaType":
 * "image/png", "size": 1234}`, never the bytes or their base64 text. Rows read back with the
 * reference; `lab.media(sha256)` gives the `Image`, `Audio` or `Document` again. In a recorded call,
 * beside `Image`/`Audio`/`Document` values, every base64 `data:` URL (in a message's text too) and
 * every base64 text whose bytes are a known media format (a provider part's `data`) is replaced the
 * same way, so no wire format's media reaches the store as text.
 */
import { MEDIA_CLASSES, MediaValue, type MediaKind, type MediaSource } from "../../media/media.js";
import { sniffMediaType } from "../../media/sniff.js";
import { nodeCrypto } from "../../load-sync.js";

/** What a row or a recorded call keeps in place of a media value. */
export interface MediaRef {
  /** The sha256 of the bytes (hex): the key of the value in the `media` table. */
  $media: string;
  kind: MediaKind;
  mediaType: string;
  /** Bytes. */
  size: number;
}

/** One media value as the `media` table keeps it. */
export interface MediaBlob {
  sha256: string;
  kind: MediaKind;
  mediaType: string;
  bytes: Uint8Array;
}

/** Called once per media value met while references are made (the engine stores it unless it has it). */
export type KeepMedia = (blob: MediaBlob) => void;

/** A base64 `data:` URL (its media type, then its text). */
const DATA_URL = /data:([\w.+-]+\/[\w.+-]+)?((?:;[\w.+-]+=[^;,"\s]*)*);base64,([A-Za-z0-9+/]+={0,2})/g;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** A bare base64 text shorter than this is never taken for media (a word, an id). */
const MIN_BASE64 = 64;

/** The kind a media type is stored as: image/*, audio/*, anything else a document. */
export function kindOf(mediaType: string): MediaKind {
  return mediaType.startsWith("image/") ? "image" : mediaType.startsWith("audio/") ? "audio" : "document";
}

function refOf(blob: MediaBlob): MediaRef {
  return { $media: blob.sha256, kind: blob.kind, mediaType: blob.mediaType, size: blob.bytes.length };
}

function blobOf(bytes: Uint8Array, mediaType: string, kind?: MediaKind): MediaBlob {
  const sha256 = nodeCrypto().createHash("sha256").update(bytes).digest("hex");
  return { sha256, kind: kind ?? kindOf(mediaType), mediaType, bytes };
}

/** A media value's reference (its bytes given to `keep`); a URL value keeps its JSON form (kind, type, address). */
function valueRef(value: MediaValue, keep: KeepMedia): unknown {
  if (value.bytes === undefined) return value.toJSON();
  const blob: MediaBlob = { sha256: value.sha256, kind: value.kind, mediaType: value.mediaType, bytes: value.bytes };
  keep(blob);
  return refOf(blob);
}

/** `text` with each base64 `data:` URL in it replaced by its reference's JSON text. */
export function textWithMediaRefs(text: string, keep: KeepMedia): string {
  if (!text.includes(";base64,")) return text;
  return text.replace(DATA_URL, (_all, declared: string | undefined, _params, base64: string) => {
    const bytes = Buffer.from(base64, "base64");
    const blob = blobOf(bytes, sniffMediaType(bytes) ?? declared ?? "application/octet-stream");
    keep(blob);
    return JSON.stringify(refOf(blob));
  });
}

/** A bare base64 text whose bytes are a known media format, as a reference; undefined otherwise. */
function base64Ref(text: string, keep: KeepMedia): MediaRef | undefined {
  if (text.length < MIN_BASE64 || text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  const type = sniffMediaType(Buffer.from(text.slice(0, 1400), "base64"));
  if (type === undefined) return undefined;
  const blob = blobOf(Buffer.from(text, "base64"), type);
  keep(blob);
  return refOf(blob);
}

/**
 * `value` with every `Image`, `Audio` and `Document` in it (at any depth of arrays and plain objects)
 * replaced by its reference, each given to `keep`. With `inCall`, base64 `data:` URLs and base64
 * media texts are replaced too (a recorded call's parts). Nothing is changed in place: objects on the
 * way to a replaced value are copied, everything else is the same object (no copy when there is no media).
 */
export function withMediaRefs(value: unknown, keep: KeepMedia, inCall = false, seen: Set<object> = new Set()): unknown {
  if (typeof value === "string") {
    if (!inCall) return value;
    return base64Ref(value, keep) ?? textWithMediaRefs(value, keep);
  }
  if (value === null || typeof value !== "object") return value;
  if (value instanceof MediaValue) return valueRef(value, keep);
  if (seen.has(value)) return value;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  seen.add(value);
  let copy: unknown[] | Record<string, unknown> | undefined;
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  for (const [key, item] of entries) {
    const changed = withMediaRefs(item, keep, inCall, seen);
    if (changed === item) continue;
    copy ??= Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
    Object.defineProperty(copy, key, { value: changed, enumerable: true, writable: true, configurable: true });
  }
  seen.delete(value);
  return copy ?? value;
}

/** The value a stored media row makes: an `Image`, `Audio` or `Document` of its bytes. */
export function mediaValueFrom(kind: string, bytes: Uint8Array, mediaType: string): MediaValue {
  const Kind: new (source: MediaSource) => MediaValue = MEDIA_CLASSES[kind as MediaKind] ?? MEDIA_CLASSES.document;
  return new Kind({ bytes, declaredType: mediaType });
}

/**
 * What the messages of a recorded call carry beside their role and text (media parts, a content
 * that is not text), by message index, with every media value, data URL and base64 media text as its
 * reference; undefined when they carry nothing else.
 */
export function messageExtras(messages: readonly object[], keep: KeepMedia): Record<number, Record<string, unknown>> | undefined {
  let out: Record<number, Record<string, unknown>> | undefined;
  messages.forEach((message, i) => {
    const rest: Record<string, unknown> = {};
    let any = false;
    for (const [key, value] of Object.entries(message)) {
      if (key === "role" || (key === "content" && typeof value === "string") || value === undefined) continue;
      rest[key] = withMediaRefs(value, keep, true);
      any = true;
    }
    if (any) (out ??= {})[i] = rest;
  });
  return out;
}
