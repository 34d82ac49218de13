import { nodeCrypto } from "../load-sync.js";
import { readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { canonicalJson } from "../canonical-json.js";
import { globalConfig } from "../config.js";
import { ConfigurationError, LMError, ValidationError } from "../errors.js";
import { compare, describeComparison } from "../evaluate/compare.js";
import { defaultMetric, isMetricObject, type Metric } from "../evaluate/metric.js";
import type { EvaluationReport } from "../evaluate/report.js";
import type { MetricSpec } from "../evaluate/scoring.js";
import { Instrumentation } from "../instrument/bus.js";
import type { Module } from "../module.js";
import { GEPA } from "../optimize/gepa/gepa.js";
import { MIPROv2 } from "../optimize/mipro.js";
import { inExperiment } from "../optimize/recorder.js";
import { SimpleOptimizer } from "../optimize/simple.js";
import { FewShotExample } from "../prompt/few-shot.js";
import type { SignatureClass } from "../signature/signature.js";
import { LabStore } from "../store/lab-store.js";
import type { OptimizationRun } from "../store/records.js";
import { Registry } from "../store/registry.js";
import { loadDataset, packageRoot, type Dataset } from "./datasets.js";
import type { ExperimentDefinition, ExperimentOptimizer, ExperimentSplits } from "./define.js";
import { isExperiment } from "./define.js";
import type { LoadedExperiment } from "./load-experiment.js";
import { resultRows } from "./gate.js";
import { chooseModel, type ModelChoice } from "./model-choice.js";
import { recordedOptions } from "./recorded-options.js";
import { evaluateInRun } from "./resume-run.js";
import { adjustReportComparisons, comparisonResults, type ComparisonResult, type EvaluationResult, type PredictorResult } from "./reproduce.js";

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
  /** Where `.typelm/lab.sqlite` is (default: the working directory). */
  cwd?: string;
  /** The baseline and optimized evaluations go through the provider's batch service (`--batch`). */
  batch?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Progress lines (the CLI prints them on standard error). */
  log?: (line: string) => void;
  /** Called with the dataset (after --limit) before any model call; throws to stop the run (the gate checks its baseline's ids). */
  checkDataset?: (dataset: Dataset) => void;
  ollamaProbeMs?: number;
}

/** One model's part of a run. */
export interface ModelRunResult {
  model: { id: string; source: string; standIn: boolean };
  baseline: EvaluationResult;
  /** null when the optimizer is "none". */
  optimized: EvaluationResult | null;
  /** Metric name → optimized against baseline (empty without an optimizer). */
  comparison: Record<string, ComparisonResult>;
  optimizer: {
    name: string;
    bestTrial: number | null;
    trials: { index: number; kind: string; score: number | null; choices: Record<string, unknown>; error: string | null }[];
  } | null;
  program: Record<string, PredictorResult>;
  /** With several seeds (`--seeds N`): each seed's optimized program on the test split against the baseline, on the first metric. */
  seeds?: SeedResult[];
  /** The optimized − baseline difference over the seeds. */
  gain?: { mean: number; sd: number; min: number; max: number };
}

/** One seed's optimization, on the experiment's first metric: baseline and optimized test values, their difference and its p-value. */
export interface SeedResult {
  seed: number;
  baseline: number;
  optimized: number;
  diff: number;
  pValue: number;
}

/** What results.json records of the inputs, so a rerun can be checked to be the same experiment. No times, no ids. */
export interface Manifest {
  experiment: { file: string | null; sha256: string | null };
  dataset: { name: string; files: Record<string, string> };
  typelm: string;
  node: string;
  models: string[];
  seed: number;
  /** How many seeds the optimizer ran from (only when more than one). */
  seeds?: number;
  limit: number | null;
  options: { metrics: string[]; optimizer: string; optimizerOptions: unknown };
}

/** One model's run of an experiment: the chosen model, both evaluation reports, the optimization run, the tuned program, its registry version and the provider calls made. */
export interface ModelRun {
  choice: ModelChoice;
  baseline: EvaluationReport;
  optimized: EvaluationReport | null;
  run: OptimizationRun | null;
  tuned: Module;
  result: ModelRunResult;
  registryVersion: number | null;
  providerCalls: number;
}

/** What `runExperiment` resolves with: the experiment, its dataset, the manifest, and one `ModelRun` per model. */
export interface ExperimentRun {
  definition: ExperimentDefinition;
  dataset: Dataset;
  manifest: Manifest;
  models: ModelRun[];
  /** Requests sent to providers, all models (cache hits excluded). */
  providerCalls: number;
  seed: number;
  limit: number | null;
}

/**
 * Runs an experiment once per model: the baseline on the test split, the optimizer on train/dev, the
 * optimized program on test, the registry entry. Returns everything the report needs; writes nothing
 * but the lab store and the registry (`writeExperimentReport` writes the report).
 */
export async function runExperiment(experiment: LoadedExperiment | ExperimentDefinition, options: RunExperimentOptions = {}): Promise<ExperimentRun> {
  const loaded: Pick<LoadedExperiment, "definition" | "dir" | "file" | "sha256"> = isExperiment(experiment)
    ? { definition: experiment, dir: resolve(options.cwd ?? process.cwd()), file: "", sha256: "" }
    : experiment;
  const def = loaded.definition;
  const limit = checkCount(options.limit, "limit");
  const seed = checkCount(options.seed, "seed", 0) ?? 0;
  const seedCount = checkCount(options.seeds ?? loaded.definition.seeds, "seeds") ?? 1;
  const cwd = resolve(options.cwd ?? process.cwd());
  const log = options.log ?? (() => {});
  const labPath = join(cwd, ".typelm", "lab.sqlite");
  const lmIds = options.lm === undefined ? [] : typeof options.lm === "string" ? [options.lm] : [...options.lm];
  if (new Set(lmIds).size !== lmIds.length) throw new ValidationError(`--lm lists the same model twice: ${lmIds.join(", ")}`, { field: "lm" });

  const dataset = limited(await datasetOf(def, loaded.dir), limit);
  options.checkDataset?.(dataset);
  const metrics: MetricSpec[] = def.metrics === undefined ? ["accuracy"] : [...def.metrics];
  const optimizerName = typeof def.optimizer === "function" ? "custom" : def.optimizer ?? "mipro";
  if (seedCount > 1 && optimizerName === "none") {
    throw new ValidationError(`experiment "${def.name}": --seeds ${seedCount} runs the optimizer ${seedCount} times, but the experiment has optimizer "none"`, { field: "seeds" });
  }
  const chooses = lmIds.length === 0 ? [undefined] : lmIds;
  const choices: ModelChoice[] = [];
  for (const id of chooses) {
    choices.push(await chooseModel({ lm: id, env: options.env, cachePath: options.cache === false ? undefined : labPath, ollamaProbeMs: options.ollamaProbeMs }));
  }

  const saved = { lm: globalConfig.lm, lab: globalConfig.lab };
  let providerCalls = 0;
  const off = Instrumentation.subscribe("lm.request.start", () => { providerCalls++; });
  const models: ModelRun[] = [];
  try {
    globalConfig.lab = { path: labPath };
    const lab = LabStore.open(labPath);
    for (const choice of choices) {
      const before = providerCalls;
      const tag = choices.length > 1 ? ` (${choice.id})` : "";
      log(`model: ${choice.description}`);
      // Optimizers propose and reflect with the configured LM and record into the configured store.
      globalConfig.lm = choice.lm;
      const program = typeof def.program === "function" ? def.program({ signature: dataset.signature }) : def.program.clone();
      await preflight(program, dataset.test[0], choice);
      // With --batch, running the same command again resumes an interrupted evaluation (resume-run.ts).
      const evaluate = (moduleInstance: Module, name: string) => evaluateInRun({
        name, lab, batch: options.batch === true, log, moduleInstance, testExamples: dataset.test, metrics,
        command: { model: choice.id, experiment: loaded.sha256, dataset: dataset.info.files, seed, limit: limit ?? null },
      });
      log(`baseline${tag}: evaluating ${dataset.test.length} test examples`);
      const baseline = await evaluate(program, `${def.name} baseline${tag}`);
      log(`baseline${tag}: ${formatMetrics(baseline.metrics)}`);
      let tuned: Module = program;
      let optimized: EvaluationReport | null = null;
      let run: OptimizationRun | null = null;
      let registryVersion: number | null = null;
      const perSeed: SeedResult[] = [];
      if (optimizerName !== "none") {
        const optimizer = makeOptimizer(def, optimizerName, { choice, seed, metrics, signature: dataset.signature, trainSize: dataset.train.length });
        log(`${optimizerName}${tag} (seed ${seed}) on ${dataset.train.length} train / ${dataset.dev.length} dev examples`);
        tuned = await inExperiment(def.name, () => optimizer.compile({ moduleInstance: program, trainingExamples: dataset.train, validationExamples: dataset.dev }));
        run = (optimizer.lastRun as OptimizationRun | null | undefined) ?? null;
        log(`optimized${tag}: evaluating ${dataset.test.length} test examples`);
        optimized = await evaluate(tuned, `${def.name} optimized${tag}`);
        log(`optimized${tag}: ${formatMetrics(optimized.metrics)}`);
        const headline = optimized.metrics[metricName(metrics[0])] ?? null;
        const stored = await new Registry({ path: labPath }).store({
          moduleInstance: tuned, name: def.name,
          metadata: { experiment: def.name, model: choice.id, seed, limit: limit ?? null, score: headline, datasetSha256: shaOf(dataset) },
        });
        registryVersion = stored.version;
        // More seeds: the same optimizer again from each further seed, each result on the test split against the baseline.
        if (seedCount > 1) {
          perSeed.push(seedResult(seed, baseline, optimized, metrics));
          for (let s = seed + 1; s < seed + seedCount; s++) {
            const again = makeOptimizer(def, optimizerName, { choice, seed: s, metrics, signature: dataset.signature, trainSize: dataset.train.length });
            log(`${optimizerName}${tag} (seed ${s}, ${s - seed + 1} of ${seedCount})`);
            const program2 = await inExperiment(def.name, () => again.compile({ moduleInstance: program, trainingExamples: dataset.train, validationExamples: dataset.dev }));
            const report2 = await evaluate(program2, `${def.name} optimized${tag} seed ${s}`);
            perSeed.push(seedResult(s, baseline, report2, metrics));
            log(`optimized${tag} seed ${s}: ${formatMetrics(report2.metrics)}`);
          }
        }
      }
      const result: ModelRunResult = {
        model: { id: choice.id, source: choice.source, standIn: choice.standIn },
        baseline: evaluationResult(baseline, def.labelField),
        optimized: optimized === null ? null : evaluationResult(optimized, def.labelField),
        comparison: optimized === null ? {} : comparisonResults(baseline, optimized),
        optimizer: optimizerName === "none" ? null : {
          name: optimizerLabel(optimizerName), bestTrial: run?.bestTrial ?? null,
          trials: (run?.trials ?? []).map((t) => ({ index: t.index, kind: t.kind, score: t.score, choices: t.choices, error: t.error })),
        },
        program: programOf(tuned),
        ...(perSeed.length > 1 ? { seeds: perSeed, gain: gainOf(perSeed) } : {}),
      };
      for (const [metric, c] of Object.entries(result.comparison)) log(`${metric}${tag}: optimized − baseline ${describeComparison(c)}`);
      models.push({ choice, baseline, optimized, run, tuned, result, registryVersion, providerCalls: providerCalls - before });
    }
    adjustReportComparisons(models.map((m) => m.result));
  } finally {
    off();
    globalConfig.lm = saved.lm;
    globalConfig.lab = saved.lab;
  }
  const manifest: Manifest = {
    experiment: { file: loaded.file === "" ? null : shownPath(loaded.file, cwd), sha256: loaded.sha256 === "" ? null : loaded.sha256 },
    dataset: { name: dataset.info.name, files: { ...dataset.info.files } },
    typelm: libraryVersion(),
    node: process.versions.node,
    models: models.map((m) => m.choice.id),
    seed,
    ...(seedCount > 1 ? { seeds: seedCount } : {}),
    limit: limit ?? null,
    options: {
      metrics: metrics.map(metricName),
      optimizer: optimizerName,
      optimizerOptions: JSON.parse(canonicalJson(recordedOptions(def.optimizerOptions ?? {}))) as unknown,
    },
  };
  return { definition: def, dataset, manifest, models, providerCalls, seed, limit: limit ?? null };
}

/** The experiment's dataset: a folder (relative to the experiment file), a bundled name, or splits given inline. */
async function datasetOf(def: ExperimentDefinition, dir: string): Promise<Dataset> {
  const source = def.dataset;
  if (typeof source === "string") {
    const looksLikePath = isAbsolute(source) || source.startsWith(".") || /[\\/]/.test(source);
    return loadDataset(looksLikePath ? resolve(dir, source) : source, def.signature === undefined ? {} : { signature: def.signature });
  }
  if (def.signature === undefined) {
    throw new ValidationError(`experiment "${def.name}": with { train, dev, test } given inline, "signature" is needed too`, { field: "signature" });
  }
  return inlineDataset(def.name, source, def.signature);
}

function inlineDataset(name: string, splits: ExperimentSplits, signature: SignatureClass): Dataset {
  const take = (split: "train" | "dev" | "test") => splits[split].map((e, i) => {
    if (!(e instanceof FewShotExample) && (e === null || typeof e !== "object" || typeof (e as FewShotExample).input !== "object")) {
      throw new ValidationError(`experiment "${name}": dataset.${split}[${i}] is not an example ({ input, output })`, { field: `dataset.${split}` });
    }
    return e.id === undefined || e.id === null ? new FewShotExample({ id: `${split}-${i + 1}`, input: e.input, output: e.output }) : e;
  });
  const data = { train: take("train"), dev: take("dev"), test: take("test") };
  const hash = (xs: FewShotExample[]) => nodeCrypto().createHash("sha256").update(canonicalJson(xs.map((e) => ({ id: e.id, input: e.input, output: e.output })))).digest("hex");
  const splitsInfo = {
    train: { rows: data.train.length, sha256: hash(data.train) },
    dev: { rows: data.dev.length, sha256: hash(data.dev) },
    test: { rows: data.test.length, sha256: hash(data.test) },
  };
  // Given inline, the "files" are the splits, hashed as canonical JSON.
  const files = Object.fromEntries(Object.entries(splitsInfo).map(([k, v]) => [k, v.sha256]));
  return { ...data, signature, info: { name, path: "", licence: null, source: null, splits: splitsInfo, files } };
}

function makeOptimizer(
  def: ExperimentDefinition, name: string,
  c: { choice: ModelChoice; seed: number; metrics: MetricSpec[]; signature: SignatureClass; trainSize: number },
): ExperimentOptimizer {
  const first = c.metrics[0];
  const metric: Metric = typeof first === "function" ? first : isMetricObject(first) ? first.metric : defaultMetric;
  if (typeof def.optimizer === "function") {
    const made = def.optimizer({ signature: c.signature, lm: c.choice.lm, seed: c.seed, metric });
    if (made === null || typeof made !== "object" || typeof (made as ExperimentOptimizer).compile !== "function") {
      throw new ValidationError(`experiment "${def.name}": the optimizer function must return an optimizer (an object with compile()); it returned ${typeof made}`, { field: "optimizer" });
    }
    return made;
  }
  const given = (def.optimizerOptions ?? {}) as Record<string, unknown>;
  const common = { seed: c.seed, metric, ...given };
  switch (name) {
    case "mipro": {
      // A small --limit leaves fewer training examples than the demos asked for: use them all rather than stop after the baseline.
      const kDemos = Math.min(typeof given.kDemos === "number" ? given.kDemos : 4, c.trainSize);
      return new MIPROv2({ promptModel: c.choice.lm, ...common, kDemos });
    }
    case "gepa":
      return new GEPA({ reflectionLM: c.choice.lm, ...common }) as unknown as ExperimentOptimizer;
    case "simple": {
      const kDemos = Math.min(typeof given.kDemos === "number" ? given.kDemos : 4, c.trainSize);
      return new SimpleOptimizer({ ...common, kDemos }) as unknown as ExperimentOptimizer;
    }
    default:
      throw new ValidationError(`experiment "${def.name}": unknown optimizer "${name}"; the known ones are "mipro", "gepa", "simple", "none"`, { field: "optimizer" });
  }
}

/** One call before the run, so a model that cannot be reached stops it with a clear error instead of a run of failed rows. */
async function preflight(program: Module, example: FewShotExample | undefined, model: ModelChoice): Promise<void> {
  if (example === undefined) throw new ValidationError("The test split is empty: nothing to evaluate (is --limit 0?)", { field: "limit" });
  try {
    await program.call(example.input);
  } catch (error) {
    if (!(error instanceof LMError || error instanceof ConfigurationError)) return; // it answered; a bad reply is scored later
    throw new ConfigurationError(
      `The model ${model.id} (from ${model.source}) could not be used: ${error.message.replace(/\.+$/, "")}. ` +
        "Check that the server is running and reachable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST) and that its key is set, " +
        "or choose another model with --lm provider/model (or leave --lm and TYPELM_LM unset for the offline stand-in).",
      { cause: error },
    );
  }
}

export function evaluationResult(report: EvaluationReport, field: string | undefined): EvaluationResult {
  return {
    metrics: report.metrics,
    ci: report.ci,
    ciMethod: report.ciMethod,
    failures: report.failures.length,
    examples: report.results.length,
    confusion: field === undefined ? null : report.confusion(field),
    perLabel: field === undefined ? null : report.perLabel(field),
    rows: resultRows(report.results),
  };
}

export function programOf(module: Module): Record<string, PredictorResult> {
  return Object.fromEntries(module.namedPredictors().map(([path, p]) => [path, {
    instruction: p.instruction,
    demos: p.demos.map((d) => ({ id: d.id ?? null, input: d.input, output: d.output })),
  }]));
}

function limited(data: Dataset, limit: number | undefined): Dataset {
  if (limit === undefined) return data;
  return { ...data, train: data.train.slice(0, limit), dev: data.dev.slice(0, limit), test: data.test.slice(0, limit) };
}

function shaOf(data: Dataset): Record<string, string> {
  return Object.fromEntries(Object.entries(data.info.splits).map(([split, s]) => [split, s.sha256]));
}


function checkCount(value: number | undefined, name: string, min = 1): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min) {
    throw new ValidationError(`--${name} expects a whole number ≥ ${min}; received ${String(value)}`, { field: name });
  }
  return value;
}

export function metricName(spec: MetricSpec | undefined): string {
  if (typeof spec === "string") return spec;
  const named = (spec as { metricName?: unknown; name?: unknown } | undefined);
  if (typeof named?.metricName === "string") return named.metricName;
  return typeof named?.name === "string" && named.name !== "" ? named.name : "metric";
}

function formatMetrics(metrics: Record<string, number>): string {
  return Object.entries(metrics).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(", ");
}

export function libraryVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
}

/**
 * A path for the manifest that does not depend on the machine: a bundled file relative to typelm's
 * package root, else relative to the working folder when inside it; absolute otherwise.
 */
function shownPath(file: string, cwd: string): string {
  for (const base of [packageRoot(), cwd]) {
    const rel = relative(base, file);
    if (!rel.startsWith("..") && !isAbsolute(rel)) return rel.split(sep).join("/");
  }
  return file;
}

function optimizerLabel(name: string): string {
  return ({ mipro: "MIPROv2", gepa: "GEPA", simple: "SimpleOptimizer" } as Record<string, string>)[name] ?? name;
}

function seedResult(seed: number, baseline: EvaluationReport, optimized: EvaluationReport, metrics: readonly MetricSpec[]): SeedResult {
  const c = compare(baseline, optimized, { metric: metricName(metrics[0]) });
  return { seed, baseline: c.a, optimized: c.b, diff: c.diff, pValue: c.pValue };
}

/** Mean, sample standard deviation (n − 1), min and max of the seeds' differences. */
export function gainOf(seeds: readonly SeedResult[]): { mean: number; sd: number; min: number; max: number } {
  const d = seeds.map((x) => x.diff);
  const mean = d.reduce((a, b) => a + b, 0) / d.length;
  const sd = d.length < 2 ? 0 : Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / (d.length - 1));
  return { mean, sd, min: Math.min(...d), max: Math.max(...d) };
}
