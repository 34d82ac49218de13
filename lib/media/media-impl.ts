/**
 * The work behind the media values of media.ts: the `from*` factories' checks, the base64 text of a
 * value, and the media fields' schemas (`mediaField`) with the checks they run on a value
 * (`mediaProblem`, `mediaExpected`). The bundle loads this module at the first media value or field
 * made (scripts/deferred-modules.mjs); the classes stay in media.ts.
 */
import { z } from "zod";
import { ValidationError } from "../errors.js";
import { builtin } from "../load-sync.js";
import { MEDIA_CLASSES, MediaValue, type MediaKind, type MediaSource } from "./media.js";
import { supportedTypes } from "./sniff.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const WORDS: Record<MediaKind, string> = { image: "image", audio: "audio clip", document: "document" };
const CLASS_NAMES: Record<MediaKind, string> = { image: "Image", audio: "Audio", document: "Document" };

/** `Kind.fromFile(path)`: the file's bytes, or a ValidationError naming the file. */
export async function mediaFromFile<T extends MediaValue>(Kind: new (source: MediaSource) => T, path: string): Promise<T> {
  try {
    return new Kind({ bytes: await builtin("node:fs/promises").readFile(path) });
  } catch (error) {
    throw new ValidationError(`Cannot read the media file ${path}: ${error instanceof Error ? error.message : String(error)}`, { field: path, cause: error });
  }
}

/** `Kind.fromUrl(url, mediaType)`: an `https:`, `http:` or `data:` address, else a ValidationError. */
export function mediaFromUrl<T extends MediaValue>(Kind: new (source: MediaSource) => T, url: string, mediaType?: string): T {
  if (typeof url !== "string" || !/^(https?|data):/i.test(url)) {
    throw new ValidationError(`A media URL must start with https:, http: or data:; received ${JSON.stringify(url)}`, { field: "url" });
  }
  return new Kind({ url, declaredType: mediaType });
}

/** `Kind.fromBytes(bytes, mediaType)`: a Uint8Array held as given, else a ValidationError. */
export function mediaFromBytes<T extends MediaValue>(Kind: new (source: MediaSource) => T, bytes: Uint8Array, mediaType?: string): T {
  if (!(bytes instanceof Uint8Array)) {
    throw new ValidationError(`fromBytes expects a Uint8Array (or Buffer); received ${typeof bytes}`, { field: "bytes" });
  }
  return new Kind({ bytes, declaredType: mediaType });
}

/** `Kind.fromBase64(text, mediaType)`: base64 text (whitespace and a `data:…;base64,` prefix allowed), else a ValidationError. */
export function mediaFromBase64<T extends MediaValue>(Kind: new (source: MediaSource) => T, base64: string, mediaType?: string): T {
  const text = String(base64).replace(/^data:[^,]*;base64,/i, "").replace(/\s+/g, "");
  if (text.length % 4 !== 0 || !BASE64.test(text)) {
    throw new ValidationError(`fromBase64 expects base64 text (A–Z, a–z, 0–9, +, / and = padding); received ${JSON.stringify(String(base64).slice(0, 40))}`, { field: "base64" });
  }
  return new Kind({ bytes: Buffer.from(text, "base64"), base64: text, declaredType: mediaType });
}

/** The base64 text of a value's bytes; a URL value has none (a ValidationError). */
export function mediaBase64(value: MediaValue): string {
  const bytes = value.bytes;
  if (bytes === undefined) throw new ValidationError(`This ${WORDS[value.kind]} is a URL (${value.url}); it has no bytes to encode`, { field: "url" });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** What a `kind` field takes, for "expected …": e.g. `an image (PNG, JPEG, GIF or WEBP)`. */
export function mediaExpected(kind: MediaKind): string {
  const formats = supportedTypes(kind).map((t) => (t === "audio/mpeg" ? "MP3" : t.split("/")[1]!.toUpperCase()));
  const list = formats.length === 1 ? formats[0] : `${formats.slice(0, -1).join(", ")} or ${formats.at(-1)}`;
  return `${kind === "image" ? "an" : "a"} ${WORDS[kind]} (${list})`;
}

/**
 * What is wrong with `value` as a `kind` field's value, or undefined when it fits: not a value of
 * that kind, or bytes in no supported format of it. A URL value is not checked here (not fetched).
 */
export function mediaProblem(kind: MediaKind, value: unknown): string | undefined {
  if (!(value instanceof MEDIA_CLASSES[kind])) {
    const was = value instanceof MediaValue ? `it is ${value.kind === "image" ? "an" : "a"} ${CLASS_NAMES[value.kind]}` : `it is not ${kind === "image" ? "an" : "a"} ${CLASS_NAMES[kind]}`;
    return `${was}; make one with ${CLASS_NAMES[kind]}.fromFile, fromBytes, fromBase64 or fromUrl`;
  }
  if (value.bytes === undefined) return undefined;
  if (value.sniffedType === undefined) return `its ${value.size} bytes are in no known format`;
  if (!supportedTypes(kind).includes(value.sniffedType)) return `its bytes are ${value.sniffedType}`;
  return undefined;
}

/** The schema of a `t.image()`, `t.audio()` or `t.document()` field: a value of `kind` in a supported format, marked with its kind. */
export function mediaField<T>(kind: MediaKind): z.ZodCustom<T, T> {
  const schema = z.custom<T>(() => true).superRefine((value, ctx) => {
    const problem = mediaProblem(kind, value);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem, expected: mediaExpected(kind) } as Parameters<typeof ctx.addIssue>[0]);
  });
  (schema._zod.def as { typelmMedia?: MediaKind }).typelmMedia = kind;
  return schema as unknown as z.ZodCustom<T, T>;
}
