/**
 * Reads a media type from the first bytes of a value (its magic numbers), never from a file name: PNG,
 * JPEG, GIF and WebP images, WAV and MP3 audio, PDF documents. A small built-in sniffer, synchronous
 * so inputs are checked inside the same (synchronous) validation as every other field, with no
 * dependency loaded at `import "typelm"`. (`file-type` was considered: its detection has been async
 * since version 13 and it is ES-module only, while `fromBytes`/`fromBase64` and input validation are
 * synchronous; the seven formats the providers take need no more than these checks.) The bundle
 * loads this module at the first media value made (scripts/deferred-modules.mjs).
 */

/** The media types the sniffer recognises, by the kind of value they make (read through `supportedTypes`). */
const SUPPORTED_TYPES: Record<"image" | "audio" | "document", readonly string[]> = {
  image: ["image/png", "image/jpeg", "image/gif", "image/webp"],
  audio: ["audio/wav", "audio/mpeg"],
  document: ["application/pdf"],
};

/** The media types the sniffer recognises that make a value of `kind`. */
export function supportedTypes(kind: "image" | "audio" | "document"): readonly string[] {
  return SUPPORTED_TYPES[kind];
}

const startsWith = (bytes: Uint8Array, at: number, ascii: string): boolean => {
  if (bytes.length < at + ascii.length) return false;
  for (let i = 0; i < ascii.length; i++) if (bytes[at + i] !== ascii.charCodeAt(i)) return false;
  return true;
};

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** An MPEG audio frame header of layer III (MP3): 11 sync bits, a version that is not reserved, layer bits 01. */
function mp3Frame(bytes: Uint8Array): boolean {
  const [b0, b1] = [bytes[0] ?? 0, bytes[1] ?? 0];
  return b0 === 0xff && (b1 & 0xe0) === 0xe0 && ((b1 >> 3) & 0x03) !== 0x01 && ((b1 >> 1) & 0x03) === 0x01;
}

/**
 * The media type the bytes start with, or undefined when they match none of the formats above.
 * A PDF may have a few bytes before `%PDF-` (some writers put a BOM or whitespace): the first 1,024 are looked at.
 */
export function sniffMediaType(bytes: Uint8Array): string | undefined {
  if (PNG.every((b, i) => bytes[i] === b)) return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (startsWith(bytes, 0, "GIF87a") || startsWith(bytes, 0, "GIF89a")) return "image/gif";
  if (startsWith(bytes, 0, "RIFF") && startsWith(bytes, 8, "WEBP")) return "image/webp";
  if (startsWith(bytes, 0, "RIFF") && startsWith(bytes, 8, "WAVE")) return "audio/wav";
  if (startsWith(bytes, 0, "ID3") || mp3Frame(bytes)) return "audio/mpeg";
  const head = bytes.subarray(0, 1024);
  for (let i = head.indexOf(0x25); i !== -1 && i + 5 <= head.length; i = head.indexOf(0x25, i + 1)) {
    if (startsWith(head, i, "%PDF-")) return "application/pdf";
  }
  return undefined;
}
