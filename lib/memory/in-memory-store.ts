// The process-local memory store: the `InMemoryStore` class keeps its records and one-line methods; the
// methods' bodies are in in-memory-store-impl.ts, which the bundle loads at the first operation.
import type { MemoryChanges, MemoryRecord, MemorySearch, MemoryStore, NewMemory } from "./record.js";
import { inMemoryWork } from "./in-memory-store-impl.js";

/** A process-local store (the default). Records are copied in and out, so callers cannot change stored state. */
export class InMemoryStore implements MemoryStore {
  /** Insertion order is creation order, which gives newest-first without sorting ties by time. */
  private readonly records = new Map<string, MemoryRecord>();

  async store(memory: NewMemory): Promise<MemoryRecord> {
    return inMemoryWork().store(this.records, memory);
  }

  async retrieve(id: string): Promise<MemoryRecord | null> {
    return inMemoryWork().retrieve(this.records, id);
  }

  async search(search: MemorySearch): Promise<MemoryRecord[]> {
    return inMemoryWork().search(this.records, search);
  }

  async update(id: string, changes: MemoryChanges): Promise<MemoryRecord | null> {
    return inMemoryWork().update(this.records, id, changes);
  }

  async delete(id: string): Promise<boolean> {
    return this.records.delete(id);
  }
}
