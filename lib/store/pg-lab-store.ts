import { nodeCrypto } from "../load-sync.js";
import { ValidationError } from "../errors.js";
import { shownUrl } from "../instrument/redact.js";
import { requireInstalled } from "../optional-packages.js";
import { checkRunFilter, checkStartRun, type RunBatch, finishParams, rowParams, trialParams, type FinishRun, type RunFilter, type StartRun } from "./lab-rows.js";
import type { PostgresLabEngine, Write } from "./pg-lab-engine.js";
import type { PgLabQueue, PostgresLabRun } from "./pg-lab-run.js";
import { loadPostgresLabRun, PG_FEATURE } from "./pg-url.js";
import type { EvaluationRow, LabRun, RunSummary, Trial } from "./records.js";
import { encodeCalls } from "./stored-calls.js";
import type { ModelCall } from "../lm/usage-scope.js";
import type { MediaValue } from "../media/media.js";
import type { MediaBlob } from "./media/refs.js";

/** Per database URL: hashes of texts known to be in lab_texts (written from this process), not sent again. */
const knownTexts = new Map<string, Set<string>>();
/** Per database URL: sha256 of media values known to be in its `media` table. */
const knownMedia = new Map<string, Set<string>>();

/**
 * PostgreSQL cannot store a NUL character in a text column: an id or a name holding one is refused
 * when given (a `ValidationError` saying what to do), rather than lost when the write fails later.
 */
function refuseNul(value: string, what: string, field: string): void {
  if (!value.includes("\u0000")) return;
  throw new ValidationError(
    `${what} ${JSON.stringify(value)} holds a NUL character (\\u0000), which PostgreSQL cannot store; ` +
      "give it one without that character, or record into a lab store file (c.lab = { path })",
    { field },
  );
}

/** An error's text as PostgreSQL can store it: each NUL character written as the six characters `\u0000`, so nothing is dropped. */
function visibleNul(text: unknown): unknown {
  return typeof text === "string" && text.includes("\u0000") ? text.split("\u0000").join("\\u0000") : text;
}

/**
 * The lab store on a team's PostgreSQL database. Writers keep the SQLite store's synchronous
 * signatures: what they are given is checked at once (a bad value is a `ValidationError`, as on
 * SQLite), then queued and sent in batches (one INSERT per batch of rows), in order, so a remote
 * database does not slow an evaluation. `flush()` waits for everything queued and rejects with the
 * first write that failed since the last flush. Readers return promises and see this handle's
 * queued writes (they flush first).
 */
export class PostgresLabStore {
  readonly engine = "postgresql" as const;
  /** The database's URL as given (may carry a password: never shown; see `path`). */
  readonly url: string;
  /** The database as messages show it: the URL without credentials. */
  readonly path: string;
  /** The writes queued and not sent yet (the loaded work takes them from here). */
  readonly #queue: PgLabQueue = { writes: [] };
  #closed = false;
  /** The sending, flushing and queries, loaded at the first read or write (with `pg` and the migrations). */
  #run: Promise<PostgresLabRun> | undefined;

  private constructor(url: string) {
    this.url = url;
    this.path = shownUrl(url);
  }

  /**
   * A store on the database at `url` (`postgres://...`). Throws the `ConfigurationError` with the
   * install line when `pg` is not installed; loads it and starts connecting (and migrating) in the
   * background; a failure to connect is raised by the first read or `flush()`.
   */
  static open(url: string): PostgresLabStore {
    requireInstalled("pg", PG_FEATURE);
    const store = new PostgresLabStore(url);
    store.#work().then((run) => run.engine.connect()).catch(() => undefined);
    return store;
  }

  // ---- writers (queued) ----------------------------------------------------------------------

  /** Records a new run as `running` and returns its id (the write is queued). */
  startRun(run: StartRun): string {
    const configJson = checkStartRun(run, "LabStore.startRun");
    refuseNul(run.name, "LabStore.startRun: the run's name", "name");
    const id = nodeCrypto().randomUUID();
    this.#enqueue({ op: "run", params: { id, kind: run.kind, name: run.name, started_at: new Date().toISOString(), config_json: configJson } });
    return id;
  }

  /**
   * Records one evaluated example of `runId`, with the model calls it made when given (queued; a
   * duplicate index makes the next `flush()` reject). The calls are kept as on SQLite: in the row,
   * each text a later call may send again once in lab_texts, written in the same burst as the row.
   */
  recordExample(runId: string, row: EvaluationRow, calls?: readonly ModelCall[]): void {
    if (typeof row.exampleId === "string") refuseNul(row.exampleId, `LabStore.recordExample: example ${row.index}'s id`, "exampleId");
    const media = new Map<string, MediaBlob>();
    const keep = (b: MediaBlob) => void (this.#known(knownMedia).has(b.sha256) || media.set(b.sha256, b));
    const params = rowParams(runId, row, keep);
    params.error = visibleNul(params.error);
    const texts: [string, string][] = [];
    if (calls !== undefined && calls.length > 0) {
      const known = this.#known(knownTexts);
      params.calls_json = encodeCalls(calls, (hash, text) => {
        if (!known.has(hash)) texts.push([hash, text]);
      }, keep);
    } else {
      params.calls_json = null;
    }
    this.#enqueue({ op: "row", runId, what: `example ${row.index}`, params, ...(texts.length > 0 ? { texts } : {}), ...(media.size > 0 ? { media: [...media.values()] } : {}) });
  }

  /** The model calls recorded with one example of a run, in the order they were answered ([] when none). */
  async calls(runId: string, index: number): Promise<ModelCall[]> {
    return (await this.#reader()).calls(runId, index);
  }

  /** Records one finished optimizer trial of `runId` (queued, as `recordExample`). */
  recordTrial(runId: string, trial: Trial): void {
    const media = new Map<string, MediaBlob>();
    const params = trialParams(runId, trial, (b) => void media.set(b.sha256, b));
    params.error = visibleNul(params.error);
    this.#enqueue({ op: "trial", runId, what: `trial ${trial.index}`, params, ...(media.size > 0 ? { media: [...media.values()] } : {}) });
  }

  /** Marks the run completed, failed or stopped; an unknown run makes the next `flush()` reject. */
  finishRun(runId: string, end: FinishRun): void {
    const params = finishParams(runId, end);
    params.error = visibleNul(params.error);
    this.#enqueue({ op: "finish", runId, params });
  }

  /** Sets a finished or interrupted run back to `running` (queued; an unknown run makes the next `flush()` reject). */
  reopenRun(runId: string): void {
    this.#enqueue({ op: "reopen", runId });
  }

  /**
   * Records a provider batch `runId` submitted (queued; evaluations flush it before the first poll,
   * so a run resumed after a crash finds it and waits for it instead of paying again).
   */
  recordBatch(runId: string, batch: Omit<RunBatch, "status" | "createdAt">): void {
    this.#enqueue({
      op: "batch", runId, what: `batch ${batch.batchId}`,
      params: [runId, batch.batchId, batch.provider, batch.model, batch.endpoint, batch.round, JSON.stringify(batch.customIds), new Date().toISOString()],
    });
  }

  /** Marks a recorded batch as done with (its results were read) or failed as a whole (queued). */
  finishBatch(runId: string, batchId: string, status: "completed" | "failed"): void {
    this.#enqueue({ op: "finishBatch", runId, params: [status, runId, batchId] });
  }

  /** The media value a row or call refers to (`{"$media": sha256, ...}`), as an `Image`, `Audio` or `Document`; undefined when not stored. */
  async media(sha256: string): Promise<MediaValue | undefined> {
    return (await this.#reader()).media(sha256);
  }

  /** The batches a run submitted, oldest first ([] for an unknown run). */
  async batches(runId: string): Promise<RunBatch[]> {
    return (await this.#reader()).batches(runId);
  }

  /** Waits until every queued write is in the database; rejects with the first that failed since the last flush. */
  async flush(): Promise<void> {
    return (await this.#work()).flush();
  }

  /** Flushes, then stops this handle (later writes and reads raise an error). The shared pool stays open. */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.#closed = true;
    }
  }

  // ---- readers -------------------------------------------------------------------------------

  /** The runs, newest first. */
  async runs(filter: RunFilter = {}): Promise<RunSummary[]> {
    checkRunFilter(filter);
    return (await this.#reader()).runs(filter);
  }

  /** A run with its rows or trials, finished or not; undefined when unknown. */
  async run(id: string): Promise<LabRun | undefined> {
    return (await this.#reader()).run(id);
  }

  /** The evaluated examples of a run recorded so far, by index ([] for an unknown run). */
  async rows(runId: string): Promise<EvaluationRow[]> {
    return (await this.#reader()).rows(runId);
  }

  /** The trials of a run recorded so far, by index ([] for an unknown run). */
  async trials(runId: string): Promise<Trial[]> {
    return (await this.#reader()).trials(runId);
  }

  // ---- internals -----------------------------------------------------------------------------

  #open(): void {
    if (this.#closed) {
      throw new ValidationError(`The lab store at ${this.path} is closed: open it again with LabStore.open(url) before reading or recording runs`);
    }
  }

  #work(): Promise<PostgresLabRun> {
    return (this.#run ??= loadPostgresLabRun().then(({ PostgresLabRun }) =>
      new PostgresLabRun(this.url, this.path, this.#queue, this.#known(knownTexts), this.#known(knownMedia))));
  }

  /** The hashes (of texts, or of media) known to be in this database, per URL. */
  #known(per: Map<string, Set<string>>): Set<string> {
    let known = per.get(this.url);
    if (known === undefined) {
      known = new Set();
      per.set(this.url, known);
    }
    return known;
  }

  /** The engine to read with, once this handle's own queued writes are in (a read sees them). */
  async #reader(): Promise<PostgresLabEngine> {
    this.#open();
    const run = await this.#work();
    await run.settle();
    return run.engine;
  }

  #enqueue(write: Write): void {
    this.#open();
    this.#queue.writes.push(write);
    // Writes made in one turn (a burst of finished examples) go out together.
    if (this.#queue.writes.length === 1) setImmediate(() => void this.#work().then((run) => run.drain(), () => undefined));
  }
}

/**
 * `PostgresLabStore.open(url)`: the way the rest of the library opens a team's lab. The bundle loads
 * this module at the first call (scripts/deferred-modules.mjs), and an importer there can take only its
 * functions, so they import the class as a type and open the store with this.
 */
export function openPostgresLabStore(url: string): PostgresLabStore {
  return PostgresLabStore.open(url);
}
