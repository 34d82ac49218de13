/**
 * A message's media as each provider's own content parts: OpenAI `image_url`, `input_audio` and
 * `file` parts; Anthropic `image` and `document` blocks; Ollama's `images` list. The text comes
 * first (it names each value by a placeholder such as "[image 1 below]"), then the parts in the
 * placeholders' order. A value's base64 text is its own cached encoding, so building the request
 * again (a retry, a stream, a batch line) encodes nothing again. What a provider cannot take was
 * refused before the call (media-check.ts); these builders only translate.
 */
import type { MediaAttachment } from "../../prompt/formats.js";

/** A value's bytes as base64 with their media type: its own bytes, or the payload of a `data:` URL; undefined for an `http(s):` URL. */
export function inlineMedia(value: MediaAttachment["value"]): { mediaType: string; base64: string } | undefined {
  if (value.bytes !== undefined) return { mediaType: value.mediaType, base64: value.base64 };
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/is.exec(value.url ?? "");
  if (match === null) return undefined;
  return { mediaType: match[1] || value.mediaType, base64: match[2]!.replace(/\s+/g, "") };
}

/** A file name for a document part, from its field name ("pages[1]" → "pages-1.pdf"). */
function fileName(name: string): string {
  return `${name.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "document"}.pdf`;
}

/** OpenAI chat completion content: a text part, then an `image_url`, `input_audio` or `file` part per value. */
export function openaiContent(text: string, media: readonly MediaAttachment[]): Array<Record<string, unknown>> {
  const parts: Array<Record<string, unknown>> = [{ type: "text", text }];
  for (const { name, value } of media) {
    const inline = inlineMedia(value);
    if (value.kind === "image") {
      parts.push({ type: "image_url", image_url: { url: value.bytes === undefined ? value.url : `data:${inline!.mediaType};base64,${inline!.base64}` } });
    } else if (value.kind === "audio") {
      parts.push({ type: "input_audio", input_audio: { data: inline!.base64, format: inline!.mediaType === "audio/wav" ? "wav" : "mp3" } });
    } else {
      parts.push({ type: "file", file: { filename: fileName(name), file_data: `data:application/pdf;base64,${inline!.base64}` } });
    }
  }
  return parts;
}

/**
 * Anthropic message content: a text block, then an `image` or `document` block per value (base64,
 * or the `url` source for an `https:` address). `cacheControl` marks the last block (prompt caching).
 */
export function anthropicContent(text: string, media: readonly MediaAttachment[], cacheControl: boolean): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [{ type: "text", text }];
  for (const { value } of media) {
    const inline = inlineMedia(value);
    const source = inline === undefined ? { type: "url", url: value.url } : { type: "base64", media_type: inline.mediaType, data: inline.base64 };
    blocks.push({ type: value.kind === "image" ? "image" : "document", source });
  }
  if (cacheControl) blocks[blocks.length - 1] = { ...blocks.at(-1), cache_control: { type: "ephemeral" } };
  return blocks;
}

/** Ollama's `images` of a message: each image's base64 text. */
export function ollamaImages(media: readonly MediaAttachment[]): string[] {
  return media.map(({ value }) => inlineMedia(value)!.base64);
}
