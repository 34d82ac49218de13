/**
 * Media values as optimizers and logs show them in text: a short label with the value's kind, type,
 * size and hash (`[image image/png 1.2 kB sha256:ab12cd34ef56…]`), never its bytes or base64. GEPA's
 * reflection prompt, MIPROv2's proposal prompts and any other text built from example values use
 * `withMediaLabels` so a picture enters such text as what it is, not as thousands of characters.
 * The bundle loads this module at its first call (scripts/deferred-modules.mjs).
 */
import { MediaValue } from "./media.js";

/** A size in bytes as text: `812 B`, `12.3 kB`, `4.1 MB` (1 kB = 1,000 bytes). */
function sizeText(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** `[image image/png 1.2 kB sha256:ab12cd34ef56…]`, or `[image https://…]` for a URL value. */
export function mediaLabel(value: MediaValue): string {
  if (value.bytes === undefined) return `[${value.kind} ${value.url}]`;
  return `[${value.kind} ${value.mediaType} ${sizeText(value.size)} sha256:${value.sha256.slice(0, 12)}…]`;
}

/**
 * A copy of `value` in which every media value (at any depth, in arrays and plain objects) is
 * replaced by its `mediaLabel`; other values are kept as they are. JSON text of the result holds
 * labels, not bytes.
 */
export function withMediaLabels(value: unknown): unknown {
  if (value instanceof MediaValue) return mediaLabel(value);
  if (Array.isArray(value)) return value.map(withMediaLabels);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withMediaLabels(v)]));
  }
  return value;
}

/** `JSON.stringify` of `value` with media values as their labels. */
export function jsonWithMediaLabels(value: unknown): string {
  return JSON.stringify(withMediaLabels(value));
}
