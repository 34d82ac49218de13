import { nodeCrypto } from "../load-sync.js";
import {
  DEFAULT_SEARCH_LIMIT,
  type MemoryChanges,
  type MemoryRecord,
  type MemorySearch,
  type MemoryStore,
  type NewMemory,
  copyRecord,
  matchesSearch,
} from "./record.js";

/** A process-local store (the default). Records are copied in and out, so callers cannot change stored state. */
export class InMemoryStore implements MemoryStore {
  /** Insertion order is creation order, which gives newest-first without sorting ties by time. */
  private readonly records = new Map<string, MemoryRecord>();

  async store(memory: NewMemory): Promise<MemoryRecord> {
    const now = new Date();
    const record: MemoryRecord = { id: nodeCrypto().randomUUID(), text: memory.text, userId: memory.userId, tags: [...memory.tags], createdAt: now, updatedAt: now };
    this.records.set(record.id, record);
    return copyRecord(record);
  }

  async retrieve(id: string): Promise<MemoryRecord | null> {
    const record = this.records.get(id);
    return record ? copyRecord(record) : null;
  }

  async search(search: MemorySearch): Promise<MemoryRecord[]> {
    const limit = search.limit ?? DEFAULT_SEARCH_LIMIT;
    const found: MemoryRecord[] = [];
    const newestFirst = [...this.records.values()].reverse();
    for (const record of newestFirst) {
      if (found.length >= limit) break;
      if (matchesSearch(record, search)) found.push(copyRecord(record));
    }
    return found;
  }

  async update(id: string, changes: MemoryChanges): Promise<MemoryRecord | null> {
    const record = this.records.get(id);
    if (!record) return null;
    if (changes.text !== undefined) record.text = changes.text;
    if (changes.tags !== undefined) record.tags = [...changes.tags];
    record.updatedAt = new Date();
    return copyRecord(record);
  }

  async delete(id: string): Promise<boolean> {
    return this.records.delete(id);
  }
}
