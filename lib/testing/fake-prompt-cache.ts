/**
 * The fake provider's prompt cache (`startFakeProvider({ promptCache: true })`), honest to how
 * Anthropic's works: a request's content is a sequence of blocks (tools, system blocks, then each
 * message's blocks); a block carrying `cache_control` marks the prefix ending with it cacheable. A
 * request that marks a prefix reads from the cache the longest of its prefixes (up to its last
 * mark) that an earlier request marked cacheable, and writes the prefixes it marks that are longer than what it read. Tokens are
 * counted as everywhere in the fake (4 characters a token, per block). Only the Anthropic wire marks
 * prefixes; on the other wires every token is uncached.
 */
import { tokens, type FakeRequest, type FakeUsage } from "./fake-wire.js";

/** The cache of one fake provider: the prefixes marked cacheable so far. */
export class FakePromptCache {
  readonly #seen = new Set<string>();

  /** The usage of a request whose reply text is `output`: input tokens with their cache reads and writes. */
  usage(request: FakeRequest, output: string): FakeUsage {
    const blocks = request.wire === "anthropic" ? anthropicBlocks(request.body) : [{ text: JSON.stringify(request.messages), marked: false }];
    let total = 0;
    const prefixes: { key: string; tokens: number; marked: boolean }[] = [];
    let key = "";
    for (const block of blocks) {
      total += tokens(block.text);
      key += `\u0000${block.text}`;
      prefixes.push({ key, tokens: total, marked: block.marked });
    }
    // Only a request that marks a prefix reads the cache, and only up to its last mark.
    let read = 0;
    const lastMark = prefixes.map((p) => p.marked).lastIndexOf(true);
    for (let i = lastMark; i >= 0; i--) {
      if (this.#seen.has(prefixes[i]!.key)) {
        read = prefixes[i]!.tokens;
        break;
      }
    }
    let written = read;
    for (const p of prefixes) {
      if (!p.marked) continue;
      if (p.tokens > written && !this.#seen.has(p.key)) written = p.tokens;
      this.#seen.add(p.key);
    }
    return { inputTokens: total, outputTokens: tokens(output), cacheReadTokens: read, cacheWriteTokens: written - read };
  }

  /** Forgets every cached prefix. */
  clear(): void {
    this.#seen.clear();
  }
}

/** The blocks of an Anthropic request in the order the cache reads them, each with whether it is marked. */
function anthropicBlocks(body: any): { text: string; marked: boolean }[] {
  const out: { text: string; marked: boolean }[] = [];
  const add = (block: any, role: string): void => {
    const { cache_control, ...rest } = typeof block === "string" ? { type: "text", text: block } : (block ?? {});
    out.push({ text: JSON.stringify({ role, ...rest }), marked: cache_control !== undefined });
  };
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) add(tool, "tool");
  if (typeof body?.system === "string") add(body.system, "system");
  else for (const block of Array.isArray(body?.system) ? body.system : []) add(block, "system");
  for (const message of Array.isArray(body?.messages) ? body.messages : []) {
    if (typeof message.content === "string") add(message.content, message.role);
    else for (const block of message.content ?? []) add(block, message.role);
  }
  return out;
}
