import { Instrumentation } from "../instrument/bus.js";
import type { LabStore } from "../store/lab-store.js";
import type { EvaluationRow } from "../store/records.js";

/** Writes one evaluation run to the lab store as it goes; a no-op when recording is off. */
export interface RunRecorder {
  readonly runId: string | null;
  example(row: EvaluationRow): void;
  finish(end: { ok: boolean; score: number | null; summary: Record<string, unknown>; error?: string }): void;
  /** The first store error met after the run started (writing then stops), or null. */
  readonly failure: string | null;
}

const OFF: RunRecorder = { runId: null, failure: null, example() {}, finish() {} };

/**
 * Starts the run in `lab` (or the configured store) when `record` is true. `record: false` and
 * `configure((c) => { c.lab = false })` never load or open SQLite. A store that cannot be opened or
 * written fails here, before any model call; a write that fails later stops the recording and is
 * reported (event `evaluation.record.error`) without losing the evaluation.
 */
export async function startRecording(
  record: boolean, lab: LabStore | null | undefined, name: string, config: Record<string, unknown>,
): Promise<RunRecorder> {
  if (!record || lab === null) return OFF;
  const store = lab ?? (await import("../store/lab-store.js")).labFromConfig();
  if (store === null) return OFF;
  const runId = store.startRun({ kind: "evaluation", name, config });
  let failure: string | null = null;
  const guard = (fn: () => void): void => {
    if (failure !== null) return;
    try {
      fn();
    } catch (error) {
      failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      Instrumentation.emit("evaluation.record.error", { runId, name, error: failure });
    }
  };
  return {
    runId,
    get failure() {
      return failure;
    },
    example(row) {
      guard(() => store.recordExample(runId, row));
    },
    finish({ ok, score, summary, error }) {
      guard(() => store.finishRun(runId, { status: ok ? "completed" : "failed", score, summary, error: error ?? null }));
    },
  };
}
