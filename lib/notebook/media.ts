/**
 * Media values in a notebook display: an `Image` field of a prediction (or a list of them) is shown
 * inline, as an <img> whose source is a `data:` URL of its bytes (the notebook file keeps it, so an
 * image over `INLINE_IMAGE_BYTES` is described instead); audio, documents, a URL value and a stored
 * reference (`{"$media": sha256, ...}`) are one line each: kind, media type, size and hash.
 */
import { MediaValue } from "../media/media.js";
import { supportedTypes } from "../media/sniff.js";
import { isMediaRef } from "../store/media/ref-read.js";
import { escapeHtml } from "./html.js";

/** Images larger than this many bytes are described in a line rather than kept in the notebook. */
export const INLINE_IMAGE_BYTES = 1_000_000;

function line(kind: string, mediaType: string, size: number, hash: string): string {
  return `${kind} · ${mediaType} · ${size.toLocaleString("en-US")} bytes · sha256 ${hash.slice(0, 16)}`;
}

/** One media value (or reference) as a line of text; undefined when `value` is neither. */
export function mediaLine(value: unknown): string | undefined {
  if (value instanceof MediaValue) return value.bytes === undefined ? `${value.kind} · ${value.mediaType} · ${value.url}` : line(value.kind, value.mediaType, value.size, value.sha256);
  if (isMediaRef(value)) return line(value.kind, value.mediaType, value.size, value.$media);
  return undefined;
}

/** Whether `value` is a media value or reference, or a non-empty list of them only. */
export function isMediaCell(value: unknown): boolean {
  const one = (v: unknown) => mediaLine(v) !== undefined;
  return one(value) || (Array.isArray(value) && value.length > 0 && value.every(one));
}

function itemHtml(value: unknown): string {
  if (value instanceof MediaValue && value.kind === "image" && value.bytes !== undefined && value.size <= INLINE_IMAGE_BYTES
    && supportedTypes("image").includes(value.mediaType)) {
    const about = mediaLine(value)!;
    return `<figure style="margin:2px 0"><img src="${escapeHtml(`data:${value.mediaType};base64,${value.base64}`)}" alt="${escapeHtml(about)}" style="max-width:320px;max-height:320px;border:1px solid #ddd">` +
      `<figcaption style="font:11px sans-serif;color:#666">${escapeHtml(about)}</figcaption></figure>`;
  }
  return `<div style="font:12px sans-serif">${escapeHtml(mediaLine(value) ?? "")}</div>`;
}

/** A media cell (see `isMediaCell`) as HTML: images inline, everything else as its line. */
export function mediaHtml(value: unknown): string {
  return (Array.isArray(value) ? value : [value]).map(itemHtml).join("");
}

/** A media cell as plain text: its line, or one line per item. */
export function mediaText(value: unknown): string {
  return (Array.isArray(value) ? value : [value]).map((v) => mediaLine(v)).join("; ");
}
