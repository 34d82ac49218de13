/**
 * The field types `t.image()`, `t.audio()` and `t.document()`: zod schemas that take an `Image`,
 * `Audio` or `Document` whose bytes are a supported format of that kind, and say "expected an image
 * (PNG, …)" otherwise. A marker on the schema's definition tells the JSON Schema writer and the
 * dataset loader which kind a field is. The schemas are built by `mediaField` (media-impl.ts), which
 * the bundle loads at the first media field made.
 */
import type { z } from "zod";
import type { Audio, Document, Image, MediaKind } from "./media.js";
import { mediaField } from "./media-impl.js";

type Marked = { typelmMedia?: MediaKind };

/**
 * The media kind of a schema made by `t.image()`, `t.audio()` or `t.document()` (through optional,
 * nullable and default wrappers it is the caller's job to unwrap), else undefined.
 */
export function mediaKind(schema: z.ZodType): MediaKind | undefined {
  return (schema._zod.def as Marked).typelmMedia;
}

/** The JSON Schema of a media field: base64 text of the kind's media types. */
export function mediaJsonSchema(kind: MediaKind): Record<string, unknown> {
  const contentMediaType = kind === "image" ? "image/*" : kind === "audio" ? "audio/*" : "application/pdf";
  return { type: "string", contentEncoding: "base64", contentMediaType };
}

/** The media field types, merged into `t`. */
export const mediaTypes = {
  /** An `Image` (PNG, JPEG, GIF or WebP); `z.array(t.image())` for several. */
  image: () => mediaField<Image>("image"),
  /** An `Audio` clip (WAV or MP3). */
  audio: () => mediaField<Audio>("audio"),
  /** A `Document` (PDF). */
  document: () => mediaField<Document>("document"),
};
