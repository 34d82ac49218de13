// The model calls a row keeps (`lab_rows.calls_json`), read back with their long texts from
// `lab_texts`. Shared by the lab store and the run viewer (which reads over its own connection).
import type { Database } from "better-sqlite3";
import type { ModelCall } from "../lm/usage-scope.js";

/** A call as `calls_json` keeps it: long texts by their hash in lab_texts. */
export interface StoredCall {
  provider: string; model: string; messages: { role: ModelCall["messages"][number]["role"]; content?: string; text?: string }[];
  reply?: string; replyHash?: string; inputTokens: number; outputTokens: number; cost: number | null; latencyMs: number; cached: boolean;
}

/** The calls of a row's `calls_json`, their long texts read back from lab_texts. */
export function storedCalls(db: Database, json: string): ModelCall[] {
  const textOf = db.prepare<[string], { text: string }>("SELECT text FROM lab_texts WHERE hash = ?");
  const read = (hash: string | undefined) => (hash === undefined ? "" : textOf.get(hash)?.text ?? "");
  return parse<StoredCall[]>(json).map((c) => ({
    provider: c.provider, model: c.model, messages: c.messages.map((m) => ({ role: m.role, content: m.content ?? read(m.text) })),
    reply: c.reply ?? read(c.replyHash), inputTokens: c.inputTokens, outputTokens: c.outputTokens, cost: c.cost, latencyMs: c.latencyMs, cached: c.cached,
  }));
}

function parse<T>(text: string): T {
  return JSON.parse(text) as T;
}
