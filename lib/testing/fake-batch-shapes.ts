// The fake batch services' answers in each provider's wire shape: a line's result, a file object, a
// list, a time, raw bytes; and which lines a script's match picks.
import type { ServerResponse } from "node:http";
import { errorBody } from "./fake-wire.js";
import type { FakeBatchLineMatch, Line, Outcome, StoredFile } from "./fake-batch-script.js";

/** Whether a script's line match picks this line. */
export function matches(match: FakeBatchLineMatch | undefined, line: Line): boolean {
  if (match === undefined) return false;
  return typeof match === "function" ? match(line.customId, line.request) : match.includes(line.customId);
}

/** A line's outcome as an Anthropic results line's `result`. */
export function anthropicResult(outcome: Outcome): { type: string; [key: string]: unknown } {
  if (outcome.kind === "succeeded") return { type: "succeeded", message: outcome.body };
  if (outcome.kind === "errored") return { type: "errored", error: { ...(errorBody("anthropic", outcome.status, outcome.message) as object), request_id: null } };
  return { type: outcome.kind };
}

/** An uploaded file as OpenAI's File object. */
export function fileObject(file: StoredFile): unknown {
  return {
    id: file.id, object: "file", bytes: file.content.length, created_at: Math.floor(file.createdAt / 1000),
    filename: file.filename, purpose: file.purpose, status: "processed", expires_at: null, status_details: null,
  };
}

/** A list response in the provider's shape. */
export function listOf(data: unknown[], openai: boolean): unknown {
  const ids = data.map((d) => (d as { id: string }).id);
  return openai
    ? { object: "list", data, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null, has_more: false }
    : { data, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null, has_more: false };
}

/** A time as ISO 8601 text, or null. */
export function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

/** A file's bytes as the response. */
export function sendBytes(res: ServerResponse, bytes: Buffer): void {
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(bytes.length) });
  res.end(bytes);
}
