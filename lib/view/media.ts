// Media in the viewer. A stored value's reference (`{"$media": sha256, kind, mediaType, size}`, see
// lib/store/media/refs.ts) is shown as the thing itself: an image inline, an audio clip with the
// browser's player, a document as a download link, each loaded from `/media/<sha256>`. That route
// serves the stored bytes with their media type and `nosniff`: only the image and audio formats
// typelm reads are served inline (anything else, documents included, as an attachment of type
// `application/octet-stream` or PDF), each answer under a CSP that lets nothing run (`sandbox`).
import type { ServerResponse } from "node:http";
import { onFirstUse } from "../load-sync.js";
import { supportedTypes } from "../media/sniff.js";
import { isMediaRef, isSha256 } from "../store/media/ref-read.js";
import type { MediaRef } from "../store/media/refs.js";
import { html, Markup } from "./html.js";
import type { ViewSource } from "./data/source.js";

/** The media types served for the page to show (an <img>, an <audio>); any other is a download. */
const INLINE = onFirstUse(() => new Set<string>([...supportedTypes("image"), ...supportedTypes("audio")]));
const EXTENSION: Record<string, string> = { "application/pdf": "pdf" };

/** A size in bytes as people read it: 812 B, 14.2 kB, 3.1 MB. */
export function sizeText(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** A reference as markup: an <img>, an <audio> player or a download link, with its kind, type, size and hash beside it. */
export function mediaMarkup(ref: MediaRef): Markup {
  const src = `/media/${ref.$media}`;
  const about = `${ref.kind} · ${ref.mediaType} · ${sizeText(ref.size)} · sha256 ${ref.$media.slice(0, 12)}`;
  const caption = html`<span class="media-about muted">${about}</span>`;
  if (ref.kind === "image" && INLINE().has(ref.mediaType)) {
    return html`<span class="media" data-media="${ref.$media}" data-kind="image"><img src="${src}" alt="${about}" loading="lazy">${caption}</span>`;
  }
  if (ref.kind === "audio" && INLINE().has(ref.mediaType)) {
    return html`<span class="media" data-media="${ref.$media}" data-kind="audio"><audio controls preload="metadata"><source src="${src}" type="${ref.mediaType}"></audio>${caption}</span>`;
  }
  return html`<span class="media" data-media="${ref.$media}" data-kind="${ref.kind}"><a href="${src}" download="${fileName(ref.$media, ref.mediaType)}">download the ${ref.kind}</a> ${caption}</span>`;
}

function fileName(sha256: string, mediaType: string): string {
  return `${sha256.slice(0, 16)}.${EXTENSION[mediaType] ?? (INLINE().has(mediaType) ? mediaType.split("/")[1] : "bin")}`;
}

/** The JSON text of a reference inside a recorded message's text (where a data URL was). */
const REF_TEXT = /\{"\$media":"[0-9a-f]{64}","kind":"(?:image|audio|document)","mediaType":"[^"\\]{1,100}","size":\d{1,15}\}/g;

/** A recorded message's text: as text, each reference in it shown as its media. */
export function textWithMedia(text: string): Markup {
  if (!text.includes('{"$media":')) return html`${text}`;
  const out: (string | Markup)[] = [];
  let at = 0;
  for (const m of text.matchAll(REF_TEXT)) {
    const ref = JSON.parse(m[0]) as unknown;
    if (!isMediaRef(ref)) continue;
    out.push(text.slice(at, m.index), mediaMarkup(ref));
    at = m.index + m[0].length;
  }
  out.push(text.slice(at));
  return html`${out}`;
}

function answer(res: ServerResponse, status: number, headers: Record<string, string | number>, body: string | Uint8Array): void {
  res.writeHead(status, {
    "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
    "content-security-policy": "default-src 'none'; sandbox", ...headers,
  });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

/**
 * `/media/<sha256>`: the stored bytes with their media type (inline for the image and audio formats
 * typelm reads, an attachment otherwise); 400 for an address that is not a sha256, 404 for one the
 * store does not hold.
 */
export async function serveMedia(store: ViewSource, parts: string[], res: ServerResponse): Promise<void> {
  const text = (status: number, sentence: string) => answer(res, status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }, `${sentence}\n`);
  const hash = parts[1] ?? "";
  if (parts.length !== 2 || !isSha256(hash)) {
    text(400, `A media address is /media/<sha256>: 64 lower-case hexadecimal digits, as a row's {"$media": ...} reference gives; received ${JSON.stringify(`/${parts.join("/")}`.slice(0, 120))}`);
    return;
  }
  let blob: Awaited<ReturnType<ViewSource["media"]>>;
  try {
    blob = await store.media(hash);
  } catch (error) {
    text(500, error instanceof Error ? error.message : String(error));
    return;
  }
  if (blob === undefined) {
    text(404, `The store holds no media value with sha256 ${hash}`);
    return;
  }
  const inline = blob.kind !== "document" && INLINE().has(blob.mediaType);
  const type = inline || blob.mediaType === "application/pdf" ? blob.mediaType : "application/octet-stream";
  answer(res, 200, {
    "content-type": type, "content-length": blob.bytes.length, "cache-control": "private, max-age=3600",
    "content-disposition": inline ? "inline" : `attachment; filename="${fileName(hash, blob.mediaType)}"`,
  }, blob.bytes);
}
