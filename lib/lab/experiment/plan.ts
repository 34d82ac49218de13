// The plan of an experiment run: what `runExperiment`'s options and the environment decide (the
// models, the lab store and response cache, the resume markers, batches, the gate), resolved once at
// the door (`runExperiment`, `runAndReport`) and handed down as one value. The rooms below it (the
// run, the model choice, the resume markers, the gate's baseline and summary) read neither the
// command line's options nor the process's environment.
import { join, resolve } from "node:path";
import { globalConfig } from "../../config.js";
import { ValidationError } from "../../errors.js";
import type { Dataset } from "../dataset/load.js";

/** Options of `runExperiment`: the models, example limit, seed, response cache, working directory, batches and a progress log. */
export interface RunExperimentOptions {
  /** `provider/model` ids, one run each; none: TYPELM_LM, a local Ollama, or the offline stand-in. */
  lm?: readonly string[] | string | undefined;
  /** Use at most this many examples of each split. */
  limit?: number | undefined;
  /** The optimizer's seed (default 0). */
  seed?: number | undefined;
  /** Run the optimizer this many times, seeds seed … seed + seeds − 1 (default: the experiment's `seeds`, else 1). */
  seeds?: number | undefined;
  /** The LM response cache (default on, in the lab store's file). */
  cache?: boolean;
  /**
   * Where `.typelm/lab.sqlite` is (default: the working directory). A team's lab (`c.lab = { url }`
   * or TYPELM_LAB_URL in `env`) takes the runs, the response cache and the registry instead.
   */
  cwd?: string;
  /** The baseline and optimized evaluations go through the provider's batch service (`--batch`). */
  batch?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Progress lines (the CLI prints them on standard error). */
  log?: (line: string) => void;
  /** Stores the optimized program as a registry version (default true; a gate run stores none). */
  register?: boolean;
  /** Called with the dataset (after --limit) before any model call; throws to stop the run (the gate checks its baseline's ids). */
  checkDataset?: (dataset: Dataset) => void;
  ollamaProbeMs?: number;
  /** How long the check before the run waits for each model's first answer (ms, default 120,000). */
  modelCheckMs?: number;
}

/** `--baseline <results.json | run id> [--tolerance T] [--allow-underpowered] [--junit FILE]`. */
export interface GateOptions {
  baseline: string;
  /** The largest drop a pass rules out, in [0, 1) (default 0.05). */
  tolerance?: number | undefined;
  /** The same as `tolerance` (`--max-drop`); `tolerance` wins when both are given. */
  maxDrop?: number | undefined;
  /** An inconclusive verdict exits 0 (its warning is still printed). */
  allowUnderpowered?: boolean | undefined;
  junit?: string | undefined;
}

/** Which models run: the ones asked for, else what the environment names, else a local Ollama or the stand-in. */
export interface ModelPlan {
  /** The `--lm` ids in the order given (empty: one model, chosen as `chooseModel` does). */
  ids: string[];
  /** The environment's model settings (TYPELM_LM, OLLAMA_HOST), read once at the door. */
  env: Readonly<Record<string, string | undefined>>;
  /** How long to wait for a local Ollama to answer (ms). */
  ollamaProbeMs: number | undefined;
  /** How long the check before the run waits for each model's and each judge's first answer (ms). */
  checkMs: number;
}

/** Where a run records: the team's lab or the working folder's file, the response cache, the registry. */
export interface StorePlan {
  /** The team's lab on PostgreSQL (`c.lab = { url }`, else TYPELM_LAB_URL), or undefined for the file. */
  team: string | undefined;
  /** The working folder's `.typelm/lab.sqlite` (used when `team` is undefined). */
  file: string;
  /** Where the LM response cache is kept (the team's lab or the file); undefined without one (`--no-cache`). */
  cache: string | undefined;
  /** Whether the optimized program is stored as a registry version (a gate run stores none). */
  register: boolean;
}

/** How a batch evaluation survives a crash (`--batch`): the folder of its resume markers. */
export interface ResumePlan {
  /** The evaluations go through the provider's batch service. */
  batch: boolean;
  /** `.typelm/running` of the working folder: one marker file per running batch evaluation. */
  markers: string;
}

/** The regression gate's part of the plan: the options, and where GitHub's step summary goes. */
export interface GatePlan extends GateOptions {
  /** GITHUB_STEP_SUMMARY, read once at the door: the Markdown summary is appended to it. */
  summaryFile: string | undefined;
}

/** An experiment run's plan: every choice the options and the environment make, resolved. */
export interface ExperimentPlan {
  cwd: string;
  limit: number | undefined;
  seed: number;
  /** `--seeds` as given (the experiment's own `seeds` applies when undefined). */
  seeds: number | undefined;
  models: ModelPlan;
  store: StorePlan;
  resume: ResumePlan;
  /** Undefined without `--baseline`. */
  gate: GatePlan | undefined;
  log: (line: string) => void;
  checkDataset: ((dataset: Dataset) => void) | undefined;
}

/** How long the check before the run waits for the program's call on the first test example (ms). */
export const MODEL_CHECK_MS = 120_000;

/**
 * Resolves the options once: counts checked, the environment read (the models' settings, the team's
 * lab, GitHub's step summary), the folders placed under the working directory.
 */
export function planExperiment(options: RunExperimentOptions & { gate?: GateOptions | undefined }): ExperimentPlan {
  const limit = checkCount(options.limit, "limit");
  const seed = checkCount(options.seed, "seed", 0) ?? 0;
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const team = teamLabUrl(env);
  const file = join(cwd, ".typelm", "lab.sqlite");
  const ids = options.lm === undefined ? [] : typeof options.lm === "string" ? [options.lm] : [...options.lm];
  return {
    cwd, limit, seed, seeds: options.seeds,
    models: {
      ids, env: { TYPELM_LM: env["TYPELM_LM"], OLLAMA_HOST: env["OLLAMA_HOST"] },
      ollamaProbeMs: options.ollamaProbeMs, checkMs: options.modelCheckMs ?? MODEL_CHECK_MS,
    },
    store: { team, file, cache: options.cache === false ? undefined : team ?? file, register: options.register !== false },
    resume: { batch: options.batch === true, markers: join(cwd, ".typelm", "running") },
    gate: options.gate === undefined ? undefined : { ...options.gate, summaryFile: env["GITHUB_STEP_SUMMARY"] },
    log: options.log ?? (() => {}),
    checkDataset: options.checkDataset,
  };
}

/**
 * The team's lab an experiment records into: `c.lab = { url }`, else `TYPELM_LAB_URL` (unless
 * `c.lab` gives a path); undefined for the working folder's `.typelm/lab.sqlite`.
 */
export function teamLabUrl(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const lab = globalConfig.lab;
  if (typeof lab === "object" && lab !== null) {
    if (lab.url !== undefined) return lab.url;
    if (lab.path !== undefined) return undefined;
  }
  const fromEnv = env["TYPELM_LAB_URL"];
  return fromEnv === undefined || fromEnv === "" ? undefined : fromEnv;
}

/** A count option: undefined, or a whole number of at least `min`. */
export function checkCount(value: number | undefined, name: string, min = 1): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min) {
    throw new ValidationError(`--${name} expects a whole number ≥ ${min}; received ${String(value)}`, { field: name });
  }
  return value;
}
