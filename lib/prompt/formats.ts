import type { MediaValue } from "../media/media.js";

/** Who speaks a chat message. */
export type Role = "system" | "user" | "assistant";

/** A media value attached to a message, with the name of the input field it came from ("photo", "pages[1]"). */
export interface MediaAttachment {
  name: string;
  /** The `Image`, `Audio` or `Document` (typed by its public side, so copies of the package agree). */
  value: Pick<MediaValue, "kind" | "bytes" | "url" | "sniffedType" | "mediaType" | "size" | "base64" | "sha256" | "toJSON">;
}

/** One chat message, as a prompt renders it and a language model receives it. */
export interface ChatMessage {
  role: Role;
  content: string;
  /**
   * Media values sent with this message as the provider's own content parts, after its text, in
   * this order; the text names each by a placeholder ("[image 1 below]"). Absent for text only.
   */
  media?: readonly MediaAttachment[];
}

/** How the schemas are written in the system message. */
export type SchemaFormat = "json" | "baml" | "toon";
/** How input values, demos and the expected reply are written. */
export type DataFormat = "json" | "toon";
