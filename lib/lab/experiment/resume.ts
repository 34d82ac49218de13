import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { canonicalJson } from "../../canonical-json.js";
import { Evaluation, type EvaluateArgs } from "../../evaluate/evaluation.js";
import type { EvaluationReport } from "../../evaluate/report.js";
import type { MetricSpec } from "../../evaluate/scoring.js";
import { describeError, inSpan, Instrumentation } from "../../instrument/bus.js";
import { nodeCrypto } from "../../load-sync.js";
import type { Module } from "../../module.js";
import type { FewShotExample } from "../../prompt/few-shot.js";
import type { Lab } from "../../store/lab-store.js";

// How `typelm run --batch` runs an evaluation so that running the same command again after a crash
// (kill -9, a power cut) pays nothing twice: while a batch evaluation runs, a marker file beside the
// lab store (`.typelm/running/<runId>.json`) names its run, its process (pid and host) and what
// makes it this command's evaluation (a hash of the model, the experiment file, the data, seed,
// limit, the program and the metrics). The marker is removed when the evaluation ends. A marker
// whose process is gone is an interrupted run: the same command resumes it under the same run id
// (`Evaluation.evaluate({ resume })`: its rows are kept, its submitted batches waited for); an
// interrupted run of the same name that another command started is marked failed, so no run says
// "running" for ever.

/** One evaluation of an experiment run: what `Evaluation.evaluate` needs, and what identifies the command. */
export interface RunEvaluation {
  /** The run's name in the lab store (experiment, baseline/optimized, model when several). */
  name: string;
  /** The lab store the run is recorded in: the working folder's file or a team's lab on PostgreSQL. */
  lab: Lab;
  /** The folder of the marker files (default: `running` beside the lab store's file). */
  running?: string;
  /** Through the provider's batch service (`--batch`); without it the evaluation runs as usual. */
  batch: boolean;
  /** Progress lines (the command line prints them on standard error). */
  log: (line: string) => void;
  moduleInstance: Module;
  testExamples: readonly FewShotExample[];
  metrics: readonly MetricSpec[];
  /** What else makes two runs the same command's: model id, experiment file hash, data files, seed, limit. */
  command: Record<string, unknown>;
  /** Merged into the run's recorded config (the experiment and dataset a gate checks). */
  config?: Record<string, unknown>;
}

/** A marker file's content. */
interface Marker {
  runId: string;
  name: string;
  /** sha256 of the command's identity (see `identityOf`). */
  identity: string;
  pid: number;
  host: string;
  startedAt: string;
}

/** Runs the evaluation; with `batch`, resumes this command's interrupted run and prints batch progress lines. */
export async function evaluateInRun(r: RunEvaluation): Promise<EvaluationReport> {
  const args = { moduleInstance: r.moduleInstance, testExamples: r.testExamples, metrics: r.metrics };
  if (!r.batch) return evaluateWith(new Evaluation({ name: r.name, lab: r.lab }), args, r.config);
  const markers = new Markers(r.running ?? join(dirname(r.lab.path), "running"));
  const identity = identityOf(r);
  const resume = await takeInterrupted(markers, r, identity);
  let runId: string | undefined = resume;
  const offStart = Instrumentation.subscribe("evaluation.start", (event) => {
    if (runId !== undefined || event.payload["name"] !== r.name) return;
    runId = String(event.payload["runId"]);
    try {
      markers.hold(runId, r.name, identity);
    } catch (error) {
      r.log(`${r.name}: could not write ${markers.fileOf(runId)} (${describeError(error)}); if this process dies, running the command again will not resume run ${runId}`);
    }
  });
  const offBatch = Instrumentation.subscribe("evaluation.batch", (event) => {
    if (runId !== undefined && event.payload["runId"] === runId) r.log(progressLine(r.name, event.payload));
  });
  let ended = false;
  try {
    const report = await evaluateWith(new Evaluation({ name: r.name, lab: r.lab, batch: true }), { ...args, ...(resume === undefined ? {} : { resume }) }, r.config);
    ended = true;
    return report;
  } catch (error) {
    // A batch that may still be running at the provider (maxWait, the network) keeps the marker:
    // running the command again waits for it instead of paying for it twice.
    ended = runId === undefined || !(await stillSubmitted(r.lab, runId));
    throw error;
  } finally {
    offStart();
    offBatch();
    if (runId !== undefined && ended) markers.release(runId);
  }
}

/** `evaluation.evaluate(args)`, with `config` merged into the run's recorded config. */
function evaluateWith(evaluation: Evaluation, args: EvaluateArgs, config: Record<string, unknown> | undefined): Promise<EvaluationReport> {
  if (config === undefined) return evaluation.evaluate(args);
  return inSpan(async () => (await import("../../evaluate/evaluation-run.js")).evaluateRun(evaluation, args, config));
}

/**
 * The run id of this command's interrupted evaluation, claimed for this process, or undefined. An
 * interrupted run of the same name with another identity (the data, model or program changed) is
 * marked failed instead: its rows belong to other inputs.
 */
async function takeInterrupted(markers: Markers, r: RunEvaluation, identity: string): Promise<string | undefined> {
  const found = markers.list().filter((m) => m.marker.name === r.name && processGone(m.marker))
    .sort((a, b) => b.marker.startedAt.localeCompare(a.marker.startedAt));
  if (found.length === 0) return undefined;
  // `await` serves both engines (a team's lab on PostgreSQL reads asynchronously).
  const runs = new Map((await r.lab.runs({ kind: "evaluation", name: r.name })).map((x) => [x.id, x]));
  let taken: string | undefined;
  for (const { file, marker } of found) {
    const run = runs.get(marker.runId);
    const gone = `its process (pid ${marker.pid} on ${marker.host}) ended before it finished`;
    if (run === undefined || run.status === "completed") {
      markers.remove(file);
    } else if (taken === undefined && marker.identity === identity && markers.claim(file, marker)) {
      taken = marker.runId;
      r.log(`${r.name}: resuming run ${marker.runId} (${gone}); its recorded rows are kept and its submitted batches waited for`);
    } else if (markers.claim(file, marker)) {
      if (run.status === "running") {
        r.lab.finishRun(marker.runId, { status: "failed", error: `interrupted: ${gone}` });
        if (r.lab.engine === "postgresql") await r.lab.flush();
      }
      markers.release(marker.runId);
      r.log(`${r.name}: run ${marker.runId} was interrupted (${gone}) and ran other inputs; marked failed, this run starts afresh`);
    }
  }
  return taken;
}

/** Whether the run has a batch that was submitted and not read (false when its batches cannot be read). */
async function stillSubmitted(lab: Lab, runId: string): Promise<boolean> {
  try {
    return (await lab.batches(runId)).some((b) => b.status === "submitted");
  } catch {
    return false;
  }
}

/** What makes an evaluation this command's: the command's inputs, the run's name, the program's state and the metrics. */
function identityOf(r: RunEvaluation): string {
  const metrics = r.metrics.map((m) => (typeof m === "string" ? m : `[function ${(m as { name?: string }).name ?? ""}]`));
  const text = canonicalJson({ ...r.command, name: r.name, program: r.moduleInstance.dumpState(), metrics, examples: r.testExamples.length });
  return nodeCrypto().createHash("sha256").update(text).digest("hex");
}

/** True when the marker's process ended: same host, and no process with its pid. */
function processGone(marker: Marker): boolean {
  if (marker.host !== hostname() || marker.pid === process.pid) return false;
  try {
    process.kill(marker.pid, 0);
    return false;
  } catch (error) {
    // EPERM: a process with that pid exists (another user's).
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** `name: batch <id> (round r) <status>: c of t answered, f failed; waiting 3 min`. */
function progressLine(name: string, p: Record<string, unknown>): string {
  const counts = (p["counts"] ?? {}) as { total?: number; completed?: number; failed?: number };
  const waited = Number(p["waited"] ?? 0);
  const since = waited < 120 ? `${waited} s` : `${Math.round(waited / 60)} min`;
  return `${name}: batch ${String(p["batchId"])} (round ${String(p["round"])}) ${String(p["status"])}: ` +
    `${counts.completed ?? 0} of ${counts.total ?? 0} answered, ${counts.failed ?? 0} failed; waiting ${since}`;
}

/** The marker files of one lab store's folder. */
class Markers {
  constructor(private readonly dir: string) {}

  /** Every readable marker (a file that does not parse as one is left alone). */
  list(): { file: string; marker: Marker }[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names.filter((n) => /^[\w-]+\.json$/.test(n)).flatMap((n) => {
      const file = join(this.dir, n);
      try {
        const marker = JSON.parse(readFileSync(file, "utf8")) as Marker;
        const ok = typeof marker.runId === "string" && `${marker.runId}.json` === n && typeof marker.name === "string"
          && typeof marker.identity === "string" && Number.isInteger(marker.pid) && typeof marker.host === "string" && typeof marker.startedAt === "string";
        return ok ? [{ file, marker }] : [];
      } catch {
        return [];
      }
    });
  }

  /** Writes this process's marker for `runId`. */
  hold(runId: string, name: string, identity: string): void {
    mkdirSync(this.dir, { recursive: true });
    const marker: Marker = { runId, name, identity, pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
    writeFileSync(this.fileOf(runId), JSON.stringify(marker));
  }

  /**
   * Takes over an interrupted run's marker: moving the file away is atomic, so of two processes
   * claiming it at once only one succeeds; the winner writes its own marker in its place.
   */
  claim(file: string, marker: Marker): boolean {
    const moved = `${file}.${process.pid}`;
    try {
      renameSync(file, moved);
    } catch {
      return false;
    }
    // Another process may have claimed it between our reading and the move: then the file moved is
    // that process's new marker, which goes back untouched.
    let same = false;
    try {
      const now = JSON.parse(readFileSync(moved, "utf8")) as Marker;
      same = now.pid === marker.pid && now.startedAt === marker.startedAt;
    } catch {
      same = false;
    }
    if (!same) {
      renameSync(moved, file);
      return false;
    }
    this.hold(marker.runId, marker.name, marker.identity);
    rmSync(moved, { force: true });
    return true;
  }

  fileOf(runId: string): string {
    return join(this.dir, `${runId}.json`);
  }

  release(runId: string): void {
    this.remove(this.fileOf(runId));
  }

  remove(file: string): void {
    rmSync(file, { force: true });
  }
}
