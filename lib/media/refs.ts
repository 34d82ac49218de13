/**
 * Media values in saved JSON: a value is written as a reference `{ "$media": kind, mediaType, size,
 * sha256 }` (never its bytes), and read back by asking a resolver for the bytes of that sha256,
 * which are checked against the hash. Where the bytes live is the saver's choice: the registry keeps
 * them in a folder beside its file (see store/registry-media.ts), an optimization run resolves them
 * from the examples it is given again on resume.
 */
import { ValidationError } from "../errors.js";
import { nodeCrypto } from "../load-sync.js";
import { MEDIA_CLASSES, MediaValue, type MediaKind, type MediaSource } from "./media.js";

/** The JSON form of a media value inside saved state. */
export interface MediaRef {
  $media: MediaKind;
  mediaType: string;
  /** Bytes in the value (0 for a URL value). */
  size: number;
  /** sha256 of the bytes, hex (absent for a URL value). */
  sha256?: string;
  /** The address of a URL value. */
  url?: string;
}

/** Whether `value` is a media reference written by `mediaToRefs`. */
export function isMediaRef(value: unknown): value is MediaRef {
  return value !== null && typeof value === "object" && !Array.isArray(value) && typeof (value as MediaRef).$media === "string" &&
    Object.hasOwn(MEDIA_CLASSES, (value as MediaRef).$media);
}

/**
 * A JSON-ready copy of `value` with every media value replaced by its reference; `seen` (when given)
 * receives each value with bytes, by sha256, so the caller can keep the bytes once.
 */
export function mediaToRefs(value: unknown, seen?: Map<string, MediaValue>): unknown {
  if (value instanceof MediaValue) {
    if (value.bytes === undefined) return { $media: value.kind, mediaType: value.mediaType, size: 0, url: value.url } satisfies MediaRef;
    seen?.set(value.sha256, value);
    return { $media: value.kind, mediaType: value.mediaType, size: value.size, sha256: value.sha256 } satisfies MediaRef;
  }
  if (Array.isArray(value)) return value.map((v) => mediaToRefs(v, seen));
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON !== "function") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mediaToRefs(v, seen)]));
  }
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as unknown);
}

/** The sha256 of `bytes`, hex. */
function sha256(bytes: Uint8Array): string {
  return nodeCrypto().createHash("sha256").update(bytes).digest("hex");
}

/**
 * `value` with every media reference turned back into a media value of its kind: `resolve` gives the
 * bytes of a sha256 (or undefined when it has none), checked against the hash. A reference that
 * cannot be resolved, or bytes that do not match, is a `ValidationError` saying which.
 */
export function mediaFromRefs(value: unknown, resolve: (sha256: string) => Uint8Array | undefined, where: string): unknown {
  if (isMediaRef(value)) {
    const Kind = MEDIA_CLASSES[value.$media] as typeof MediaValue & (new (source: MediaSource) => MediaValue);
    if (value.sha256 === undefined) return Kind.fromUrl(String(value.url), value.mediaType);
    if (!/^[0-9a-f]{64}$/.test(value.sha256)) throw new ValidationError(`${where}: a saved ${value.$media} has no valid sha256 (${JSON.stringify(value.sha256)})`, { field: where });
    const bytes = resolve(value.sha256);
    if (bytes === undefined) {
      throw new ValidationError(`${where}: the ${value.$media} with sha256 ${value.sha256} (${value.mediaType}, ${value.size} bytes) is not found; its bytes were not kept with the saved state`, { field: where });
    }
    if (sha256(bytes) !== value.sha256) throw new ValidationError(`${where}: the bytes found for the ${value.$media} ${value.sha256} have another sha256; the saved copy is damaged`, { field: where });
    return Kind.fromBytes(bytes, value.mediaType);
  }
  if (Array.isArray(value)) return value.map((v) => mediaFromRefs(v, resolve, where));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mediaFromRefs(v, resolve, where)]));
  }
  return value;
}

/** Every media value (with bytes) in `values`, at any depth, by sha256. */
export function mediaBySha(values: readonly unknown[]): Map<string, MediaValue> {
  const found = new Map<string, MediaValue>();
  const walk = (v: unknown): void => {
    if (v instanceof MediaValue) {
      if (v.bytes !== undefined) found.set(v.sha256, v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk);
  };
  values.forEach(walk);
  return found;
}

/**
 * The JSON form of `value` (as `JSON.parse(JSON.stringify(value))` gives it) except that media values
 * are kept as they are, so a metric or a demo given the result still holds the picture.
 */
export function jsonKeepingMedia(value: unknown): unknown {
  if (value instanceof MediaValue) return value;
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : jsonKeepingMedia(v)));
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON !== "function") {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== "function").map(([k, v]) => [k, jsonKeepingMedia(v)]));
  }
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}
