// The work behind `InMemoryStore` (lib/memory/in-memory-store.ts), on the map of its records. The
// bundle loads this module at the first operation (scripts/deferred-modules.mjs). Synchronous: the
// class's async methods call them, so each change is made when the method is called, as before.
import { nodeCrypto } from "../load-sync.js";
import {
  DEFAULT_SEARCH_LIMIT,
  type MemoryChanges,
  type MemoryRecord,
  type MemorySearch,
  type NewMemory,
  copyRecord,
  matchesSearch,
} from "./record.js";

/** The records of one store, by id; insertion order is creation order. */
export type Records = Map<string, MemoryRecord>;

/** `InMemoryStore.store`: a new record with a fresh id, both dates now. */
function store(records: Records, memory: NewMemory): MemoryRecord {
  const now = new Date();
  const record: MemoryRecord = { id: nodeCrypto().randomUUID(), text: memory.text, userId: memory.userId, tags: [...memory.tags], createdAt: now, updatedAt: now };
  records.set(record.id, record);
  return copyRecord(record);
}

/** `InMemoryStore.retrieve`: a copy of the record with this id, or null. */
function retrieve(records: Records, id: string): MemoryRecord | null {
  const record = records.get(id);
  return record ? copyRecord(record) : null;
}

/** `InMemoryStore.search`: copies of the user's matching records, newest first, at most the limit. */
function search(records: Records, search: MemorySearch): MemoryRecord[] {
  const limit = search.limit ?? DEFAULT_SEARCH_LIMIT;
  const found: MemoryRecord[] = [];
  const newestFirst = [...records.values()].reverse();
  for (const record of newestFirst) {
    if (found.length >= limit) break;
    if (matchesSearch(record, search)) found.push(copyRecord(record));
  }
  return found;
}

/** `InMemoryStore.update`: the updated record, or null when there is no such id. */
function update(records: Records, id: string, changes: MemoryChanges): MemoryRecord | null {
  const record = records.get(id);
  if (!record) return null;
  if (changes.text !== undefined) record.text = changes.text;
  if (changes.tags !== undefined) record.tags = [...changes.tags];
  record.updatedAt = new Date();
  return copyRecord(record);
}

const work = { store, retrieve, search, update };

/** The functions behind `InMemoryStore`'s methods, by name (one import, so the bundle stands in for one function). */
export function inMemoryWork(): typeof work {
  return work;
}
