import { ValidationError } from "../errors.js";
import type { Metric } from "../evaluate/metric.js";
import type { MetricSpec } from "../evaluate/scoring.js";
import type { LanguageModel } from "../lm/types.js";
import { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { SignatureClass } from "../signature/signature.js";

/** The optimizers an experiment can name. */
export const OPTIMIZER_NAMES = ["mipro", "gepa", "simple", "none"] as const;
/** An optimizer an experiment can name: "mipro", "gepa", "simple" or "none". */
export type OptimizerName = (typeof OPTIMIZER_NAMES)[number];

/** What an experiment's `program` function receives. */
export interface ProgramContext<S extends SignatureClass = SignatureClass> {
  /** The experiment's signature, or the one the dataset folder's signature.json declares. */
  signature: S;
}

/** What an optimizer function receives. */
export interface OptimizerContext<S extends SignatureClass = SignatureClass> {
  signature: S;
  /** The model this run uses (one per `--lm`). */
  lm: LanguageModel;
  /** The run's seed (`--seed`, default 0). */
  seed: number;
  /** The experiment's first metric as an optimizer metric (0..1 per example). */
  metric: Metric;
}

/** Anything with the optimizers' `compile`: MIPROv2, GEPA, SimpleOptimizer or one of your own. */
export interface ExperimentOptimizer {
  /** Optimizes a clone of the program on the training examples (and validation examples when given) and resolves with it. */
  compile(args: { moduleInstance: Module; trainingExamples: FewShotExample[]; validationExamples?: FewShotExample[] }): Promise<Module>;
  readonly lastRun?: unknown;
}

/** The three splits, given directly instead of a folder. */
export interface ExperimentSplits {
  train: FewShotExample[];
  dev: FewShotExample[];
  test: FewShotExample[];
}

/** What `defineExperiment` takes: name, dataset, signature, program, metrics, optimizer and its options, summary, label field. */
export interface ExperimentConfig<S extends SignatureClass = SignatureClass> {
  /** Names the reports folder (`reports/<name>/`) and the registry entry: letters, digits, `.`, `_`, `-`. */
  name: string;
  /** A folder (relative to the experiment file), a bundled dataset name, or `{ train, dev, test }`. */
  dataset: string | ExperimentSplits;
  /** Optional when the dataset folder has a signature.json. */
  signature?: S;
  /** The program to evaluate and optimize, or a function building it from the signature. */
  program: ((context: ProgramContext<S>) => Module) | Module;
  /** Default ["accuracy"]; the first is the headline and the optimizers' metric. */
  metrics?: MetricSpec[];
  /** Default "mipro". A function gets `{ signature, lm, seed, metric }` and returns an optimizer. */
  optimizer?: OptimizerName | ((context: OptimizerContext<S>) => ExperimentOptimizer);
  /** Passed to the named optimizer's constructor (with `seed` and the metric unless given). */
  optimizerOptions?: Record<string, unknown>;
  /** One sentence on what the experiment shows, for the report. */
  summary?: string;
  /** An output field whose confusion matrix and per-label scores the report shows (classification). */
  labelField?: string;
  /** Run the optimizer this many times, from seeds seed … seed + seeds − 1, to see how far its gain varies (`--seeds` overrides; default 1). */
  seeds?: number;
}

const BRAND = Symbol.for("typelm.experiment");

/** An experiment, as `defineExperiment` returns it (checked and frozen). */
export type ExperimentDefinition<S extends SignatureClass = SignatureClass> = Readonly<ExperimentConfig<S>> & { readonly [BRAND]: true };

/**
 * Declares an experiment: a dataset, a program, how it is measured and optimized. An experiment
 * file default-exports one; `typelm run <file>` runs it.
 */
export function defineExperiment<S extends SignatureClass = SignatureClass>(config: ExperimentConfig<S>): ExperimentDefinition<S> {
  if (config === null || typeof config !== "object") {
    throw new ValidationError(`defineExperiment expects an object { name, dataset, program, ... }; received ${describe(config)}`);
  }
  const { name, dataset, program, metrics, optimizer, optimizerOptions, signature } = config;
  if (typeof name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    throw new ValidationError(
      `defineExperiment: "name" must be 1-100 letters, digits, ".", "_" or "-" starting with a letter or digit (it names the reports folder); received ${describe(name)}`,
      { field: "name" },
    );
  }
  const where = `experiment "${name}"`;
  const splitsGiven = dataset !== null && typeof dataset === "object" && ["train", "dev", "test"].every((s) => Array.isArray((dataset as unknown as Record<string, unknown>)[s]));
  if (!(typeof dataset === "string" && dataset.trim() !== "") && !splitsGiven) {
    throw new ValidationError(`${where}: "dataset" must be a folder, a bundled dataset name, or { train, dev, test } lists of examples; received ${describe(dataset)}`, { field: "dataset" });
  }
  if (!(typeof program === "function" || program instanceof Module || isModuleLike(program))) {
    throw new ValidationError(`${where}: "program" must be a Module or a function ({ signature }) => Module; received ${describe(program)}`, { field: "program" });
  }
  if (metrics !== undefined && (!Array.isArray(metrics) || metrics.length === 0)) {
    throw new ValidationError(`${where}: "metrics" must be a non-empty list (e.g. ["accuracy", "f1_score"]); received ${describe(metrics)}`, { field: "metrics" });
  }
  if (optimizer !== undefined && typeof optimizer !== "function" && !(OPTIMIZER_NAMES as readonly unknown[]).includes(optimizer)) {
    throw new ValidationError(
      `${where}: unknown optimizer ${describe(optimizer)}; the known ones are ${OPTIMIZER_NAMES.map((o) => `"${o}"`).join(", ")}, or a function (context) => optimizer`,
      { field: "optimizer" },
    );
  }
  if (optimizerOptions !== undefined && (optimizerOptions === null || typeof optimizerOptions !== "object" || Array.isArray(optimizerOptions))) {
    throw new ValidationError(`${where}: "optimizerOptions" must be an object; received ${describe(optimizerOptions)}`, { field: "optimizerOptions" });
  }
  if (config.seeds !== undefined && !(Number.isInteger(config.seeds) && config.seeds >= 1 && config.seeds <= 1000)) {
    throw new ValidationError(`${where}: "seeds" must be a whole number from 1 to 1000 (how many times the optimizer runs); received ${describe(config.seeds)}`, { field: "seeds" });
  }
  if (signature !== undefined && (signature === null || typeof signature !== "function" || typeof (signature as SignatureClass).output !== "object")) {
    throw new ValidationError(`${where}: "signature" must be a Signature class; received ${describe(signature)}`, { field: "signature" });
  }
  return Object.freeze({ ...config, [BRAND]: true as const });
}

/** True for what `defineExperiment` returned (also across copies of the package). */
export function isExperiment(value: unknown): value is ExperimentDefinition {
  return value !== null && typeof value === "object" && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** A Module from another copy of the package (an experiment file may import its own). */
function isModuleLike(value: unknown): boolean {
  return value !== null && typeof value === "object" && typeof (value as Module).call === "function" && typeof (value as Module).namedPredictors === "function";
}

function describe(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "a list";
  if (value === null || value === undefined) return String(value);
  if (typeof value === "object") return "an object";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
