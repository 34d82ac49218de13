// The lab store on a SQLite file: the `LabStore` class, which keeps its fields and one-line methods; their
// bodies, the prepared statements and the opening of a store are in lab-store-impl.ts, which the bundle
// loads at the first open, read or write (scripts/deferred-modules.mjs).
import type { ModelCall } from "../lm/usage-scope.js";
import type { FinishRun, RunBatch, RunFilter, StartRun } from "./lab-rows.js";
import type { MediaValue } from "../media/media.js";
import type { PostgresLabStore } from "./pg-lab-store.js";
import type { Database } from "./db.js";
import type { EvaluationRow, LabRun, RunSummary, Trial } from "./records.js";
import { labWork, type LabHandle } from "./lab-store-impl.js";

/** What `LabStore.open` takes: the file's path, or `{ path }`; without one, the configured store file. */
export type LabStoreOptions = string | { path?: string };

/** A PostgreSQL database's URL, as `LabStore.open` and `c.lab = { url }` take it. */
export type PostgresUrl = `postgres://${string}` | `postgresql://${string}`;

/** A lab store of either engine: the SQLite file or a team's PostgreSQL database. */
export type Lab = LabStore | PostgresLabStore;

/**
 * The lab's record of evaluation and optimization runs, in the SQLite file shared with the LM cache
 * and the registry. Every write is one statement committed on its own, so a crash loses nothing
 * already written and another process can read a run while it goes on.
 */
export class LabStore {
  /** Which engine holds the lab: this one is the SQLite file (a team's database is "postgresql"). */
  readonly engine = "sqlite" as const;
  /** The absolute path of the file (or ":memory:"). */
  readonly path: string;
  readonly #lab: LabHandle;

  private constructor(path: string, db: Database) {
    this.path = path;
    this.#lab = { path, db, closed: false };
  }

  /**
   * Opens the store (synchronously). With no argument: `configure((c) => { c.lab = { path } })`'s
   * path, else `.typelm/lab.sqlite`. Every `LabStore`, registry and LM cache on one file in one
   * process shares one connection.
   */
  static open(options: PostgresUrl | { url: string }): PostgresLabStore;
  static open(options?: LabStoreOptions): LabStore;
  static open(options?: LabStoreOptions | { url: string }): Lab {
    return labWork().open(options, (path, db) => new LabStore(path, db));
  }

  /** Stops this handle; later calls raise `ConfigurationError`. The shared connection stays open. */
  close(): void {
    this.#lab.closed = true;
  }

  // ---- writers -------------------------------------------------------------------------------

  /** Records a new run as `running` and returns its id; a bad kind, name or config is a `ValidationError` and writes nothing. */
  startRun(run: StartRun): string {
    return labWork().startRun(this.#lab, run);
  }

  /**
   * Records one evaluated example of `runId` (call it when the example finishes), with the model calls
   * it made when given: in one transaction, each text (message, reply) stored once by its hash.
   */
  recordExample(runId: string, row: EvaluationRow, calls?: readonly ModelCall[]): void {
    labWork().recordExample(this.#lab, runId, row, calls);
  }

  /** The model calls recorded with one example of a run, in the order they were answered ([] when none). */
  calls(runId: string, index: number): ModelCall[] {
    return labWork().calls(this.#lab, runId, index);
  }

  /** Records one finished optimizer trial of `runId` (a failed trial too, with its error). */
  recordTrial(runId: string, trial: Trial): void {
    labWork().recordTrial(this.#lab, runId, trial);
  }

  /** The media value a row or call refers to (`{"$media": sha256, ...}`), as an `Image`, `Audio` or `Document`; undefined when not stored. */
  media(sha256: string): MediaValue | undefined {
    return labWork().media(this.#lab, sha256);
  }

  /** Marks the run completed, failed or stopped (an optimizer's maxCost), with its headline score, totals and error. */
  finishRun(runId: string, end: FinishRun): void {
    labWork().finishRun(this.#lab, runId, end);
  }

  /** Sets a finished or interrupted run back to `running` (an optimizer resuming it). */
  reopenRun(runId: string): void {
    labWork().reopenRun(this.#lab, runId);
  }

  /**
   * Records a provider batch `runId` submitted, as soon as the provider accepted it and before the
   * first poll: a run resumed after a crash finds it here and waits for it instead of paying again.
   */
  recordBatch(runId: string, batch: Omit<RunBatch, "status" | "createdAt">): void {
    labWork().recordBatch(this.#lab, runId, batch);
  }

  /** Marks a recorded batch as done with (its results were read) or failed as a whole. */
  finishBatch(runId: string, batchId: string, status: "completed" | "failed"): void {
    labWork().finishBatch(this.#lab, runId, batchId, status);
  }

  /**
   * The batches a run submitted, oldest first ([] for an unknown run). A row that does not read as
   * one (changed outside typelm) is a `ValidationError` naming the store, the run and the row.
   */
  batches(runId: string): RunBatch[] {
    return labWork().batches(this.#lab, runId);
  }

  // ---- readers -------------------------------------------------------------------------------

  /** The runs, newest first (by start time: a run copied in later from another lab takes its place by when it started). */
  runs(filter: RunFilter = {}): RunSummary[] {
    return labWork().runs(this.#lab, filter);
  }

  /** A run with its rows (evaluation) or trials (optimization), finished or not; undefined when unknown. */
  run(id: string): LabRun | undefined {
    return labWork().run(this.#lab, id);
  }

  /** The evaluated examples of a run recorded so far, by index ([] for an unknown run). */
  rows(runId: string): EvaluationRow[] {
    return labWork().rows(this.#lab, runId);
  }

  /** The trials of a run recorded so far, by index ([] for an unknown run). */
  trials(runId: string): Trial[] {
    return labWork().trials(this.#lab, runId);
  }
}

/**
 * The store runs are recorded in, per the global configuration: null when `c.lab === false`
 * (recording off), the PostgreSQL database of `c.lab = { url }` or `TYPELM_LAB_URL`, else the
 * configured or default file.
 */
export function labFromConfig(): Lab | null {
  return labWork().fromConfig();
}
