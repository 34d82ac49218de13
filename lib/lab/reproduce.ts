import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { globalConfig } from "../config.js";
import { ConfigurationError, LMError, ValidationError } from "../errors.js";
import { compare, describeComparison } from "../evaluate/compare.js";
import { Evaluation } from "../evaluate/evaluation.js";
import type { EvaluationReport } from "../evaluate/report.js";
import type { Interval, PairedTest } from "../evaluate/stats.js";
import { Instrumentation } from "../instrument/bus.js";
import type { Module } from "../module.js";
import { MIPROv2 } from "../optimize/mipro.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { LabStore } from "../store/lab-store.js";
import { Registry } from "../store/registry.js";
import { loadDataset, packageRoot, type Dataset } from "./datasets.js";
import { experimentNamed, type Experiment } from "./experiments.js";
import { chooseModel, type ModelChoice } from "./model-choice.js";
import { drawCharts, renderReport } from "./report-md.js";

export interface ReproduceOptions {
  experiment: string;
  /** `provider/model`; else TYPELM_LM, a local Ollama, or the offline stand-in. */
  lm?: string | undefined;
  /** Use at most this many examples of each split. */
  limit?: number | undefined;
  /** MIPROv2's seed (default 0). */
  seed?: number | undefined;
  /** The LM response cache (default on, in the lab store's file). */
  cache?: boolean;
  /** Where `reports/` and `.typelm/lab.sqlite` go (default: the working directory). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Progress lines (the CLI prints them on standard error). */
  log?: (line: string) => void;
  ollamaProbeMs?: number;
}

/** One evaluation as results.json keeps it: only what the same inputs reproduce exactly. */
export interface EvaluationResult {
  metrics: Record<string, number>;
  /** Metric name → 95% interval (percentile bootstrap, 2,000 resamples, seed 0): `report.ci`. */
  ci: Record<string, Interval>;
  failures: number;
  examples: number;
  confusion: { field: string; labels: string[]; matrix: number[][]; unanswered: number[] } | null;
  perLabel: Record<string, { precision: number; recall: number; f1: number; support: number }> | null;
}

/** Optimized against baseline on one metric, paired by example: `compare(baseline, optimized)`. */
export interface ComparisonResult {
  /** Baseline and optimized values, and optimized − baseline. */
  a: number;
  b: number;
  diff: number;
  /** Paired bootstrap interval of the difference at `confidence`. */
  ci: Interval;
  confidence: number;
  pValue: number;
  significant: boolean;
  test: PairedTest;
  /** Pairs, and how many examples scored higher / lower after optimization. */
  n: number;
  better: number;
  worse: number;
}

export interface PredictorResult {
  instruction: string;
  demos: { id: string | null; input: Record<string, unknown>; output: Record<string, unknown> }[];
}

/** results.json: no timings, dates, run ids, costs or token counts, so equal inputs give equal bytes. */
export interface ReproduceResults {
  experiment: string;
  model: { id: string; source: string; standIn: boolean };
  seed: number;
  limit: number | null;
  library: { name: string; version: string };
  dataset: {
    name: string;
    licence: string | null;
    source: { repository: string; commit: string | null } | null;
    splits: Record<string, { rows: number; sha256: string; used: number }>;
  };
  baseline: EvaluationResult;
  optimized: EvaluationResult;
  /** Metric name → optimized against baseline. */
  comparison: Record<string, ComparisonResult>;
  optimizer: {
    name: "MIPROv2";
    mode: string;
    kDemos: number;
    bestTrial: number | null;
    trials: { index: number; kind: string; score: number | null; choices: Record<string, Record<string, number>>; error: string | null }[];
  };
  program: Record<string, PredictorResult>;
}

export interface ReproduceOutcome {
  dir: string;
  results: ReproduceResults;
  model: ModelChoice;
  /** Requests sent to a provider (cache hits excluded). */
  providerCalls: number;
  registryVersion: number;
  /** Charts that could not be drawn, with why. */
  chartProblems: string[];
}

/**
 * Runs an experiment end to end: baseline evaluation on the test split, MIPROv2 on train/dev,
 * evaluation of the optimized program on test, registry store; writes reports/<experiment>/.
 */
export async function reproduce(options: ReproduceOptions): Promise<ReproduceOutcome> {
  const experiment = experimentNamed(options.experiment);
  const limit = checkCount(options.limit, "limit");
  const seed = checkCount(options.seed, "seed", 0) ?? 0;
  const cwd = resolve(options.cwd ?? process.cwd());
  const log = options.log ?? (() => {});
  const labPath = join(cwd, ".typelm", "lab.sqlite");
  checkReportWritable(join(cwd, "reports", experiment.name), REPORT_FILES);
  const data = limited(await loadDataset(experiment.dataset), limit);
  const model = await chooseModel({
    lm: options.lm, env: options.env, cachePath: options.cache === false ? undefined : labPath, ollamaProbeMs: options.ollamaProbeMs,
  });
  log(`model: ${model.description}`);

  const saved = { lm: globalConfig.lm, lab: globalConfig.lab };
  let providerCalls = 0;
  const off = Instrumentation.subscribe("lm.request.start", () => { providerCalls++; });
  try {
    // MIPROv2 proposes with the configured LM and records into the configured store.
    globalConfig.lm = model.lm;
    globalConfig.lab = { path: labPath };
    const lab = LabStore.open(labPath);
    const program = experiment.program(data.signature);
    await preflight(program, data.test[0], model);
    const dir = reportDir(join(cwd, "reports", experiment.name));

    const evaluate = (moduleInstance: Module, name: string) => new Evaluation({ name, lab }).evaluate({
      moduleInstance, testExamples: data.test, metrics: experiment.metrics,
    });
    log(`baseline: evaluating ${data.test.length} test examples`);
    const baseline = await evaluate(program, `${experiment.name} baseline`);
    log(`baseline: ${formatMetrics(baseline.metrics)}`);
    log(`MIPROv2 (${experiment.mipro.mode}, seed ${seed}) on ${data.train.length} train / ${data.dev.length} dev examples`);
    // A small --limit leaves fewer training examples than the experiment's demos: use them all rather than stop after the baseline.
    const kDemos = Math.min(experiment.mipro.kDemos, data.train.length);
    const mipro = new MIPROv2({ ...experiment.mipro, kDemos, seed, promptModel: model.lm });
    const tuned = await mipro.compile({ moduleInstance: program, trainingExamples: data.train, validationExamples: data.dev });
    log(`optimized: evaluating ${data.test.length} test examples`);
    const optimized = await evaluate(tuned, `${experiment.name} optimized`);
    log(`optimized: ${formatMetrics(optimized.metrics)}`);
    const run = mipro.lastRun;
    const headline = optimized.metrics[metricName(experiment.metrics[0])] ?? null;
    const stored = await new Registry({ path: labPath }).store({
      moduleInstance: tuned, name: experiment.name,
      metadata: { experiment: experiment.name, model: model.id, seed, limit, score: headline, datasetSha256: shaOf(data) },
    });

    const results: ReproduceResults = {
      experiment: experiment.name,
      model: { id: model.id, source: model.source, standIn: model.standIn },
      seed, limit: limit ?? null,
      library: { name: "typelm", version: libraryVersion() },
      dataset: {
        name: data.info.name, licence: data.info.licence, source: data.info.source,
        splits: Object.fromEntries((["train", "dev", "test"] as const).map((s) => [s, { ...data.info.splits[s], used: data[s].length }])),
      },
      baseline: evaluationResult(baseline, experiment),
      optimized: evaluationResult(optimized, experiment),
      comparison: comparisonResults(baseline, optimized),
      optimizer: {
        name: "MIPROv2", mode: experiment.mipro.mode, kDemos, bestTrial: run?.bestTrial ?? null,
        trials: (run?.trials ?? []).map((t) => ({ index: t.index, kind: t.kind, score: t.score, choices: t.choices, error: t.error })),
      },
      program: programOf(tuned),
    };
    for (const [metric, c] of Object.entries(results.comparison)) log(`${metric}: optimized − baseline ${describeComparison(c)}`);
    writeFileSync(join(dir, "results.json"), JSON.stringify(results, null, 2) + "\n");
    const charts = await drawCharts(dir, baseline, optimized, run);
    writeFileSync(join(dir, "report.md"), renderReport({
      results, experiment, model, charts, providerCalls,
      cost: { baseline: baseline.cost, optimized: optimized.cost, optimizer: (run?.trials ?? []).reduce((sum, t) => sum + t.cost, 0) },
    }));
    log(`wrote ${join(dir, "report.md")} and results.json; registry "${experiment.name}" v${stored.version}; provider calls: ${providerCalls}`);
    return { dir, results, model, providerCalls, registryVersion: stored.version, chartProblems: charts.problems };
  } finally {
    off();
    globalConfig.lm = saved.lm;
    globalConfig.lab = saved.lab;
  }
}

/** What a reproduction writes into its report folder. */
const REPORT_FILES = ["results.json", "report.md", "metrics.png", "candidates.png"] as const;

/**
 * Checks, before anything runs and without changing anything, that the report can be written: each
 * file that exists is a file open for writing, and the folder (or the nearest one that exists, when
 * it is still to be made) takes a new file. Otherwise a run of minutes would end in EISDIR or EACCES.
 */
export function checkReportWritable(dir: string, files: readonly string[]): void {
  const refuse = (detail: string, cause?: unknown) => new ConfigurationError(
    `Cannot write the report to ${dir}: ${detail}; remove what is in the way, fix its permissions or run from another directory`,
    cause === undefined ? undefined : { cause },
  );
  const reason = (error: unknown) => (error as { message?: string }).message ?? String(error);
  let folder = dir;
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  if (!statSync(folder).isDirectory()) throw refuse(`${folder} is a file, not a folder`);
  for (const file of folder === dir ? files.map((f) => join(dir, f)) : []) {
    if (!existsSync(file)) continue;
    if (statSync(file).isDirectory()) throw refuse(`${file} is a directory, not a file`);
    try {
      closeSync(openSync(file, "r+")); // opens for writing without truncating
    } catch (error) {
      throw refuse(`${file} cannot be written (${reason(error)})`, error);
    }
  }
  const probe = join(folder, `.typelm-write-check-${process.pid}`);
  try {
    writeFileSync(probe, "", { flag: "wx" });
    unlinkSync(probe);
  } catch (error) {
    throw refuse(`${folder} does not take new files (${reason(error)})`, error);
  }
}

/** Makes the report folder before the run, so a folder that cannot be written stops it at once with its path. */
function reportDir(dir: string): string {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new ConfigurationError(
      `Cannot write the report to ${dir}: ${error instanceof Error ? error.message : String(error)}. ` +
        "Expected a folder that can be created and written; remove what is in the way or run from another directory.",
      { cause: error },
    );
  }
  return dir;
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

function evaluationResult(report: EvaluationReport, experiment: Experiment): EvaluationResult {
  const field = experiment.labelField;
  return {
    metrics: report.metrics,
    ci: report.ci,
    failures: report.failures.length,
    examples: report.results.length,
    confusion: field === undefined ? null : report.confusion(field),
    perLabel: field === undefined ? null : report.perLabel(field),
  };
}

/** Each metric of the run, optimized against baseline (no timings: the same rows give the same bytes). */
export function comparisonResults(baseline: EvaluationReport, optimized: EvaluationReport): Record<string, ComparisonResult> {
  return Object.fromEntries(Object.keys(baseline.metrics).map((metric) => {
    const c = compare(baseline, optimized, { metric });
    const result: ComparisonResult = {
      a: c.a, b: c.b, diff: c.diff, ci: c.ci, confidence: c.confidence, pValue: c.pValue, significant: c.significant, test: c.test,
      n: c.n, better: c.better.length, worse: c.worse.length,
    };
    return [metric, result];
  }));
}

function programOf(module: Module): Record<string, PredictorResult> {
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

function metricName(spec: Experiment["metrics"][number] | undefined): string {
  return typeof spec === "string" ? spec : spec?.name ?? "accuracy";
}

function formatMetrics(metrics: Record<string, number>): string {
  return Object.entries(metrics).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(", ");
}

function libraryVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
}
