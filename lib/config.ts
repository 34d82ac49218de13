import { asyncLocalStorage } from "./load-sync.js";
import { ConfigurationError } from "./errors.js";
import type { LanguageModel } from "./lm/types.js";
import type { CacheOptions } from "./lm/types.js";
import { Strategy, type StrategyInterface } from "./strategy/strategy.js";
import { applySubscribers, type InstrumentationConfig } from "./instrument/subscribers.js";
import type { LoggerConfig } from "./instrument/logger.js";

// Configuration flows one way: this module hands lower layers what they need (the subscribers get
// their settings as an argument, the store and the LM cache get a path) and nothing it imports
// imports it back.
export type { InstrumentationConfig } from "./instrument/subscribers.js";
export type { LoggerConfig, LogLevel } from "./instrument/logger.js";

/** typelm's global configuration, set with `configure((c) => { ... })`: the default LM, the response cache, the lab store, the strategy, instrumentation and the logger. */
export interface GlobalConfig {
  lm: LanguageModel | undefined;
  /** Response cache for every `LM` without its own `cache` option: `true` (.typelm/lab.sqlite) or `{ path }`. */
  cache: boolean | CacheOptions | undefined;
  /**
   * The lab store: `false` records no runs; `{ path }` moves the file (default .typelm/lab.sqlite);
   * `{ url: "postgres://..." }` records runs in a team's PostgreSQL database (also `TYPELM_LAB_URL`).
   */
  lab: boolean | { path?: string; url?: string } | undefined;
  strategy: StrategyInterface;
  instrumentation: InstrumentationConfig;
  logger: LoggerConfig;
  /**
   * Production traces: `{ sample }` records that share of top-level module calls (0 to 1) into the
   * lab, behind the call; `modules` limits it to those module class names. Unset or `sample: 0`: nothing.
   */
  traces?: TracesConfig | undefined;
}

/** What `c.traces` takes (see `GlobalConfig.traces` and docs/traces.md). */
export interface TracesConfig {
  /** The share of top-level calls recorded, from 0 (none) to 1 (all). */
  sample: number;
  /** Only these module class names (the top-level module's `constructor.name`); all when absent. */
  modules?: readonly string[];
  /** A seed for the sampling draws (reproducible sampling in tests); `Math.random` when absent. */
  seed?: number;
  /** The most traces held in memory waiting to be written; more are dropped and counted (default 10,000). */
  maxQueue?: number;
}

function defaults(): GlobalConfig {
  return {
    lm: undefined,
    cache: undefined,
    lab: undefined,
    strategy: Strategy.Strict,
    instrumentation: { enabled: false, subscribers: [] },
    logger: { level: "info", formatter: "text", output: undefined },
    traces: undefined,
  };
}

export const globalConfig: GlobalConfig = defaults();

/** Where the lab's SQLite file lives unless a path is given (relative to the working directory). */
const DEFAULT_STORE_PATH = ".typelm/lab.sqlite";

/**
 * The file the lab store, the registry and the LM cache (`cache: true`) use when given no path:
 * `configure((c) => { c.lab = { path } })`, else `.typelm/lab.sqlite`. Read at call time.
 */
export function configuredStorePath(): string {
  const lab = globalConfig.lab;
  return (typeof lab === "object" && lab !== null ? lab.path : undefined) ?? DEFAULT_STORE_PATH;
}

/**
 * The PostgreSQL database runs are recorded in, when one is configured: `c.lab = { url }`, else
 * `TYPELM_LAB_URL` (unless `c.lab` gives a `path`); undefined means the SQLite file. Read at call time.
 */
export function configuredLabUrl(): string | undefined {
  const lab = globalConfig.lab;
  if (typeof lab === "object" && lab !== null) {
    if (lab.url !== undefined) return lab.url;
    if (lab.path !== undefined) return undefined;
  }
  const fromEnv = process.env.TYPELM_LAB_URL;
  return fromEnv === undefined || fromEnv === "" ? undefined : fromEnv;
}

/** Sets typelm's global configuration. */
export function configure(fn: (config: GlobalConfig) => void): void {
  fn(globalConfig);
  applySubscribers(globalConfig);
}

/** Restores the defaults (for tests). */
export function resetConfiguration(): void {
  Object.assign(globalConfig, defaults());
  applySubscribers(globalConfig);
}

/** Per-instance configuration of a module or predictor. */
export interface ModuleConfig {
  lm?: LanguageModel | undefined;
  strategy?: StrategyInterface | undefined;
}

interface Scope {
  /** LMs configured on the modules currently running, innermost last. */
  moduleLMs: LanguageModel[];
  withLM: LanguageModel | undefined;
}

const scope = asyncLocalStorage<Scope>();

/** Runs `fn` with `lm` as the default model for everything called inside it. */
export function withLM<T>(lm: LanguageModel, fn: () => T): T {
  const current = scope.getStore();
  return scope.run({ moduleLMs: current?.moduleLMs ?? [], withLM: lm }, fn);
}

/** Runs `fn` inside a module whose configured LM (if any) applies to its children. */
export function withModuleLM<T>(lm: LanguageModel | undefined, fn: () => T): T {
  if (lm === undefined) return fn();
  const current = scope.getStore();
  return scope.run({ moduleLMs: [...(current?.moduleLMs ?? []), lm], withLM: current?.withLM }, fn);
}

/**
 * Resolution order: per-call option, the predictor's own configuration, the enclosing modules'
 * (innermost first), `withLM`, then the global configuration.
 */
export function resolveLM(perCall: LanguageModel | undefined, own: LanguageModel | undefined): LanguageModel {
  const found = perCall ?? own ?? resolveScopedLM();
  if (found === undefined) {
    throw new ConfigurationError(
      "No language model configured: set one with configure((c) => { c.lm = new LM(\"openai/gpt-4o-mini\") }), " +
        "module.configure(...), withLM(lm, fn) or the `lm` call option",
    );
  }
  return found;
}

function resolveScopedLM(): LanguageModel | undefined {
  const current = scope.getStore();
  if (current !== undefined) {
    const { moduleLMs } = current;
    if (moduleLMs.length > 0) return moduleLMs[moduleLMs.length - 1];
    if (current.withLM !== undefined) return current.withLM;
  }
  return globalConfig.lm;
}

export function resolveStrategy(own: StrategyInterface | undefined): StrategyInterface {
  return own ?? globalConfig.strategy;
}

/** Per-call sampling settings (the `temperature` and `rolloutId` call options) in force for model calls. */
export interface Sampling {
  /** Beats the LM's own `temperature`. */
  temperature?: number | undefined;
  /** Makes otherwise identical requests distinct: it enters the response cache key, never the provider request. */
  rolloutId?: string | number | undefined;
}

const samplingScope = asyncLocalStorage<Sampling>();

/**
 * Runs `fn` with `sampling` applying to every model call inside it, including those of child modules
 * called without options. Each setting given beats the enclosing scope's; one not given is inherited.
 */
export function withSampling<T>(sampling: Sampling, fn: () => T): T {
  if (sampling.temperature === undefined && sampling.rolloutId === undefined) return fn();
  const outer = samplingScope.getStore();
  return samplingScope.run({
    temperature: sampling.temperature ?? outer?.temperature,
    rolloutId: sampling.rolloutId ?? outer?.rolloutId,
  }, fn);
}

/** The sampling settings in force here (innermost call's options first); empty outside any. */
export function currentSampling(): Sampling {
  return samplingScope.getStore() ?? {};
}
