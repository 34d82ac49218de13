/**
 * The media parts of a request the fake provider received, read from each wire format: OpenAI
 * `image_url` (a data URL or an address), `input_audio` and `file` parts; Anthropic `image` and
 * `document` blocks (base64 or `url` sources); Ollama's `images`. Each is recorded with its kind,
 * the media type the wire declared (for Ollama, read from the bytes), its size and the sha256 of its
 * bytes, so a test can assert what arrived without comparing base64 text.
 */
import { createHash } from "node:crypto";
import { sniffMediaType } from "../media/sniff.js";
import type { FakeWire } from "./fake-wire.js";

/** One media part as it arrived. */
export interface FakeMediaPart {
  /** Index of the message it came in (in the body's `messages`). */
  message: number;
  kind: "image" | "audio" | "document";
  /** The wire's own name for the part: `image_url`, `input_audio`, `file`, `image`, `document`, `images`. */
  part: string;
  /** The media type the wire declared (Ollama declares none: read from the bytes). */
  mediaType: string | undefined;
  /** Bytes received (undefined for an address). */
  bytes?: number;
  /** sha256 of the bytes, hex (undefined for an address). */
  sha256?: string;
  /** The address, for a part sent by URL. */
  url?: string;
}

function decoded(base64: string): { bytes: number; sha256: string; buffer: Buffer } {
  const buffer = Buffer.from(base64, "base64");
  return { bytes: buffer.length, sha256: createHash("sha256").update(buffer).digest("hex"), buffer };
}

/** A data URL's type and payload, or an address. */
function fromUrl(url: string): { mediaType: string | undefined; bytes?: number; sha256?: string; url?: string } {
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/is.exec(url);
  if (match === null) return { mediaType: undefined, url };
  const { bytes, sha256 } = decoded(match[2]!);
  return { mediaType: match[1] || undefined, bytes, sha256 };
}

function openaiPart(part: any, message: number): FakeMediaPart | undefined {
  if (part?.type === "image_url") return { message, kind: "image", part: "image_url", ...fromUrl(String(part.image_url?.url ?? "")) };
  if (part?.type === "input_audio") {
    const format = part.input_audio?.format;
    const { bytes, sha256 } = decoded(String(part.input_audio?.data ?? ""));
    return { message, kind: "audio", part: "input_audio", mediaType: format === "wav" ? "audio/wav" : format === "mp3" ? "audio/mpeg" : format, bytes, sha256 };
  }
  if (part?.type === "file") return { message, kind: "document", part: "file", ...fromUrl(String(part.file?.file_data ?? "")) };
  return undefined;
}

function anthropicPart(block: any, message: number): FakeMediaPart | undefined {
  if (block?.type !== "image" && block?.type !== "document") return undefined;
  const kind = block.type === "image" ? "image" : "document";
  const source = block.source ?? {};
  if (source.type === "url") return { message, kind, part: block.type, mediaType: undefined, url: String(source.url) };
  const { bytes, sha256 } = decoded(String(source.data ?? ""));
  return { message, kind, part: block.type, mediaType: source.media_type, bytes, sha256 };
}

/** Every media part of a chat request body in `wire`'s format, in message order. */
export function mediaOf(wire: FakeWire, body: any): FakeMediaPart[] {
  if (body === undefined || body === null || !Array.isArray(body.messages)) return [];
  const out: FakeMediaPart[] = [];
  body.messages.forEach((m: any, i: number) => {
    if (wire === "ollama") {
      for (const image of Array.isArray(m?.images) ? m.images : []) {
        const { bytes, sha256, buffer } = decoded(String(image));
        out.push({ message: i, kind: "image", part: "images", mediaType: sniffMediaType(buffer), bytes, sha256 });
      }
      return;
    }
    if (!Array.isArray(m?.content)) return;
    for (const part of m.content) {
      const media = wire === "openai" ? openaiPart(part, i) : anthropicPart(part, i);
      if (media !== undefined) out.push(media);
    }
  });
  return out;
}
