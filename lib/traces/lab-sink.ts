/**
 * Traces into the configured lab (`c.lab`: the SQLite file or a team's PostgreSQL): one run of kind
 * `traces` per module and UTC day, created at its first trace (or found, when another process or an
 * earlier one created it), and a row per trace: `example_id` is the trace id, `prediction` the
 * outputs, the model calls kept as evaluation rows keep them, `details.trace.at` the start time.
 * Redaction is the store's: registered secrets are masked in every JSON column and call text.
 */
import { configuredLabUrl, configuredStorePath, globalConfig } from "../config.js";
import { openStoreSync } from "../store/db.js";
import { labFromConfig, type Lab } from "../store/lab-store.js";
import type { EvaluationRow } from "../store/records.js";
import type { TraceRecord } from "../trace-call.js";
import type { TraceSink } from "./recorder.js";
import { labQuery } from "./sql.js";

/** Rows per millisecond of the day an index leaves room for (the index stays a 32-bit integer). */
const SLOTS = 20;

interface DayRun {
  runId: string;
  /** The last index written into the run by this process. */
  last: number;
}

/** The UTC day of a time, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The name of the run of `module`'s traces on `day`. */
export function traceRunName(module: string, day: string): string {
  return `${module} ${day}`;
}

/** A sink writing into the lab `c.lab` names at each write (reopened when the configuration changes). */
export function labSink(): TraceSink {
  let key: string | undefined;
  let lab: Lab | null = null;
  let runs = new Map<string, DayRun>();
  return {
    async write(batch) {
      if (globalConfig.lab === false) return;
      const url = configuredLabUrl();
      const now = url ?? `file:${configuredStorePath()}`;
      if (now !== key || lab === null) {
        lab = labFromConfig();
        key = now;
        runs = new Map();
      }
      if (lab === null) return;
      await writeBatch(lab, runs, batch);
    },
  };
}

async function writeBatch(lab: Lab, runs: Map<string, DayRun>, batch: readonly TraceRecord[]): Promise<void> {
  const targets: DayRun[] = [];
  for (const record of batch) targets.push(await dayRun(lab, runs, record));
  const write = () => batch.forEach((record, i) => {
    const run = targets[i]!;
    const dayStart = Date.parse(`${utcDay(record.at)}T00:00:00Z`);
    run.last = Math.max(run.last + 1, (record.at - dayStart) * SLOTS);
    lab.recordExample(run.runId, row(record, run.last), record.calls);
  });
  if (lab.engine === "sqlite") {
    // One transaction for the batch (the store's statements run on the same shared connection).
    openStoreSync(lab.path).transaction(write)();
  } else {
    write();
    await lab.flush();
  }
}

async function dayRun(lab: Lab, runs: Map<string, DayRun>, record: TraceRecord): Promise<DayRun> {
  const day = utcDay(record.at);
  const key = `${record.module}\u0000${day}`;
  let found = runs.get(key);
  if (found !== undefined) return found;
  const name = traceRunName(record.module, day);
  const [existing] = await lab.runs({ kind: "traces", name, limit: 1 });
  if (existing !== undefined) {
    const [last] = await labQuery<{ m: number | null }>(lab, "SELECT max(idx) AS m FROM lab_rows WHERE run_id = ?", [existing.id]);
    found = { runId: existing.id, last: last?.m ?? -1 };
  } else {
    found = { runId: lab.startRun({ kind: "traces", name, config: { module: record.module, day } }), last: -1 };
  }
  runs.set(key, found);
  return found;
}

function row(record: TraceRecord, index: number): EvaluationRow {
  return {
    index, exampleId: record.traceId, inputs: record.inputs, expected: {}, prediction: record.outputs, scores: {},
    error: record.error, durationMs: record.durationMs, inputTokens: record.inputTokens, outputTokens: record.outputTokens,
    cost: record.cost, details: { trace: { at: new Date(record.at).toISOString(), module: record.module } },
  };
}
