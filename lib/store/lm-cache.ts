import type { Database } from "better-sqlite3";
import { redactedJson, redactString } from "../instrument/redact.js";

/**
 * One cached model reply. Never holds an API key or a header: only what the model said, and what
 * it was asked (its request), each with registered secrets masked when stored (`storedCacheRow`).
 */
export interface LMCacheRow {
  key: string;
  provider: string;
  model: string;
  /** Canonical JSON of what the key was computed from (for inspection; no credentials). */
  requestJson: string;
  content: string;
  inputTokens: number;
  outputTokens: number;
  finishReason: string | undefined;
  createdAt: string;
}

interface RawRow {
  key: string;
  provider: string;
  model: string;
  request_json: string;
  content: string;
  input_tokens: number;
  output_tokens: number;
  finish_reason: string | null;
  created_at: string;
}

/** The `lm_cache` table of the store. */
export class LMCacheTable {
  readonly #get;
  readonly #put;
  readonly #all;

  constructor(db: Database) {
    this.#get = db.prepare<[string], RawRow>("SELECT * FROM lm_cache WHERE key = ?");
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO lm_cache (key, provider, model, request_json, content, input_tokens, output_tokens, finish_reason, created_at)
       VALUES (@key, @provider, @model, @request_json, @content, @input_tokens, @output_tokens, @finish_reason, @created_at)`,
    );
    this.#all = db.prepare<[], RawRow>("SELECT * FROM lm_cache ORDER BY created_at");
  }

  get(key: string): LMCacheRow | undefined {
    const row = this.#get.get(key);
    return row === undefined ? undefined : fromRaw(row);
  }

  put(row: LMCacheRow): void {
    const clean = storedCacheRow(row);
    this.#put.run({
      key: clean.key, provider: clean.provider, model: clean.model, request_json: clean.requestJson, content: clean.content,
      input_tokens: clean.inputTokens, output_tokens: clean.outputTokens, finish_reason: clean.finishReason ?? null,
      created_at: clean.createdAt,
    });
  }

  all(): LMCacheRow[] {
    return this.#all.all().map(fromRaw);
  }
}

/**
 * A reply as both engines store it: registered secrets (an API key a prompt quoted or a reply
 * echoed) masked in the reply and in the request, as in a run's rows and calls. The request is
 * redacted on its decoded values, so it stays valid JSON; the key (a hash) is unchanged, so the
 * same request still finds the reply.
 */
export function storedCacheRow(row: LMCacheRow): LMCacheRow {
  let requestJson: string;
  try {
    requestJson = redactedJson(JSON.parse(row.requestJson));
  } catch {
    requestJson = redactString(row.requestJson);
  }
  return { ...row, requestJson, content: redactString(row.content) };
}

function fromRaw(row: RawRow): LMCacheRow {
  return {
    key: row.key, provider: row.provider, model: row.model, requestJson: row.request_json, content: row.content,
    inputTokens: row.input_tokens, outputTokens: row.output_tokens, finishReason: row.finish_reason ?? undefined,
    createdAt: row.created_at,
  };
}
