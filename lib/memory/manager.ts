import { ValidationError, preview } from "../errors.js";
import { DEFAULT_SEARCH_LIMIT, type MemoryRecord, type MemoryStore } from "./record.js";

/**
 * A non-empty string. Text must also hold more than spaces; an id, user id or tag is any non-empty
 * string (" " is a user id like any other: the Redis store encodes every character into its keys).
 */
function requireText(field: string, value: unknown, blankAllowed = false): string {
  if (typeof value !== "string" || value === "" || (!blankAllowed && value.trim() === "")) {
    throw new ValidationError(`Memory ${field}: expected a non-empty string, received ${preview(value)}`, { field });
  }
  return value;
}

function requireName(field: string, value: unknown): string {
  return requireText(field, value, true);
}

function normalizeTags(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ValidationError(`Memory tags: expected an array of strings, received ${preview(value)}`, { field: "tags" });
  value.forEach((tag, i) => requireName(`tags[${i}]`, tag));
  return [...new Set(value as string[])];
}

/** The memory API: validates arguments, then delegates to the configured store. */
export class MemoryManager {
  constructor(readonly store: MemoryStore) {}

  /** Stores a memory for a user and returns its id. */
  async storeMemory(text: string, options: { userId: string; tags?: string[] }): Promise<string> {
    const record = await this.store.store({
      text: requireText("text", text),
      userId: requireName("userId", options?.userId),
      tags: normalizeTags(options?.tags),
    });
    return record.id;
  }

  /** The record with this id, or null. */
  async retrieveMemory(id: string): Promise<MemoryRecord | null> {
    return this.store.retrieve(requireName("id", id));
  }

  /** The user's records carrying every given tag and containing `query` (case-insensitive), newest first. */
  async searchMemories(options: { userId: string; tags?: string[]; query?: string; limit?: number }): Promise<MemoryRecord[]> {
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 0) {
      throw new ValidationError(`Memory limit: expected a non-negative integer, received ${preview(limit)}`, { field: "limit" });
    }
    if (options.query !== undefined && typeof options.query !== "string") {
      throw new ValidationError(`Memory query: expected a string, received ${preview(options.query)}`, { field: "query" });
    }
    return this.store.search({
      userId: requireName("userId", options?.userId),
      tags: normalizeTags(options.tags),
      query: options.query || undefined,
      limit,
    });
  }

  /** Changes text and/or tags; returns the updated record, or null when there is no such id. */
  async updateMemory(id: string, changes: { text?: string; tags?: string[] }): Promise<MemoryRecord | null> {
    return this.store.update(requireName("id", id), {
      text: changes.text === undefined ? undefined : requireText("text", changes.text),
      tags: changes.tags === undefined ? undefined : normalizeTags(changes.tags),
    });
  }

  /** Deletes a record; returns whether one was deleted. */
  async deleteMemory(id: string): Promise<boolean> {
    return this.store.delete(requireName("id", id));
  }
}
