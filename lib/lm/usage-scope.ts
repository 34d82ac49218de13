import { AsyncLocalStorage } from "node:async_hooks";
import type { LMResponse } from "./types.js";

/** What the language-model calls made inside one `withUsage` scope cost. */
export interface UsageTotals {
  /** Calls answered by a model (cache hits included; they cost nothing). */
  calls: number;
  /** Calls answered from the response cache. */
  cachedCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** USD; calls whose price is unknown add nothing. */
  cost: number;
}

const scopes = new AsyncLocalStorage<UsageTotals[]>();

export function emptyUsage(): UsageTotals {
  return { calls: 0, cachedCalls: 0, inputTokens: 0, outputTokens: 0, cost: 0 };
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

/** Called by every language model once per answered call. */
export function recordUsage(response: LMResponse): void {
  const active = scopes.getStore();
  if (active === undefined) return;
  for (const u of active) {
    u.calls++;
    if (response.cached) u.cachedCalls++;
    u.inputTokens += response.usage.inputTokens;
    u.outputTokens += response.usage.outputTokens;
    u.cost += response.estimatedCost ?? 0;
  }
}
