// MemoryManager, the memory API: a facade whose methods load their work (argument validation, then
// the store call; manager-run.ts) at the first call, so `import "typelm"` does not compile it.
import type { MemoryRecord, MemoryStore } from "./record.js";

type Run = typeof import("./manager-run.js");
/** manager-run.ts once loaded: later calls run without waiting, as before the split. */
let loaded: Run | undefined;
let loading: Promise<Run> | undefined;

/**
 * Loads the validation and delegation behind the methods (manager-run.ts), at the first call. One
 * promise for every caller, so calls made while it loads run in the order they were made.
 */
function load(): Promise<Run> {
  loading ??= import("./manager-run.js").then(
    (run) => (loaded = run),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** The memory API: validates arguments, then delegates to the configured store. */
export class MemoryManager {
  constructor(readonly store: MemoryStore) {}

  /** Stores a memory for a user and returns its id. */
  async storeMemory(text: string, options: { userId: string; tags?: string[] }): Promise<string> {
    return (loaded ?? (await load())).storeMemory(this.store, text, options);
  }

  /** The record with this id, or null. */
  async retrieveMemory(id: string): Promise<MemoryRecord | null> {
    return (loaded ?? (await load())).retrieveMemory(this.store, id);
  }

  /** The user's records carrying every given tag and containing `query` (case-insensitive), newest first. */
  async searchMemories(options: { userId: string; tags?: string[]; query?: string; limit?: number }): Promise<MemoryRecord[]> {
    return (loaded ?? (await load())).searchMemories(this.store, options);
  }

  /** Changes text and/or tags; returns the updated record, or null when there is no such id. */
  async updateMemory(id: string, changes: { text?: string; tags?: string[] }): Promise<MemoryRecord | null> {
    return (loaded ?? (await load())).updateMemory(this.store, id, changes);
  }

  /** Deletes a record; returns whether one was deleted. */
  async deleteMemory(id: string): Promise<boolean> {
    return (loaded ?? (await load())).deleteMemory(this.store, id);
  }
}
