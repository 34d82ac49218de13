import type { Database } from "better-sqlite3";

/** One cached model reply. Never holds an API key or a header: only what the model said. */
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
    this.#put.run({
      key: row.key, provider: row.provider, model: row.model, request_json: row.requestJson, content: row.content,
      input_tokens: row.inputTokens, output_tokens: row.outputTokens, finish_reason: row.finishReason ?? null,
      created_at: row.createdAt,
    });
  }

  all(): LMCacheRow[] {
    return this.#all.all().map(fromRaw);
  }
}

function fromRaw(row: RawRow): LMCacheRow {
  return {
    key: row.key, provider: row.provider, model: row.model, requestJson: row.request_json, content: row.content,
    inputTokens: row.input_tokens, outputTokens: row.output_tokens, finishReason: row.finish_reason ?? undefined,
    createdAt: row.created_at,
  };
}
