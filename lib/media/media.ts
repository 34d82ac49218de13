/**
 * The media values a signature's `t.image()`, `t.audio()` and `t.document()` fields take: `Image`,
 * `Audio` and `Document`. A value holds its bytes once (as given, not copied) and reads its media
 * type from them (see sniff.ts); its sha256 and its base64 text are computed at first use and kept,
 * so a value sent many times is hashed and encoded once per process. `toJSON` never writes the bytes.
 * A value made by `fromUrl` holds the address only (nothing is fetched here).
 */
import { nodeCrypto } from "../load-sync.js";
import { mediaBase64, mediaFromBase64, mediaFromBytes, mediaFromFile, mediaFromUrl } from "./media-impl.js";
import { sniffMediaType } from "./sniff.js";

export { mediaExpected, mediaProblem } from "./media-impl.js";

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
  static fromFile<T extends MediaValue>(this: new (source: MediaSource) => T, path: string): Promise<T> {
    return mediaFromFile(this, path);
  }

  /** A value the provider fetches itself (an `https:` or `data:` address); nothing is fetched here. */
  static fromUrl<T extends MediaValue>(this: new (source: MediaSource) => T, url: string, mediaType?: string): T {
    return mediaFromUrl(this, url, mediaType);
  }

  /** Bytes held as given (not copied): do not change them afterwards. `mediaType` is used only if the bytes match no known format. */
  static fromBytes<T extends MediaValue>(this: new (source: MediaSource) => T, bytes: Uint8Array, mediaType?: string): T {
    return mediaFromBytes(this, bytes, mediaType);
  }

  /** Bytes given as base64 text (whitespace and a `data:…;base64,` prefix allowed); the text is kept as the value's encoding. */
  static fromBase64<T extends MediaValue>(this: new (source: MediaSource) => T, base64: string, mediaType?: string): T {
    return mediaFromBase64(this, base64, mediaType);
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
    return (this.#base64 ??= mediaBase64(this));
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
