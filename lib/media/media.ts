/**
 * The media values a signature's `t.image()`, `t.audio()` and `t.document()` fields take: `Image`,
 * `Audio` and `Document`. A value holds its bytes once (as given, not copied) and reads its media
 * type from them (see sniff.ts); its sha256 and its base64 text are computed at first use and kept,
 * so a value sent many times is hashed and encoded once per process. `toJSON` never writes the bytes.
 * A value made by `fromUrl` holds the address only (nothing is fetched here).
 */
import { ValidationError } from "../errors.js";
import { builtin, nodeCrypto } from "../load-sync.js";
import { SUPPORTED_TYPES, sniffMediaType } from "./sniff.js";

/** What a media value is: an image, an audio clip or a document. */
export type MediaKind = "image" | "audio" | "document";

/** What a media value is made from (see the `from*` factories). */
export interface MediaSource {
  bytes?: Uint8Array;
  url?: string;
  /** The type the caller declared; used only where the bytes say nothing (a URL, unknown bytes). */
  declaredType?: string;
  /** A base64 text of exactly `bytes`, when the value was made from one. */
  base64?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const WORDS: Record<MediaKind, string> = { image: "image", audio: "audio clip", document: "document" };

/** What every media value has; `Image`, `Audio` and `Document` differ only in their kind. */
export abstract class MediaValue {
  /** Which kind of value this is. */
  abstract readonly kind: MediaKind;
  /** The bytes (undefined for a value made by `fromUrl`). */
  readonly bytes: Uint8Array | undefined;
  /** The address of a value made by `fromUrl`. */
  readonly url: string | undefined;
  /** The media type read from the bytes; undefined when they match no supported format (or for a URL). */
  readonly sniffedType: string | undefined;
  #declaredType: string | undefined;
  #base64: string | undefined;
  #sha256: string | undefined;

  /** Use the factories (`fromFile`, `fromUrl`, `fromBytes`, `fromBase64`). */
  constructor(source: MediaSource) {
    this.bytes = source.bytes;
    this.url = source.url;
    this.#declaredType = source.declaredType;
    this.#base64 = source.base64;
    this.sniffedType = source.bytes === undefined ? undefined : sniffMediaType(source.bytes);
  }

  /** Reads a file's bytes; its type comes from the bytes, not from its name. */
  static async fromFile<T extends MediaValue>(this: new (source: MediaSource) => T, path: string): Promise<T> {
    try {
      return new this({ bytes: await builtin("node:fs/promises").readFile(path) });
    } catch (error) {
      throw new ValidationError(`Cannot read the media file ${path}: ${error instanceof Error ? error.message : String(error)}`, { field: path, cause: error });
    }
  }

  /** A value the provider fetches itself (an `https:` or `data:` address); nothing is fetched here. */
  static fromUrl<T extends MediaValue>(this: new (source: MediaSource) => T, url: string, mediaType?: string): T {
    if (typeof url !== "string" || !/^(https?|data):/i.test(url)) {
      throw new ValidationError(`A media URL must start with https:, http: or data:; received ${JSON.stringify(url)}`, { field: "url" });
    }
    return new this({ url, declaredType: mediaType });
  }

  /** Bytes held as given (not copied): do not change them afterwards. `mediaType` is used only if the bytes match no known format. */
  static fromBytes<T extends MediaValue>(this: new (source: MediaSource) => T, bytes: Uint8Array, mediaType?: string): T {
    if (!(bytes instanceof Uint8Array)) {
      throw new ValidationError(`fromBytes expects a Uint8Array (or Buffer); received ${typeof bytes}`, { field: "bytes" });
    }
    return new this({ bytes, declaredType: mediaType });
  }

  /** Bytes given as base64 text (whitespace and a `data:…;base64,` prefix allowed); the text is kept as the value's encoding. */
  static fromBase64<T extends MediaValue>(this: new (source: MediaSource) => T, base64: string, mediaType?: string): T {
    const text = String(base64).replace(/^data:[^,]*;base64,/i, "").replace(/\s+/g, "");
    if (text.length % 4 !== 0 || !BASE64.test(text)) {
      throw new ValidationError(`fromBase64 expects base64 text (A–Z, a–z, 0–9, +, / and = padding); received ${JSON.stringify(String(base64).slice(0, 40))}`, { field: "base64" });
    }
    return new this({ bytes: Buffer.from(text, "base64"), base64: text, declaredType: mediaType });
  }

  /** The media type: read from the bytes, else the declared one, else `application/octet-stream`. */
  get mediaType(): string {
    return this.sniffedType ?? this.#declaredType ?? "application/octet-stream";
  }

  /** The number of bytes (0 for a URL value). */
  get size(): number {
    return this.bytes?.length ?? 0;
  }

  /** The bytes as base64 text, encoded at first use and kept (a URL value has none: its address is sent). */
  get base64(): string {
    if (this.bytes === undefined) throw new ValidationError(`This ${WORDS[this.kind]} is a URL (${this.url}); it has no bytes to encode`, { field: "url" });
    return (this.#base64 ??= Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString("base64"));
  }

  /** The sha256 of the bytes (of the address for a URL value), hex, computed at first use and kept. */
  get sha256(): string {
    return (this.#sha256 ??= nodeCrypto().createHash("sha256").update(this.bytes ?? this.url ?? "").digest("hex"));
  }

  /** What a log or a record shows: kind, type, size and hash (or the address), never the bytes. */
  toJSON(): Record<string, unknown> {
    const base = { kind: this.kind, mediaType: this.mediaType };
    return this.bytes === undefined ? { ...base, url: this.url } : { ...base, bytes: this.size, sha256: this.sha256 };
  }
}

/** A picture for a `t.image()` field: PNG, JPEG, GIF or WebP. */
export class Image extends MediaValue {
  /** Always "image". */
  readonly kind = "image" as const;
}

/** A sound clip for a `t.audio()` field: WAV or MP3. */
export class Audio extends MediaValue {
  /** Always "audio". */
  readonly kind = "audio" as const;
}

/** A document for a `t.document()` field: PDF. */
export class Document extends MediaValue {
  /** Always "document". */
  readonly kind = "document" as const;
}

/** The class of each kind. */
export const MEDIA_CLASSES = { image: Image, audio: Audio, document: Document } as const;

const CLASS_NAMES: Record<MediaKind, string> = { image: "Image", audio: "Audio", document: "Document" };

/** What a `kind` field takes, for "expected …": e.g. `an image (PNG, JPEG, GIF or WEBP)`. */
export function mediaExpected(kind: MediaKind): string {
  const formats = SUPPORTED_TYPES[kind].map((t) => (t === "audio/mpeg" ? "MP3" : t.split("/")[1]!.toUpperCase()));
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
  if (!(SUPPORTED_TYPES[kind] as readonly string[]).includes(value.sniffedType)) return `its bytes are ${value.sniffedType}`;
  return undefined;
}
