// `typelm run <file> --watch`: runs the experiment, then runs it again whenever the experiment file, a
// file of the user's it imports (transitively) or its dataset changes, and prints each new run against
// the previous good one. Each run is the typelm command itself in a child process (the same command
// line, marked as a watched run): an edited helper file is loaded afresh (Node's module cache would
// keep the old one in this process), and a run behaves exactly as `typelm run` does. The child tells
// this process, over its IPC channel, each lab run it starts and the dataset folder it reads. A run
// that fails has printed its error; the previous good run stays the one compared with. A change while
// a run is going stops it and starts again. Ctrl-C (SIGINT), SIGTERM or SIGHUP stops the child, marks
// the lab runs it left `running` as failed ("interrupted: ..."), as the lab does for a run whose
// process died, and exits 0, as `typelm view` does.
import { fork, type ChildProcess } from "node:child_process";
import { realpathSync } from "node:fs";
import { basename, isAbsolute, relative, resolve } from "node:path";
import { globalConfig } from "../../config.js";
import { ConfigurationError } from "../../errors.js";
import { Instrumentation } from "../../instrument/bus.js";
import { LabStore, type Lab } from "../../store/lab-store.js";
import type { EvaluationRun } from "../../store/records.js";
import { npmLaunchers, whenEnded } from "../../launcher.js";
import { loadExperimentFile, type LoadedExperiment } from "../experiment/load.js";
import { printable } from "../terminal.js";
import { ChangeWatcher } from "./files.js";
import { importGraph } from "./graph.js";
import { shortId, watchDifference } from "./diff.js";

/** Set in a watched run's environment: the child runs once and reports to the watching process. */
const CHILD = "TYPELM_WATCHED_RUN";

/** How `typelm run --watch` is called (from the command line's `run`). */
export interface WatchRunOptions {
  /** The experiment file as given. */
  file: string;
  /** The whole command line: each run is `typelm` with it again. */
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  io: { stdout: (text: string) => void; stderr: (text: string) => void };
  /** In the child: runs the loaded experiment once as `typelm run` does and returns its exit code. */
  runOnce: (experiment: LoadedExperiment) => Promise<number>;
  /** Quiet time after a file event before a run starts (ms, default 300). */
  debounceMs?: number;
}

/** Where a lab run is recorded: the SQLite file or a team's PostgreSQL database. */
type LabLocation = { path: string } | { url: string };

/** What a watched run tells the watching process. */
type ChildMessage =
  | { type: "run"; kind: "evaluation" | "optimization"; runId: string; name: string; lab: LabLocation }
  | { type: "dataset"; folder: string | null };

/** `typelm run <file> --watch`: watches until stopped (exit 0); in a watched run's child, runs once. */
export async function watchRun(options: WatchRunOptions): Promise<number> {
  if (options.env[CHILD] === "1" && typeof process.send === "function") return watchedRun(options);
  return new RunWatcher(options).start();
}

/** The child's side: one run, reporting its lab runs and dataset folder as they become known. */
async function watchedRun(options: WatchRunOptions): Promise<number> {
  // The channel must not keep this process alive: a run that waits for nothing ends as `typelm run` does.
  process.channel?.unref();
  // The watching process has gone (killed with SIGKILL): a run nobody watches any more stops too.
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"));
  const send = (message: ChildMessage) => {
    try {
      // The callback takes a failed send (the watching process gone) instead of an 'error' event.
      process.send?.(message, undefined, undefined, () => undefined);
    } catch {
      // The watching process has gone: the run goes on alone.
    }
  };
  const labNow = (): LabLocation => {
    const lab = globalConfig.lab;
    const given = typeof lab === "object" && lab !== null ? lab : {};
    return given.url !== undefined ? { url: given.url } : { path: resolve(options.cwd, given.path ?? ".typelm/lab.sqlite") };
  };
  const offs = [
    Instrumentation.subscribe("evaluation.start", (event) => {
      const { runId, name } = event.payload as { runId?: unknown; name?: unknown };
      if (typeof runId !== "string") return;
      send({ type: "run", kind: "evaluation", runId, name: String(name), lab: labNow() });
      // Printed here, in order with the run's own lines: where the viewer shows this run as it goes.
      options.io.stderr(`typelm run --watch: ${printable(String(name))}: run ${runId}; typelm view shows it live at /runs/${shortId(runId)}\n`);
    }),
    Instrumentation.subscribe("optimizer.start", (event) => {
      const { runId, optimizer } = event.payload as { runId?: unknown; optimizer?: unknown };
      if (typeof runId === "string") send({ type: "run", kind: "optimization", runId, name: String(optimizer), lab: labNow() });
    }),
  ];
  try {
    const loaded = await loadExperimentFile(options.file, options.cwd);
    send({ type: "dataset", folder: datasetFolder(loaded) });
    return await options.runOnce(loaded);
  } finally {
    for (const off of offs) off();
  }
}

/** The dataset folder an experiment reads, when it names one (a bundled dataset or inline data: none). */
function datasetFolder(loaded: LoadedExperiment): string | null {
  const source = loaded.definition.dataset;
  if (typeof source !== "string") return null;
  const looksLikePath = isAbsolute(source) || source.startsWith(".") || /[\\/]/.test(source);
  return looksLikePath ? resolve(loaded.dir, source) : null;
}

/** A lab run the current child started. */
interface StartedRun {
  kind: "evaluation" | "optimization";
  id: string;
  name: string;
  lab: LabLocation;
}

/** The watching process: runs, watches, compares, until a signal stops it. */
class RunWatcher {
  readonly #o: WatchRunOptions;
  readonly #file: string;
  readonly #bin: string;
  readonly #watcher: ChangeWatcher;
  #child: ChildProcess | undefined;
  #previous = new Map<string, EvaluationRun>();
  #datasets: string[] = [];
  #pending: string[] | undefined;
  #wake: (() => void) | undefined;
  #stopping = false;
  #runs = 0;

  constructor(options: WatchRunOptions) {
    this.#o = options;
    this.#file = resolve(options.cwd, options.file);
    this.#bin = commandFile();
    this.#watcher = new ChangeWatcher((changed) => this.#changed(changed), options.debounceMs ?? 300);
  }

  async start(): Promise<number> {
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
    const stop = (signal: NodeJS.Signals) => this.#stop(signal);
    for (const s of signals) process.on(s, stop);
    // Started by npx or npm run (which signal only the shell they ran), it also stops once they have ended.
    const unwatch = whenEnded(npmLaunchers(this.#o.env), () => this.#stop("SIGTERM"));
    try {
      let reason: string[] | undefined;
      while (!this.#stopping) {
        await this.#runOnce(reason);
        if (this.#stopping) break;
        if (this.#pending === undefined) await new Promise<void>((wake) => { this.#wake = wake; });
        this.#wake = undefined;
        reason = this.#pending;
        this.#pending = undefined;
      }
    } finally {
      unwatch();
      this.#watcher.close();
      for (const s of signals) process.off(s, stop);
    }
    this.#say("stopped");
    return 0;
  }

  #say(line: string): void {
    this.#o.io.stderr(`typelm run --watch: ${printable(line)}\n`);
  }

  #changed(changed: string[]): void {
    if (this.#stopping) return;
    this.#pending = [...new Set([...(this.#pending ?? []), ...changed])];
    // A run of files that have changed since is of no use: it is stopped, and the loop starts the next.
    this.#child?.kill("SIGTERM");
    this.#wake?.();
  }

  #stop(signal: NodeJS.Signals): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#watcher.close();
    this.#child?.kill(signal === "SIGINT" ? "SIGINT" : "SIGTERM");
    this.#wake?.();
  }

  async #runOnce(reason: string[] | undefined): Promise<void> {
    this.#runs++;
    if (reason !== undefined) this.#say(`${reason.map((f) => this.#shown(f)).join(", ")} changed; running again (run ${this.#runs})`);
    // The files as this run reads them: a change from here on is a change after it.
    this.#watcher.watch({ files: importGraph(this.#file), folders: this.#datasets });
    this.#watcher.snapshot();
    const started: StartedRun[] = [];
    const child = fork(this.#bin, [...this.#o.argv], {
      cwd: this.#o.cwd, env: { ...this.#o.env, [CHILD]: "1" }, stdio: ["inherit", "inherit", "inherit", "ipc"],
    });
    this.#child = child;
    child.on("message", (message: ChildMessage) => {
      if (message?.type === "run") {
        started.push({ kind: message.kind, id: message.runId, name: message.name, lab: message.lab });
      } else if (message?.type === "dataset") {
        this.#datasets = message.folder === null ? [] : [message.folder];
      }
    });
    const { code, how } = await ended(child, () => this.#stopping || this.#pending !== undefined);
    this.#child = undefined;
    const interrupted = this.#stopping ? "typelm run --watch was stopped" : this.#pending !== undefined ? "a watched file changed and typelm run --watch started again" : undefined;
    // Runs the child left `running` (stopped, or it died): failed, with why, so none says running for ever.
    await this.#markInterrupted(started, interrupted ?? `its process ended with ${how}`);
    if (interrupted === undefined) {
      if (code === 0) await this.#compare(started);
      else this.#say(`the run failed (${how}); ${this.#previous.size > 0 ? "the previous good run stays the one compared with" : "nothing to compare with yet"}`);
    }
    if (this.#stopping) return;
    // Imports may have been added or removed: the graph is read again after every run.
    this.#watcher.watch({ files: importGraph(this.#file), folders: this.#datasets });
    if (this.#pending === undefined) this.#say(`watching ${this.#watcher.files().length} files (the experiment, its imports and its data); Ctrl-C stops`);
  }

  /** Prints the new run's evaluations against the previous good run's, and keeps them as the next one's baseline. */
  async #compare(started: readonly StartedRun[]): Promise<void> {
    const evaluations = started.filter((r) => r.kind === "evaluation");
    const now: EvaluationRun[] = [];
    try {
      for (const r of evaluations) {
        const run = await withLab(r.lab, (lab) => lab.run(r.id));
        if (run?.kind === "evaluation") now.push(run);
      }
    } catch (error) {
      this.#say(`could not read the run from the lab store (${error instanceof Error ? error.message : String(error)}); nothing compared`);
      return;
    }
    if (now.length === 0) {
      this.#say("the run recorded no evaluation in the lab store (is recording off?); nothing compared");
      return;
    }
    if (this.#previous.size > 0) {
      this.#o.io.stdout(`\nRun ${this.#runs} against the previous good run:\n${watchDifference(this.#previous, now).join("\n")}\n\n`);
    }
    this.#previous = new Map(now.map((r) => [r.name, r]));
  }

  async #markInterrupted(started: readonly StartedRun[], why: string): Promise<void> {
    const byLab = new Map<string, StartedRun[]>();
    for (const r of started) {
      const key = JSON.stringify(r.lab);
      byLab.set(key, [...(byLab.get(key) ?? []), r]);
    }
    for (const runs of byLab.values()) {
      try {
        const marked = await withLab(runs[0]!.lab, async (lab) => {
          const running = new Set((await lab.runs({ status: "running" })).map((r) => r.id));
          const left = runs.filter((r) => running.has(r.id));
          for (const r of left) lab.finishRun(r.id, { status: "failed", error: `interrupted: ${why}` });
          return left;
        });
        for (const r of marked) this.#say(`${r.name}: run ${shortId(r.id)} did not finish (${why}); marked failed`);
      } catch (error) {
        this.#say(`could not mark the unfinished runs failed in the lab store (${error instanceof Error ? error.message : String(error)})`);
      }
    }
  }

  #shown(file: string): string {
    const rel = relative(this.#o.cwd, file);
    return rel.startsWith("..") || isAbsolute(rel) ? file : rel;
  }
}

/** Opens the lab, runs `work` on it, and closes it (a PostgreSQL lab's queued writes flushed first). */
async function withLab<T>(location: LabLocation, work: (lab: Lab) => Promise<T> | T): Promise<T> {
  const lab: Lab = "url" in location ? LabStore.open({ url: location.url }) : LabStore.open(location.path);
  try {
    const result = await work(lab);
    if (lab.engine === "postgresql") await lab.flush();
    return result;
  } finally {
    await lab.close();
  }
}

/**
 * Resolves with the child's exit code (null when a signal ended it) and how it ended ("exit code 1",
 * "signal SIGTERM") once it has ended and its messages are read. `stopped()` says it was asked to stop: if it has not ended 10 s after that, it is killed.
 */
function ended(child: ChildProcess, stopped: () => boolean): Promise<{ code: number | null; how: string }> {
  const exit = new Promise<{ code: number | null; how: string }>((done) => {
    child.once("exit", (code, signal) => done({ code, how: signal !== null ? `signal ${signal}` : `exit code ${code}` }));
    child.once("error", (error) => done({ code: null, how: `an error: ${error.message}` }));
  });
  const disconnected = new Promise<void>((done) => {
    if (!child.connected) done();
    else child.once("disconnect", () => done());
  });
  const guard = setInterval(() => {
    if (!stopped()) return;
    clearInterval(guard);
    setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
  }, 100);
  return Promise.all([exit, disconnected]).then(([end]) => end).finally(() => clearInterval(guard));
}

/** The typelm command's own file, which each run starts again. */
function commandFile(): string {
  const bin = process.argv[1];
  let real: string | undefined;
  try {
    real = bin === undefined ? undefined : realpathSync(bin);
  } catch {
    real = undefined;
  }
  if (real === undefined || !/^(bin\.js|typelm(\.js)?)$/.test(basename(real))) {
    throw new ConfigurationError("typelm run --watch starts the typelm command again for each run: run it as the typelm command (npx typelm run <file> --watch)");
  }
  return real;
}
