// lib/lab/experiment/: an experiment from its definition to its results — defineExperiment (define.ts),
// loading experiment and metric files (load.ts, load-metric.ts), the plan of a run (plan.ts), the run
// itself (this file: per model, the baseline, the optimizer, the optimized program, the registry),
// resume after a crash (resume.ts), and reproduce (reproduce.ts: run, report, gate).
import { readFileSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { canonicalJson } from "../../canonical-json.js";
import { globalConfig } from "../../config.js";
import { ValidationError } from "../../errors.js";
import { compare, describeComparison } from "../../evaluate/compare.js";
import type { EvaluationReport } from "../../evaluate/report.js";
import { type MetricSpec, resolveMetrics } from "../../evaluate/scoring.js";
import { Instrumentation } from "../../instrument/bus.js";
import { checkJudgeModels, checkJudgesAnswer } from "../../judge/judge-check.js";
import type { Module } from "../../module.js";
import { inExperiment } from "../../optimize/recorder.js";
import type { SignatureClass } from "../../signature/signature.js";
import { type Lab, LabStore } from "../../store/lab-store.js";
import type { OptimizationRun } from "../../store/records.js";
import { Registry } from "../../store/registry/registry.js";
import { type Dataset, packageRoot } from "../dataset/load.js";
import { resultRows } from "../gate/gate.js";
import { checkLabelField, type ExperimentDefinition, type ProgramContext } from "./define.js";
import { isExperiment } from "./is-experiment.js";
import type { LoadedExperiment } from "./load.js";
import { chooseModel, type ModelChoice } from "./model-choice.js";
import { makeOptimizer, optimizerLabel, optimizerMetric } from "./optimizer.js";
import { checkCount, type ExperimentPlan, planExperiment, type RunExperimentOptions } from "./plan.js";
import { preflight } from "./preflight.js";
import { recordedOptions } from "./recorded-options.js";
import { adjustReportComparisons, type ComparisonResult, comparisonResults, type EvaluationResult, type PredictorResult } from "./reproduce.js";
import { evaluateInRun } from "./resume.js";
import { datasetOf, limited, shaOf } from "./run-dataset.js";
import { inUserCode } from "./user-code.js";

export type { RunExperimentOptions } from "./plan.js";

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
export async function runExperiment<S extends SignatureClass>(experiment: LoadedExperiment | ExperimentDefinition<S>, options: RunExperimentOptions = {}): Promise<ExperimentRun> {
  return runPlanned(experiment, planExperiment(options));
}

/** `runExperiment` with its options resolved (`planExperiment`): what `runAndReport` calls with the plan it made. */
export async function runPlanned<S extends SignatureClass>(experiment: LoadedExperiment | ExperimentDefinition<S>, plan: ExperimentPlan): Promise<ExperimentRun> {
  // Any signature's experiment: the program function's parameter makes ExperimentDefinition<S> no ExperimentDefinition.
  const loaded: Pick<LoadedExperiment, "definition" | "dir" | "file" | "sha256"> = isExperiment(experiment)
    ? { definition: experiment as unknown as ExperimentDefinition, dir: plan.cwd, file: "", sha256: "" }
    : experiment as LoadedExperiment;
  const def = loaded.definition;
  const { limit, seed, cwd, log } = plan;
  const seedCount = checkCount(plan.seeds ?? loaded.definition.seeds, "seeds") ?? 1;
  // The team's lab on PostgreSQL when one is configured (checked before any model call), else the folder's file.
  const team = plan.store.team;
  const labPath = plan.store.file;
  const teamLab = team === undefined ? undefined : LabStore.open({ url: team });
  // Reached (connected, schema up to date) now: an unreachable lab stops the command before the
  // dataset is read or any model is asked, not after the first model's run was paid for.
  if (teamLab !== undefined) await teamLab.runs({ limit: 1 });
  const labLocation = team ?? labPath;
  const lmIds = plan.models.ids;
  if (new Set(lmIds).size !== lmIds.length) throw new ValidationError(`--lm lists the same model twice: ${lmIds.join(", ")}`, { field: "lm" });

  const dataset = limited(await datasetOf(def, loaded.dir), limit);
  plan.checkDataset?.(dataset);
  const metrics: MetricSpec[] = def.metrics === undefined ? ["accuracy"] : [...def.metrics];
  const optimizerName = typeof def.optimizer === "function" ? "custom" : def.optimizer ?? "mipro";
  if (seedCount > 1 && optimizerName === "none") {
    throw new ValidationError(`experiment "${def.name}": --seeds ${seedCount} runs the optimizer ${seedCount} times, but the experiment has optimizer "none"`, { field: "seeds" });
  }
  // What defineExperiment could not check without the dataset, before any model call: the label
  // field against the dataset's signature, the metrics together (no two of one name).
  if (def.labelField !== undefined) checkLabelField(`experiment "${def.name}"`, def.labelField, dataset.signature);
  resolveMetrics(metrics, []);
  const chooses = lmIds.length === 0 ? [undefined] : lmIds;
  const choices: ModelChoice[] = [];
  for (const id of chooses) {
    choices.push(await chooseModel({ lm: id, env: plan.models.env, cachePath: plan.store.cache, ollamaProbeMs: plan.models.ollamaProbeMs }));
  }
  // The named optimizer's constructor checks its options' values (a kDemos of -1, an unknown mode).
  if (optimizerName !== "none" && optimizerName !== "custom") {
    makeOptimizer(def, optimizerName, { choice: choices[0]!, seed, metric: () => 0, signature: dataset.signature, trainSize: dataset.train.length });
  }

  const saved = { lm: globalConfig.lm, lab: globalConfig.lab };
  let providerCalls = 0;
  const off = Instrumentation.subscribe("lm.request.start", () => { providerCalls++; });
  const models: ModelRun[] = [];
  try {
    globalConfig.lab = team === undefined ? { path: labPath } : { url: team };
    const lab: Lab = teamLab ?? LabStore.open(labPath);
    // The judges' models first, with no call: a judge with none, or judged by the offline stand-in, stops it here.
    for (const choice of choices) {
      globalConfig.lm = choice.lm;
      checkJudgeModels(metrics);
    }
    // Then one call of each judge (on the first test example, its expected outputs as the answer), before
    // any call of the program: a judge's missing package, key or server stops the run as the program's would.
    const judgesChecked = new Set<unknown>();
    for (const choice of choices) {
      globalConfig.lm = choice.lm;
      if (dataset.test[0] !== undefined) await checkJudgesAnswer(metrics, dataset.test[0], dataset.test[0].output, plan.models.checkMs, judgesChecked);
    }
    // Every model answers the check before anything runs: one that cannot be used stops the command
    // before another model's run has been paid for.
    const programs: Module[] = [];
    const checkCalls: number[] = [];
    for (const choice of choices) {
      const before = providerCalls;
      globalConfig.lm = choice.lm;
      const program = typeof def.program === "function"
        ? inUserCode("the experiment's program function", () => (def.program as (context: ProgramContext) => Module)({ signature: dataset.signature }))
        : def.program.clone();
      await preflight(program, dataset.test[0], choice, plan.models.checkMs);
      programs.push(program);
      checkCalls.push(providerCalls - before);
    }
    for (const [index, choice] of choices.entries()) {
      const before = providerCalls - checkCalls[index]!;
      const tag = choices.length > 1 ? ` (${choice.id})` : "";
      log(`model: ${choice.description}`);
      // Optimizers propose and reflect with the configured LM and record into the configured store.
      globalConfig.lm = choice.lm;
      const program = programs[index]!;
      // With --batch, running the same command again resumes an interrupted evaluation (resume.ts).
      const evaluate = (moduleInstance: Module, name: string) => evaluateInRun({
        name, lab, running: plan.resume.markers, batch: plan.resume.batch, log, moduleInstance, testExamples: dataset.test, metrics,
        command: { model: choice.id, experiment: loaded.sha256, dataset: dataset.info.files, seed, limit: limit ?? null },
        // Recorded in the run's config: what a gate checks a baseline run id against.
        config: { experiment: { name: def.name, dataset: dataset.info.name, testSha256: dataset.info.splits.test.sha256 } },
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
        const metric = optimizerMetric(metrics[0]!, program, [...dataset.train, ...dataset.dev]);
        const optimizer = makeOptimizer(def, optimizerName, { choice, seed, metric, signature: dataset.signature, trainSize: dataset.train.length });
        log(`${optimizerName}${tag} (seed ${seed}) on ${dataset.train.length} train / ${dataset.dev.length} dev examples`);
        const compile = () => optimizer.compile({ moduleInstance: program, trainingExamples: dataset.train, validationExamples: dataset.dev });
        // A named optimizer is typelm's; an optimizer function's is the experiment's own code.
        tuned = await inExperiment(def.name, () => (optimizerName === "custom" ? inUserCode("the experiment's optimizer (its compile())", compile) : compile()));
        run = (optimizer.lastRun as OptimizationRun | null | undefined) ?? null;
        log(`optimized${tag}: evaluating ${dataset.test.length} test examples`);
        optimized = await evaluate(tuned, `${def.name} optimized${tag}`);
        log(`optimized${tag}: ${formatMetrics(optimized.metrics)}`);
        const headline = optimized.metrics[metricName(metrics[0])] ?? null;
        if (plan.store.register) {
          const stored = await new Registry({ path: labLocation }).store({
            moduleInstance: tuned, name: def.name,
            metadata: { experiment: def.name, model: choice.id, seed, limit: limit ?? null, score: headline, datasetSha256: shaOf(dataset) },
          });
          registryVersion = stored.version;
        }
        // More seeds: the same optimizer again from each further seed, each result on the test split against the baseline.
        if (seedCount > 1) {
          perSeed.push(seedResult(seed, baseline, optimized, metrics));
          for (let s = seed + 1; s < seed + seedCount; s++) {
            const again = makeOptimizer(def, optimizerName, { choice, seed: s, metric, signature: dataset.signature, trainSize: dataset.train.length });
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
    if (lab.engine === "postgresql") await lab.flush();
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
    ...(report.warnings.length > 0 ? { warnings: [...report.warnings] } : {}),
  };
}

export function programOf(module: Module): Record<string, PredictorResult> {
  return Object.fromEntries(module.namedPredictors().map(([path, p]) => [path, {
    instruction: p.instruction,
    demos: p.demos.map((d) => ({ id: d.id ?? null, input: d.input, output: d.output })),
  }]));
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
