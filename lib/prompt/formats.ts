/** Who speaks a chat message. */
export type Role = "system" | "user" | "assistant";

/** One chat message, as a prompt renders it and a language model receives it. */
export interface ChatMessage {
  role: Role;
  content: string;
}

/** How the schemas are written in the system message. */
export type SchemaFormat = "json" | "baml" | "toon";
/** How input values, demos and the expected reply are written. */
export type DataFormat = "json" | "toon";
