/** The memory record, the store interface every adapter implements, and the search rules they share. */

/**
 * One stored memory. Dates are `Date` objects (the Redis adapter stores ISO 8601 strings and
 * converts back), so records from both adapters compare equal.
 */
export interface MemoryRecord {
  id: string;
  text: string;
  userId: string;
  tags: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** What `MemoryStore.store` takes: a record's text, owner and tags, before it has an id or dates. */
export interface NewMemory {
  text: string;
  userId: string;
  tags: string[];
}

/** A search of one user's memories: all the given tags, a case-insensitive substring, a limit. */
export interface MemorySearch {
  userId: string;
  /** Every tag listed must be on the record. */
  tags?: string[];
  /** Case-insensitive substring of the text. */
  query?: string;
  /** At most this many records, newest first. Default 50. */
  limit?: number;
}

/** The fields `update` may change; fields left out keep their value. */
export interface MemoryChanges {
  text?: string;
  tags?: string[];
}

/**
 * Where memories live. Implementations trust their input: `MemoryManager` validates it.
 * `search` returns only the given user's records, newest first.
 */
export interface MemoryStore {
  /** Stores a new record with a fresh id and both dates set to now, and returns it. */
  store(memory: NewMemory): Promise<MemoryRecord>;
  /** The record with this id, or null when there is none. */
  retrieve(id: string): Promise<MemoryRecord | null>;
  /** The user's records that match `search`, newest first, at most `search.limit` (default 50). */
  search(search: MemorySearch): Promise<MemoryRecord[]>;
  /** Returns the updated record, or null when there is no such id. */
  update(id: string, changes: MemoryChanges): Promise<MemoryRecord | null>;
  /** Returns whether a record was deleted. */
  delete(id: string): Promise<boolean>;
}

export const DEFAULT_SEARCH_LIMIT = 50;

/** The filter both adapters apply to a candidate record (Redis narrows candidates by tag first). */
export function matchesSearch(record: MemoryRecord, search: MemorySearch): boolean {
  if (record.userId !== search.userId) return false;
  if (search.tags && !search.tags.every((tag) => record.tags.includes(tag))) return false;
  if (search.query && !record.text.toLowerCase().includes(search.query.toLowerCase())) return false;
  return true;
}

export function copyRecord(record: MemoryRecord): MemoryRecord {
  return { ...record, tags: [...record.tags], createdAt: new Date(record.createdAt), updatedAt: new Date(record.updatedAt) };
}
