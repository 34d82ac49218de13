import { storedCacheRow, type LMCacheRow } from "./lm-cache.js";
import { postgresError, postgresPool } from "./pg.js";

interface RawRow {
  key: string; provider: string; model: string; request_json: string; content: string;
  input_tokens: number; output_tokens: number; finish_reason: string | null; created_at: string;
}

/**
 * The `lm_cache` table of a team's lab on PostgreSQL: every process using the database shares the
 * replies, so a colleague's identical request is answered from it. The same rows as the SQLite table.
 */
export class PostgresLMCacheTable {
  readonly #url: string;

  constructor(url: string) {
    this.#url = url;
    postgresPool(url);
  }

  async get(key: string): Promise<LMCacheRow | undefined> {
    const [row] = await this.#query<RawRow>("SELECT * FROM lm_cache WHERE key = $1", [key], "read");
    return row === undefined ? undefined : {
      key: row.key, provider: row.provider, model: row.model, requestJson: row.request_json, content: row.content,
      inputTokens: row.input_tokens, outputTokens: row.output_tokens, finishReason: row.finish_reason ?? undefined, createdAt: row.created_at,
    };
  }

  /** Stores a reply; two processes storing the same key at once leave one row (the later reply). */
  async put(given: LMCacheRow): Promise<void> {
    const row = storedCacheRow(given);
    await this.#query(
      `INSERT INTO lm_cache (key, provider, model, request_json, content, input_tokens, output_tokens, finish_reason, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (key) DO UPDATE SET provider = EXCLUDED.provider, model = EXCLUDED.model, request_json = EXCLUDED.request_json,
         content = EXCLUDED.content, input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens,
         finish_reason = EXCLUDED.finish_reason, created_at = EXCLUDED.created_at`,
      [row.key, row.provider, row.model, row.requestJson, row.content, row.inputTokens, row.outputTokens, row.finishReason ?? null, row.createdAt],
      "write to",
    );
  }

  async #query<T>(sql: string, params: unknown[], action: string): Promise<T[]> {
    const { pool, ready } = postgresPool(this.#url);
    await ready;
    try {
      return (await pool.query(sql, params)).rows as T[];
    } catch (error) {
      throw postgresError(this.#url, `${action} the LM cache of`, error);
    }
  }
}
