/**
 * Memory tools for agents. `MemoryToolset.toTools()` lets the model name the user; bound with
 * `toTools({ userId })`, the tools have no userId argument at all and only ever see that user's
 * records, so a model cannot read or write another user's memories. The tools' schemas and
 * definitions are in memory-toolset-impl.ts, which the bundle loads when they are first built.
 */
import type { MemoryManager } from "../memory/manager.js";
import type { Tool } from "./tool.js";
import { type ToolsetEntries, Toolset } from "./toolset.js";
import { defaultMemoryEntries, memoryTools } from "./memory-toolset-impl.js";

/** Options of `MemoryToolset.toTools`: the user every tool is bound to, and the memory manager to use. */
export interface MemoryToolsetOptions {
  /** Bind every tool to this user. */
  userId?: string;
  /** Defaults to `Memory.manager`, looked up at call time so `Memory.configure` applies later too. */
  manager?: MemoryManager;
}

/** The memory tools an agent can use: `store_memory`, `retrieve_memory` and `search_memories`, over `Memory.manager` by default. */
export class MemoryToolset extends Toolset {
  static override toolsetName = "memory";
  static {
    // `MemoryToolset.tools`, built when first read: its zod schemas cost start-up time most programs never need.
    let entries: ToolsetEntries | undefined;
    Object.defineProperty(this, "tools", {
      get: () => (entries ??= defaultMemoryEntries()),
      enumerable: true,
      configurable: true,
    });
  }

  /** `store_memory`, `retrieve_memory`, `search_memories`; bound to one user with `{ userId }`. */
  static override toTools(options: MemoryToolsetOptions = {}): Tool[] {
    return memoryTools(options);
  }
}
