// The PostgreSQL lab store's asynchronous work: sending the writes `PostgresLabStore` queued (in
// batches, in order), `flush()`, and the engine its readers query once the handle's own writes are in.
// Loaded by the store (lib/store/pg-lab-store.ts) at its first write, read or flush, with the engine,
// `pg` and the schema's migrations, so `import "typelm"` loads none of it.
import { PostgresLabEngine, type Write } from "./pg-lab-engine.js";

/** What a `PostgresLabStore` handle and its loaded work share: the writes queued and not yet sent. */
export interface PgLabQueue {
  writes: Write[];
}

/** The sending, flushing and reading of one `PostgresLabStore` handle. */
export class PostgresLabRun {
  readonly engine: PostgresLabEngine;
  readonly #queue: PgLabQueue;
  readonly #knownTexts: Set<string>;
  readonly #knownMedia: Set<string>;
  #draining: Promise<void> | null = null;
  #failures: unknown[] = [];

  /** `knownTexts` and `knownMedia`: the hashes this process knows the database has (shared per URL). */
  constructor(url: string, path: string, queue: PgLabQueue, knownTexts: Set<string>, knownMedia: Set<string>) {
    this.engine = new PostgresLabEngine(url, path);
    this.#queue = queue;
    this.#knownTexts = knownTexts;
    this.#knownMedia = knownMedia;
  }

  /** Waits until every queued write is in the database; rejects with the first that failed since the last flush. */
  async flush(): Promise<void> {
    await this.settle();
    const failures = this.#failures;
    this.#failures = [];
    if (failures.length > 0) throw failures[0];
  }

  /** Waits for queued writes without taking their failures (those stay for `flush()`): a read sees the handle's own writes. */
  async settle(): Promise<void> {
    while (this.#draining !== null || this.#queue.writes.length > 0) await (this.#draining ?? this.drain());
  }

  /** Sends what is queued, batch after batch, until the queue is empty; the drain already under way when there is one. */
  drain(): Promise<void> {
    if (this.#draining !== null) return this.#draining;
    this.#draining = (async () => {
      while (this.#queue.writes.length > 0) {
        const batch = this.#queue.writes;
        this.#queue.writes = [];
        await this.engine.send(batch, (error) => void this.#failures.push(error), this.#knownTexts, this.#knownMedia);
      }
    })().finally(() => {
      this.#draining = null;
    });
    return this.#draining;
  }
}
