/**
 * Media values in a prompt. The text of a message cannot hold an image, so each media value in the
 * input values (a `t.image()` field, an element of `z.array(t.image())`, or one nested in an object)
 * is replaced in the text by a placeholder naming it ("[image 1 below]"), and the value itself is
 * attached to the same message, in that order, for the provider to send as its own content part.
 * A line under the values says which attachment is which field, so the model can tell them apart.
 */
import { MediaValue, type MediaKind } from "../media/media.js";
import type { MediaAttachment } from "./formats.js";

const NOUN: Record<MediaKind, string> = { image: "image", audio: "audio", document: "document" };

/** The placeholder the text holds for the `n`-th value of `kind` (1-based). */
export function mediaPlaceholder(kind: MediaKind, n: number): string {
  return `[${NOUN[kind]} ${n} below]`;
}

/** Whether `value` holds a media value anywhere inside (plain objects and arrays are looked into). */
export function holdsMedia(value: unknown, seen: Set<object> = new Set()): boolean {
  if (value instanceof MediaValue) return true;
  if (typeof value !== "object" || value === null || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) return value.some((v) => holdsMedia(v, seen));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value).some((v) => holdsMedia(v, seen));
}

/**
 * The values with each media value replaced by its placeholder, and the media in the order of the
 * placeholders (numbered per kind: image 1, image 2, audio 1). Values without media come back as
 * they are (the same object), with no attachments.
 */
export function extractMedia(values: Record<string, unknown>): { values: Record<string, unknown>; media: MediaAttachment[] } {
  if (!holdsMedia(values)) return { values, media: [] };
  const media: MediaAttachment[] = [];
  const counts: Record<MediaKind, number> = { image: 0, audio: 0, document: 0 };
  const walk = (value: unknown, name: string): unknown => {
    if (value instanceof MediaValue) {
      media.push({ name, value });
      return mediaPlaceholder(value.kind, ++counts[value.kind]);
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${name}[${i}]`));
    if (typeof value !== "object" || value === null) return value;
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) Object.defineProperty(out, key, { value: walk(v, `${name}.${key}`), enumerable: true, writable: true, configurable: true });
    return out;
  };
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(values)) Object.defineProperty(out, key, { value: walk(v, key), enumerable: true, writable: true, configurable: true });
  return { values: out, media };
}

/** The line telling the model which attachment is which field, e.g. "Attached below, in this order: image 1 (photo), audio 1 (question)." */
export function mediaNote(media: readonly MediaAttachment[]): string {
  const counts: Record<MediaKind, number> = { image: 0, audio: 0, document: 0 };
  const items = media.map(({ name, value }) => `${NOUN[value.kind]} ${++counts[value.kind]} (${name})`);
  return `Attached below, in this order: ${items.join(", ")}.`;
}
