import { ValidationError } from "../../errors.js";
import { isMetricObject, type Metric } from "../../evaluate/metric.js";
import type { BuiltinMetricName, MetricSpec } from "../../evaluate/scoring.js";
import type { LanguageModel } from "../../lm/types.js";
import { Module } from "../../module.js";
import type { GEPAOptions } from "../../optimize/gepa/gepa.js";
import type { MIPROv2Options } from "../../optimize/mipro.js";
import type { SimpleOptimizerOptions } from "../../optimize/simple.js";
import type { FewShotExample } from "../../prompt/few-shot.js";
import type { SignatureClass } from "../../signature/signature.js";

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

/** What every experiment has, whatever its optimizer: name, dataset, signature, program, metrics, summary, label field. */
export interface ExperimentBase<S extends SignatureClass = SignatureClass> {
  /** Names the reports folder (`reports/<name>/`) and the registry entry: letters, digits, `.`, `_`, `-`. */
  name: string;
  /** A folder (relative to the experiment file), a bundled dataset name, or `{ train, dev, test }`. */
  dataset: string | ExperimentSplits;
  /** Optional when the dataset folder has a signature.json. */
  signature?: S;
  /** The program to evaluate and optimize, or a function building it from the signature. */
  program: ((context: ProgramContext<S>) => Module) | Module;
  /** Default ["accuracy"]; the first is the headline and the metric the optimizer maximizes. */
  metrics?: MetricSpec[];
  /** One sentence on what the experiment shows, for the report. */
  summary?: string;
  /** An output field of the signature whose confusion matrix and per-label scores the report shows (classification). */
  labelField?: string;
  /** Run the optimizer this many times, from seeds seed … seed + seeds − 1, to see how far its gain varies (`--seeds` overrides; default 1). */
  seeds?: number;
}

/**
 * The optimizer and its options: `optimizerOptions` are the named optimizer's constructor options
 * (`MIPROv2Options`, `GEPAOptions`, `SimpleOptimizerOptions`), passed with `seed` and the metric
 * unless given; "none" and an optimizer function take none.
 */
export type ExperimentOptimizerChoice<S extends SignatureClass = SignatureClass> =
  | { /** Default "mipro". */ optimizer?: "mipro"; optimizerOptions?: MIPROv2Options }
  | { optimizer: "gepa"; optimizerOptions?: GEPAOptions }
  | { optimizer: "simple"; optimizerOptions?: SimpleOptimizerOptions }
  | { optimizer: "none"; optimizerOptions?: undefined }
  | {
    /** Gets `{ signature, lm, seed, metric }` and returns an optimizer; its options are yours to give it. */
    optimizer: (context: OptimizerContext<S>) => ExperimentOptimizer;
    optimizerOptions?: undefined;
  };

/** What `defineExperiment` takes: name, dataset, signature, program, metrics, optimizer and its options, summary, label field. */
export type ExperimentConfig<S extends SignatureClass = SignatureClass> = ExperimentBase<S> & ExperimentOptimizerChoice<S>;

/**
 * Every option of each named optimizer, checked against its options interface by the compiler: an
 * option added to the interface and not here (or here and not there) fails to compile.
 */
const MIPRO_OPTIONS = everyKey<MIPROv2Options>()(["metric", "kDemos", "mode", "numCandidates", "numTrials", "minibatchSize", "validationSize", "fullEvalEvery", "seed", "promptModel", "metricThreshold", "proposalTemperature", "concurrency", "progress", "maxCost", "memo", "exampleTimeout", "batch"]);
const GEPA_OPTIONS = everyKey<GEPAOptions>()(["metric", "mode", "maxMetricCalls", "reflectionLM", "seed", "minibatchSize", "useMerge", "candidateSelection", "concurrency", "progress", "maxCost", "exampleTimeout", "batch"]);
const SIMPLE_OPTIONS = everyKey<SimpleOptimizerOptions>()(["metric", "seed", "numTrials", "kDemos", "metricThreshold", "instructions", "concurrency", "progress", "maxCost", "exampleTimeout", "batch"]);

/** The options each named optimizer takes, by the name an experiment gives it. */
export const OPTIMIZER_OPTIONS: Readonly<Record<"mipro" | "gepa" | "simple", readonly string[]>> = {
  mipro: MIPRO_OPTIONS, gepa: GEPA_OPTIONS, simple: SIMPLE_OPTIONS,
};
const OPTIMIZER_CLASSES = { mipro: "MIPROv2", gepa: "GEPA", simple: "SimpleOptimizer" } as const;

/** The built-in metric names, checked against `BuiltinMetricName` by the compiler. */
const BUILTIN_METRICS: readonly string[] = everyKey<Record<BuiltinMetricName, true>>()(["accuracy", "f1_score", "exact_match", "token_f1"]);

/**
 * `keys` as given, which the compiler checks are every key of `T` and only those (a key missing is a
 * type error naming it; an unknown one is not assignable).
 */
function everyKey<T>() {
  return <const K extends readonly (keyof T & string)[]>(keys: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, K[number]> })): readonly string[] => keys;
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
  const { name, dataset, program, metrics, optimizer, optimizerOptions, signature, labelField } = config;
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
  (metrics ?? []).forEach((metric: unknown, i) => {
    if (typeof metric === "function" || isMetricObject(metric) || (typeof metric === "string" && BUILTIN_METRICS.includes(metric))) return;
    throw new ValidationError(
      `${where}: unknown metric ${describe(metric)} at metrics[${i}]${didYouMean(metric, BUILTIN_METRICS)}; the built-in metrics are ` +
        `${BUILTIN_METRICS.map((m) => `"${m}"`).join(", ")}, or give a function (example, prediction) => score in [0, 1] or a Judge`,
      { field: `metrics[${i}]` },
    );
  });
  if (optimizer !== undefined && typeof optimizer !== "function" && !(OPTIMIZER_NAMES as readonly unknown[]).includes(optimizer)) {
    throw new ValidationError(
      `${where}: unknown optimizer ${describe(optimizer)}${didYouMean(optimizer, OPTIMIZER_NAMES)}; the known ones are ${OPTIMIZER_NAMES.map((o) => `"${o}"`).join(", ")}, or a function (context) => optimizer`,
      { field: "optimizer" },
    );
  }
  if (optimizerOptions !== undefined) checkOptimizerOptions(where, optimizer, optimizerOptions);
  if (config.seeds !== undefined && !(Number.isInteger(config.seeds) && config.seeds >= 1 && config.seeds <= 1000)) {
    throw new ValidationError(`${where}: "seeds" must be a whole number from 1 to 1000 (how many times the optimizer runs); received ${describe(config.seeds)}`, { field: "seeds" });
  }
  if (signature !== undefined && (signature === null || typeof signature !== "function" || typeof (signature as SignatureClass).output !== "object")) {
    throw new ValidationError(`${where}: "signature" must be a Signature class; received ${describe(signature)}`, { field: "signature" });
  }
  if (labelField !== undefined) {
    if (typeof labelField !== "string" || labelField === "") {
      throw new ValidationError(`${where}: "labelField" must be the name of an output field; received ${describe(labelField)}`, { field: "labelField" });
    }
    // Without a signature here, the dataset folder's signature.json gives it: checked when the dataset loads.
    if (signature !== undefined) checkLabelField(where, labelField, signature);
  }
  return Object.freeze({ ...config, [BRAND]: true as const });
}

/** Each option must be one the named optimizer takes; "none" and an optimizer function take none. */
function checkOptimizerOptions(where: string, optimizer: unknown, options: unknown): void {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new ValidationError(`${where}: "optimizerOptions" must be an object; received ${describe(options)}`, { field: "optimizerOptions" });
  }
  if (typeof optimizer === "function" || optimizer === "none") {
    throw new ValidationError(
      `${where}: "optimizerOptions" are the options of a named optimizer ("mipro", "gepa", "simple"); ` +
        (optimizer === "none" ? `with optimizer "none" nothing would read them: remove them` : "an optimizer function makes its own optimizer: give them to it there"),
      { field: "optimizerOptions" },
    );
  }
  const named = (optimizer ?? "mipro") as keyof typeof OPTIMIZER_OPTIONS;
  const valid = OPTIMIZER_OPTIONS[named];
  for (const key of Object.keys(options)) {
    if (valid.includes(key)) continue;
    throw new ValidationError(
      `${where}: unknown optimizerOptions key "${key}"${didYouMean(key, valid)}: ${OPTIMIZER_CLASSES[named]}, the "${named}" optimizer, ` +
        `takes ${valid.join(", ")}`,
      { field: `optimizerOptions.${key}` },
    );
  }
}

/**
 * `labelField` must be an output field of the signature: the report's confusion matrix and per-label
 * scores are of that field. A `ValidationError` naming the fields otherwise.
 */
export function checkLabelField(where: string, field: string, signature: SignatureClass): void {
  const outputs = Object.keys(signature.output);
  if (outputs.includes(field)) return;
  const name = typeof signature.name === "string" && signature.name !== "" ? ` ${signature.name}` : "";
  throw new ValidationError(
    `${where}: labelField "${field}" is not an output field of the signature${name}${didYouMean(field, outputs)}; its output fields: ${outputs.join(", ")}`,
    { field: "labelField" },
  );
}

/**
 * ` (did you mean "x"?)` for the known name nearest to a mistyped one (same letters in another case
 * or with - for _, a prefix, or at most a third of its letters changed), else "".
 */
export function didYouMean(given: unknown, known: readonly string[]): string {
  if (typeof given !== "string" || given === "") return "";
  const squash = (text: string) => text.toLowerCase().replace(/[-_\s]/g, "");
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = squash(name) === squash(given) ? 0 : editDistance(given.toLowerCase(), name.toLowerCase());
    const close = distance <= Math.max(1, Math.floor(name.length / 3)) || (given.length >= 2 && name.toLowerCase().startsWith(given.toLowerCase()));
    if (close && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best === undefined ? "" : ` (did you mean "${best.name}"?)`;
}

/** Edits (insert, delete, replace, swap two neighbours) that turn a into b. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
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
