import { describeError, Instrumentation } from "../instrument/bus.js";
import type { ModelCall } from "../lm/usage-scope.js";
import type { Lab } from "../store/lab-store.js";
import type { EvaluationRow } from "../store/records.js";

/** Writes one evaluation run to the lab store as it goes; a no-op when recording is off. */
export interface RunRecorder {
  readonly runId: string | null;
  /** Writes the row, with its model calls when given (both engines keep them). */
  example(row: EvaluationRow, calls?: readonly ModelCall[] | null): void;
  /** On a PostgreSQL store, settles once every queued write of the run is in the database. */
  finish(end: { ok: boolean; score: number | null; summary: Record<string, unknown>; error?: string }): void | Promise<void>;
  /** The first store error met after the run started (writing then stops), or null. */
  readonly failure: string | null;
}

const OFF: RunRecorder = { runId: null, failure: null, example() {}, finish() {} };

/** Whether this recorder writes anything (the evaluation then keeps each example's model calls for it). */
export function isRecording(recorder: RunRecorder): boolean {
  return recorder !== OFF;
}

/**
 * Starts the run in `lab` (or the configured store) when `record` is true. `record: false` and
 * `configure((c) => { c.lab = false })` never load or open SQLite. A store that cannot be opened or
 * written fails here, before any model call; a row that fails to be written stops the recording of
 * rows (event `evaluation.record.error`) without losing the evaluation, and the run is then finished
 * as failed, with that error.
 */
export async function startRecording(
  record: boolean, lab: Lab | null | undefined, name: string, config: Record<string, unknown>,
): Promise<RunRecorder> {
  if (!record || lab === null) return OFF;
  const store = lab ?? (await import("../store/lab-store.js")).labFromConfig();
  if (store === null) return OFF;
  return recorderFor(store, store.startRun({ kind: "evaluation", name, config }), name);
}

/** The store an evaluation records into (the given one, else the configured one), or null when recording is off. */
export async function recordingStore(record: boolean, lab: Lab | null | undefined): Promise<Lab | null> {
  if (!record || lab === null) return null;
  return lab ?? (await import("../store/lab-store.js")).labFromConfig();
}

/** Goes on recording a run that is already in `store` (a resumed evaluation): it is set back to running. */
export function resumeRecording(store: Lab, runId: string, name: string): RunRecorder {
  store.reopenRun(runId);
  return recorderFor(store, runId, name);
}

function recorderFor(store: Lab, runId: string, name: string): RunRecorder {
  let failure: string | null = null;
  const attempt = (fn: () => void): void => {
    try {
      fn();
    } catch (error) {
      failure ??= describeError(error);
      Instrumentation.emit("evaluation.record.error", { runId, name, error: failure });
    }
  };
  return {
    runId,
    get failure() {
      return failure;
    },
    example(row, calls) {
      if (failure === null) attempt(() => store.recordExample(runId, row, calls ?? undefined));
    },
    finish(end) {
      if (store.engine === "postgresql") return finishQueued(end);
      finishNow(end);
    },
  };
  function finishNow({ ok, score, summary, error }: Parameters<RunRecorder["finish"]>[0]): void {
      // A run whose rows could not all be written is marked failed, so it is not read as complete.
      const incomplete = failure === null ? undefined : `recording stopped: ${failure}`;
      attempt(() => store.finishRun(runId, {
        status: ok && incomplete === undefined ? "completed" : "failed", score, summary, error: error ?? incomplete ?? null,
      }));
  }
  /** PostgreSQL: rows were queued; a row that failed to be written marks the run failed, as on SQLite. */
  async function finishQueued(end: Parameters<RunRecorder["finish"]>[0]): Promise<void> {
    const queued = store as Extract<Lab, { engine: "postgresql" }>;
    await queued.flush().catch((error: unknown) => attempt(() => { throw error; }));
    finishNow(end);
    await queued.flush().catch((error: unknown) => attempt(() => { throw error; }));
  }
}
