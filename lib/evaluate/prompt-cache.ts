// What the provider's prompt cache did in an evaluation: the module's cache-read, cache-write and
// reasoning tokens, totalled over its examples, and what the cache reads saved; with the sentence
// the report and `typelm show` print. Kept in the run's summary only when the cache was used.
import type { UsageTotals } from "../lm/usage-scope.js";

/** The module's prompt-cache figures over an evaluation's examples (a resumed run: those run after resuming). */
export interface PromptCacheUsage {
  /** Input tokens read from the provider's prompt cache (part of the report's `inputTokens`). */
  readTokens: number;
  /** Input tokens written to the provider's prompt cache. */
  writeTokens: number;
  /** Output tokens spent on reasoning (part of the report's `outputTokens`). */
  reasoningTokens: number;
  /** USD the cache reads saved: priced at the input rate minus at the cache-read rate. */
  savings: number;
}

/** An empty tally. */
export function emptyPromptCache(): PromptCacheUsage {
  return { readTokens: 0, writeTokens: 0, reasoningTokens: 0, savings: 0 };
}

/** Adds one example's module usage to `tally`. */
export function addPromptCache(tally: PromptCacheUsage, usage: UsageTotals | undefined): void {
  if (usage === undefined) return;
  tally.readTokens += usage.cacheReadTokens;
  tally.writeTokens += usage.cacheWriteTokens;
  tally.reasoningTokens += usage.reasoningTokens;
  tally.savings += usage.cacheSavings;
}

/** Whether the tally is worth keeping: some token was read from or written to a prompt cache, or spent on reasoning. */
export function usedPromptCache(tally: PromptCacheUsage): boolean {
  return tally.readTokens + tally.writeTokens + tally.reasoningTokens > 0;
}

/** "prompt cache: 60.0% of input tokens read from the cache (600 of 1000), 100 written; saved $0.0004". */
export function promptCacheLine(tally: PromptCacheUsage, inputTokens: number): string {
  const share = inputTokens > 0 ? ((100 * tally.readTokens) / inputTokens).toFixed(1) : "0.0";
  const reasoning = tally.reasoningTokens > 0 ? `; ${tally.reasoningTokens} reasoning tokens` : "";
  return `prompt cache: ${share}% of input tokens read from the cache (${tally.readTokens} of ${inputTokens}), ${tally.writeTokens} written; saved $${tally.savings.toFixed(4)}${reasoning}`;
}
