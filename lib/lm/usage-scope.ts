import { asyncLocalStorage } from "../load-sync.js";
import { cacheSavings } from "./prices.js";
import type { ChatMessage, LMResponse } from "./types.js";

/** One model call as an evaluation records it with its example (`Evaluation({ recordCalls })`). */
export interface ModelCall {
  provider: string;
  model: string;
  /** The messages sent, in order. */
  messages: ChatMessage[];
  /** The reply's text as the model gave it (for native structured output, the JSON text). */
  reply: string;
  inputTokens: number;
  outputTokens: number;
  /** Of `outputTokens`, reasoning tokens; absent when 0 (and in calls recorded before they were counted). */
  reasoningTokens?: number;
  /** Of `inputTokens`, tokens read from the provider's prompt cache; absent when 0. */
  cacheReadTokens?: number;
  /** Of `inputTokens`, tokens written to the provider's prompt cache; absent when 0. */
  cacheWriteTokens?: number;
  /** USD; null when the model's price is unknown. */
  cost: number | null;
  /** From the request to the reply, in milliseconds (retries included). */
  latencyMs: number;
  /** Answered from the response cache. */
  cached: boolean;
  /** Streamed calls: from the request to the first text chunk, in milliseconds; absent for a call that did not stream. */
  firstTokenMs?: number;
}

/** What the language-model calls made inside one `withUsage` scope cost. */
export interface UsageTotals {
  /** Calls answered by a model (cache hits included; they cost nothing). */
  calls: number;
  /** Calls answered from the response cache. */
  cachedCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Of `outputTokens`, reasoning tokens. */
  reasoningTokens: number;
  /** Of `inputTokens`, tokens read from the provider's prompt cache. */
  cacheReadTokens: number;
  /** Of `inputTokens`, tokens written to the provider's prompt cache. */
  cacheWriteTokens: number;
  /** USD; calls whose price is unknown add nothing. */
  cost: number;
  /** USD the prompt cache saved: the cache reads at the input rate minus at the cache-read rate (unpriced calls add nothing). */
  cacheSavings: number;
  /** When set, every call answered in this scope is appended here (an evaluation recording its examples' calls). */
  log?: ModelCall[];
}

const scopes = asyncLocalStorage<UsageTotals[]>();

export function emptyUsage(): UsageTotals {
  return { calls: 0, cachedCalls: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0, cacheSavings: 0 };
}

/**
 * Runs `fn` and counts every LM call made inside it (through async work too). Scopes nest: a call
 * counts in every enclosing scope, so an optimizer's totals include its evaluations' calls.
 */
export async function withUsage<T>(fn: () => Promise<T>): Promise<{ result: T; usage: UsageTotals }> {
  const usage = emptyUsage();
  const result = await scopes.run([...(scopes.getStore() ?? []), usage], fn);
  return { result, usage };
}

/** Like `withUsage`, but hands the live totals to `fn` and keeps them when `fn` throws. */
export function trackUsage<T>(usage: UsageTotals, fn: () => Promise<T>): Promise<T> {
  return scopes.run([...(scopes.getStore() ?? []), usage], fn);
}

/** Called by every language model once per answered call (with what was sent, for a scope that keeps a log). */
export function recordUsage(response: LMResponse, sent?: { messages: ChatMessage[]; latencyMs: number }): void {
  const active = scopes.getStore();
  if (active === undefined) return;
  for (const u of active) {
    if (u.log !== undefined && sent !== undefined) {
      u.log.push({
        provider: response.provider, model: response.model, messages: sent.messages, reply: response.content,
        inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens, cost: response.estimatedCost,
        latencyMs: sent.latencyMs, cached: response.cached,
        ...(response.usage.reasoningTokens ? { reasoningTokens: response.usage.reasoningTokens } : {}),
        ...(response.usage.cacheReadTokens ? { cacheReadTokens: response.usage.cacheReadTokens } : {}),
        ...(response.usage.cacheWriteTokens ? { cacheWriteTokens: response.usage.cacheWriteTokens } : {}),
        ...(response.firstTokenMs === undefined ? {} : { firstTokenMs: response.firstTokenMs }),
      });
    }
    u.calls++;
    if (response.cached) u.cachedCalls++;
    u.inputTokens += response.usage.inputTokens;
    u.outputTokens += response.usage.outputTokens;
    u.reasoningTokens += response.usage.reasoningTokens ?? 0;
    u.cacheReadTokens += response.usage.cacheReadTokens ?? 0;
    u.cacheWriteTokens += response.usage.cacheWriteTokens ?? 0;
    u.cost += response.estimatedCost ?? 0;
    // A cache hit of typelm's own response cache paid nothing, so the provider's cache saved nothing.
    if (!response.cached && response.usage.cacheReadTokens) u.cacheSavings += cacheSavings(response.provider, response.model, response.usage) ?? 0;
  }
}
