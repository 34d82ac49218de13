import { AsyncLocalStorage } from "node:async_hooks";
import { ConfigurationError, TypelmError, ValidationError } from "../errors.js";
import { canonicalJson } from "../canonical-json.js";
import { describeError, Instrumentation } from "../instrument/bus.js";
import { emptyUsage, trackUsage, type UsageTotals } from "../lm/usage-scope.js";
import { labFromConfig, type Lab } from "../store/lab-store.js";
import type { LabRun, OptimizationRun, Trial } from "../store/records.js";
import { trialProgress, type TrialProgress, type TrialProgressOptions } from "./progress.js";
import type { IdentifiedExample } from "./examples.js";
import { nodeCrypto } from "../load-sync.js";

/** What a step of an optimizer produces; the recorder adds index, usage, duration and error. */
export type TrialDraft = Pick<Trial, "kind" | "choices" | "instructions" | "demoIds"> &
  Partial<Pick<Trial, "score" | "exampleScores" | "data" | "parents" | "reused">>;

export type TrialErrorPartial = Partial<Pick<Trial, "exampleScores" | "reused" | "data" | "instructions" | "demoIds" | "parents">>;

/**
 * An error that ends a trial but still has something to record: a step that throws it is recorded
 * as failed (score null, `error` set) with these per-example scores, reused count, data, and (when
 * given) instruction texts, demo ids and parents (e.g.
 * `scoreOn` when more than half of the examples failed).
 */
export class TrialError extends TypelmError {
  /** What the failed trial records besides its error (the step may add to it before it rethrows). */
  readonly partial: TrialErrorPartial;

  constructor(message: string, partial: TrialErrorPartial, options?: { cause?: unknown }) {
    super(message, options);
    this.partial = partial;
  }
}

/** The status a run ends with: `stopped` when `maxCost` ended it early (the best so far is returned). */
export type EndStatus = "completed" | "failed" | "stopped";

export interface RecorderOptions {
  /** What `budgetSpent` counts when the optimizer keeps its own tally (GEPA: metric calls); else LM calls. */
  spent?: () => number;
  /** The terminal progress bar, fed each trial (recorded or replayed) until the run finishes. */
  bar?: Omit<TrialProgressOptions, "label">;
}

const experimentScope = new AsyncLocalStorage<string>();

/**
 * Runs `fn` with every optimization run started inside it recorded as part of the named experiment
 * (`config.experiment`), so the run lists are able to say which experiment an optimizer run served.
 */
export function inExperiment<T>(experiment: string, fn: () => T): T {
  return experimentScope.run(experiment, fn);
}

/**
 * One optimization run as it is recorded: each trial goes to the lab store (one short write) and to
 * `run.trials` the moment it finishes, with an `optimizer.trial` event. On resume, the trials already
 * in the store are handed back in order instead of being run again, so the optimizer advances its
 * random streams exactly as the interrupted run did.
 */
export class RunRecorder {
  readonly run: OptimizationRun;
  private readonly lab: Lab | null;
  private readonly replay: Trial[];
  private budget = 0;
  /** What `budgetSpent` counts when the optimizer keeps its own tally (GEPA: metric calls); else LM calls. */
  private readonly spent: (() => number) | undefined;
  private progress: TrialProgress | undefined;

  private constructor(run: OptimizationRun, lab: Lab | null, replay: Trial[], options: RecorderOptions) {
    this.run = run;
    this.lab = lab;
    this.replay = replay;
    this.spent = options.spent;
    if (options.bar !== undefined) this.progress = trialProgress({ ...options.bar, label: run.name });
  }

  /**
   * `start`, reading the run to resume first when the lab is a team's PostgreSQL database (its reads
   * are asynchronous). The optimizers call this one.
   */
  static async begin(name: string, optimizerConfig: Record<string, unknown>, resume: string | undefined, options: RecorderOptions = {}): Promise<RunRecorder> {
    const lab = resume === undefined ? null : labFromConfig();
    if (lab?.engine === "postgresql") return RunRecorder.start(name, optimizerConfig, resume, options, { stored: await lab.run(resume!) });
    return RunRecorder.start(name, optimizerConfig, resume, options);
  }

  /**
   * Starts a new run, or reopens `resume` after checking it was started with the same configuration.
   * `options.bar` draws the terminal bar (its `progress: false` also tells the notebook display to skip the run).
   */
  static start(
    name: string, optimizerConfig: Record<string, unknown>, resume: string | undefined, options: RecorderOptions = {},
    read?: { stored: LabRun | undefined },
  ): RunRecorder {
    const experiment = experimentScope.getStore();
    const config = experiment === undefined ? optimizerConfig : { experiment, ...optimizerConfig };
    const progress = options.bar?.progress !== false;
    const lab = labFromConfig();
    const startedAt = new Date().toISOString();
    if (resume === undefined) {
      const id = lab?.startRun({ kind: "optimization", name, config }) ?? `unrecorded-${startedAt}`;
      const run: OptimizationRun = {
        id, kind: "optimization", name, status: "running", startedAt, endedAt: null, score: null, config, summary: {}, error: null,
        trials: [], bestTrial: null,
      };
      Instrumentation.emit("optimizer.start", { runId: id, optimizer: name, config, resumed: false, progress });
      return new RunRecorder(run, lab, [], options);
    }
    if (lab === null) {
      throw new ConfigurationError(`${name}.compile({ resume: "${resume}" }): the lab store is switched off (c.lab = false), so there is no recorded run to resume`);
    }
    if (lab.engine === "postgresql" && read === undefined) {
      throw new ConfigurationError(`${name}: RunRecorder.start cannot read run ${resume} from the PostgreSQL lab store at ${lab.path}; use RunRecorder.begin`);
    }
    const stored = lab.engine === "postgresql" ? read!.stored : lab.run(resume);
    if (stored === undefined || stored.kind !== "optimization") {
      throw new ValidationError(
        `${name}.compile: resume run ${JSON.stringify(resume)} is ${stored === undefined ? "not" : "not an optimization run"} in the lab store at ${lab.path}; ` +
          "lab.runs({ kind: \"optimization\" }) lists the runs that can be resumed",
        { field: "resume" },
      );
    }
    if (stored.name !== name || canonicalJson(stored.config) !== canonicalJson(config)) {
      throw new ValidationError(
        `${name}.compile: run ${resume} was started as ${stored.name} with ${canonicalJson(stored.config)}; ` +
          `resuming it needs the same optimizer and options, received ${name} with ${canonicalJson(config)}`,
        { field: "resume" },
      );
    }
    lab.reopenRun(resume);
    const run: OptimizationRun = { ...stored, status: "running", endedAt: null, error: null, trials: [], bestTrial: null };
    Instrumentation.emit("optimizer.start", { runId: resume, optimizer: name, config, resumed: true, recordedTrials: stored.trials.length, progress });
    return new RunRecorder(run, lab, [...stored.trials], options);
  }

  get id(): string {
    return this.run.id;
  }

  /** What the recorded trials spent together, for the run's summary. */
  usageTotals(): { lmCalls: number; inputTokens: number; outputTokens: number; cost: number } {
    const totals = { lmCalls: 0, inputTokens: 0, outputTokens: 0, cost: 0 };
    for (const t of this.run.trials) {
      totals.lmCalls += t.lmCalls;
      totals.inputTokens += t.inputTokens;
      totals.outputTokens += t.outputTokens;
      totals.cost += t.cost;
    }
    return totals;
  }

  /** How many recorded trials are still waiting to be replayed. */
  get replaying(): boolean {
    return this.replay.length > 0;
  }

  /**
   * Runs one step and records it as trial `run.trials.length`; when that trial is already in the store
   * (resume), returns the stored one instead of running `step`. `step` errors are recorded, not thrown.
   * `expect.kind` may list the kinds the step can end as (the first is recorded when it throws).
   */
  async trial(expect: { kind: string | readonly string[]; choices: Trial["choices"] }, step: () => Promise<TrialDraft>): Promise<Trial> {
    const index = this.run.trials.length;
    const stored = this.replay.shift();
    const kinds: readonly string[] = typeof expect.kind === "string" ? [expect.kind] : expect.kind;
    if (stored !== undefined) {
      if (stored.index !== index || !kinds.includes(stored.kind) || canonicalJson(stored.choices) !== canonicalJson(expect.choices)) {
        throw new ValidationError(
          `Resuming run ${this.run.id}: recorded trial ${stored.index} is a "${stored.kind}" trial with choices ${canonicalJson(stored.choices)}, ` +
            `but this run now wants trial ${index} to be "${kinds.join('" or "')}" with ${canonicalJson(expect.choices)}; the options or examples differ from the interrupted run`,
          { field: "resume" },
        );
      }
      this.run.trials.push(stored);
      this.budget = stored.budgetSpent;
      this.progress?.trial(stored);
      return stored;
    }
    const usage: UsageTotals = emptyUsage();
    const started = performance.now();
    let draft: TrialDraft = { kind: kinds[0]!, choices: expect.choices, instructions: {}, demoIds: {} };
    let error: string | null = null;
    try {
      draft = await trackUsage(usage, step);
    } catch (e) {
      error = describeError(e);
      if (e instanceof TrialError) draft = { ...draft, ...e.partial, data: { ...draft.data, ...e.partial.data } };
    }
    this.budget = this.spent?.() ?? this.budget + usage.calls;
    const trial: Trial = {
      index, kind: draft.kind, parents: draft.parents ?? [], choices: draft.choices, instructions: draft.instructions,
      demoIds: draft.demoIds, score: error === null ? draft.score ?? null : null, exampleScores: draft.exampleScores ?? null,
      budgetSpent: this.budget, lmCalls: usage.calls, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens,
      cost: usage.cost, durationMs: performance.now() - started, error, data: draft.data ?? {}, reused: draft.reused ?? 0,
    };
    this.lab?.recordTrial(this.run.id, trial);
    this.run.trials.push(trial);
    this.progress?.trial(trial);
    Instrumentation.emit("optimizer.trial", {
      runId: this.run.id, index, kind: trial.kind, score: trial.score, choices: trial.choices, lmCalls: trial.lmCalls, reused: trial.reused, error,
    });
    return trial;
  }

  /** USD the run's trials have cost so far (replayed trials included, so a resumed run counts what it spent before). */
  get costSpent(): number {
    return this.run.trials.reduce((s, t) => s + t.cost, 0);
  }

  /**
   * Whether the run has reached `maxCost` (USD; undefined: no limit): call it after every trial and,
   * when true, end the run with `finish({ status: "stopped", ... })` and the best program so far
   * (the trial that crossed the limit is already recorded). While recorded trials are still being
   * replayed it is false: they cost nothing now, and the run goes on to where it was interrupted.
   */
  overCost(maxCost: number | undefined): boolean {
    return maxCost !== undefined && !this.replaying && this.costSpent >= maxCost;
  }

  /**
   * What a summary says about `maxCost`: always `maxCost` and `costSpent`; when `stopped`, also
   * `stopped: "maxCost"` and a note (GEPA's summary already has its own `stopped` reason).
   */
  costSummary(maxCost: number | undefined, stopped: boolean): Record<string, unknown> {
    const costSpent = this.costSpent;
    if (!stopped) return { maxCost: maxCost ?? null, costSpent };
    return {
      stopped: "maxCost", maxCost, costSpent,
      stoppedNote: `stopped after trial ${this.run.trials.length - 1}: the trials cost $${costSpent.toFixed(4)}, reaching maxCost $${maxCost}; the best program found so far is returned`,
    };
  }

  /**
   * Ends the run: the store row, `run` itself, and the `optimizer.end` event. On a PostgreSQL store
   * it returns a promise that settles once the run's queued writes are in the database (and rejects
   * with the first that failed); on SQLite everything is written before it returns.
   */
  finish(end: { status: EndStatus; score: number | null; bestTrial: number | null; summary: Record<string, unknown>; error?: string | null }): void | Promise<void> {
    const error = end.error ?? null;
    this.progress?.stop(end.status !== "failed");
    this.progress = undefined;
    this.lab?.finishRun(this.run.id, { status: end.status, score: end.score, summary: end.summary, error, bestTrial: end.bestTrial });

    Object.assign(this.run, { status: end.status, score: end.score, bestTrial: end.bestTrial, summary: end.summary, error, endedAt: new Date().toISOString() });
    Instrumentation.emit("optimizer.end", {
      runId: this.run.id, optimizer: this.run.name, status: end.status, score: end.score, bestTrial: end.bestTrial, error, trials: this.run.trials.length,
    });
    if (this.lab?.engine === "postgresql") return this.lab.flush();
  }

  /** Records a run that stopped on an unexpected error, then hands the error back to rethrow. */
  fail(error: unknown): unknown {
    try {
      const written = this.finish({ status: "failed", score: null, bestTrial: null, summary: { trials: this.run.trials.length }, error: describeError(error) });
      // PostgreSQL: the writes go out in the background; their failure would hide the error being returned.
      written?.catch(() => undefined);
    } catch {
      // The store itself failed (closed, read-only, locked): the error being returned already says so,
      // and reporting this second failure instead would hide the first.
      Object.assign(this.run, { status: "failed", error: describeError(error), endedAt: new Date().toISOString() });
    }
    return error;
  }
}

/** A short hash of examples (ids, inputs, outputs): a resumed run must see the same data. */
export function dataFingerprint(examples: readonly IdentifiedExample[]): string {
  return nodeCrypto().createHash("sha256").update(JSON.stringify(examples.map((e) => [e.id, e.example.input, e.example.output]))).digest("hex").slice(0, 16);
}
