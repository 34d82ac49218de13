// MemoryManager, the memory API: a facade whose methods load their work (argument validation, then
// the store call; manager-run.ts) at the first call, so `import "typelm"` does not compile it.
import { moduleOnFirstUse } from "../load-sync.js";
import type { MemoryRecord, MemoryStore } from "./record.js";

/** The validation and delegation behind the methods, loaded at the first call. */
const work = moduleOnFirstUse(() => import("./manager-run.js"));

/** The memory API: validates arguments, then delegates to the configured store. */
export class MemoryManager {
  constructor(readonly store: MemoryStore) {}

  /** Stores a memory for a user and returns its id. */
  async storeMemory(text: string, options: { userId: string; tags?: string[] }): Promise<string> {
    return (work.loaded ?? (await work.load())).storeMemory(this.store, text, options);
  }

  /** The record with this id, or null. */
  async retrieveMemory(id: string): Promise<MemoryRecord | null> {
    return (work.loaded ?? (await work.load())).retrieveMemory(this.store, id);
  }

  /** The user's records carrying every given tag and containing `query` (case-insensitive), newest first. */
  async searchMemories(options: { userId: string; tags?: string[]; query?: string; limit?: number }): Promise<MemoryRecord[]> {
    return (work.loaded ?? (await work.load())).searchMemories(this.store, options);
  }

  /** Changes text and/or tags; returns the updated record, or null when there is no such id. */
  async updateMemory(id: string, changes: { text?: string; tags?: string[] }): Promise<MemoryRecord | null> {
    return (work.loaded ?? (await work.load())).updateMemory(this.store, id, changes);
  }

  /** Deletes a record; returns whether one was deleted. */
  async deleteMemory(id: string): Promise<boolean> {
    return (work.loaded ?? (await work.load())).deleteMemory(this.store, id);
  }
}
