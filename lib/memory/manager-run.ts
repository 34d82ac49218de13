/**
 * The work behind `MemoryManager`'s methods, loaded at the first call (not at `import "typelm"`):
 * each validates its arguments (a ValidationError naming the field), then delegates to the store.
 */
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

/** `MemoryManager.storeMemory`: stores a memory for a user and returns its id. */
export async function storeMemory(store: MemoryStore, text: string, options: { userId: string; tags?: string[] }): Promise<string> {
  const record = await store.store({
    text: requireText("text", text),
    userId: requireName("userId", options?.userId),
    tags: normalizeTags(options?.tags),
  });
  return record.id;
}

/** `MemoryManager.retrieveMemory`: the record with this id, or null. */
export async function retrieveMemory(store: MemoryStore, id: string): Promise<MemoryRecord | null> {
  return store.retrieve(requireName("id", id));
}

/** `MemoryManager.searchMemories`: the user's records carrying every tag and containing `query`, newest first. */
export async function searchMemories(
  store: MemoryStore, options: { userId: string; tags?: string[]; query?: string; limit?: number },
): Promise<MemoryRecord[]> {
  const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
  if (!Number.isInteger(limit) || limit < 0) {
    throw new ValidationError(`Memory limit: expected a non-negative integer, received ${preview(limit)}`, { field: "limit" });
  }
  if (options.query !== undefined && typeof options.query !== "string") {
    throw new ValidationError(`Memory query: expected a string, received ${preview(options.query)}`, { field: "query" });
  }
  return store.search({
    userId: requireName("userId", options?.userId),
    tags: normalizeTags(options.tags),
    query: options.query || undefined,
    limit,
  });
}

/** `MemoryManager.updateMemory`: changes text and/or tags; the updated record, or null when there is no such id. */
export async function updateMemory(store: MemoryStore, id: string, changes: { text?: string; tags?: string[] }): Promise<MemoryRecord | null> {
  return store.update(requireName("id", id), {
    text: changes.text === undefined ? undefined : requireText("text", changes.text),
    tags: changes.tags === undefined ? undefined : normalizeTags(changes.tags),
  });
}

/** `MemoryManager.deleteMemory`: deletes a record; whether one was deleted. */
export async function deleteMemory(store: MemoryStore, id: string): Promise<boolean> {
  return store.delete(requireName("id", id));
}
