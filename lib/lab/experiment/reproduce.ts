import { appendFileSync, existsSync, lstatSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ConfigurationError, ValidationError } from "../../errors.js";
import { compare } from "../../evaluate/compare.js";
import type { EvaluationReport } from "../../evaluate/report.js";
import { holm } from "../../evaluate/stats/holm.js";
import type { CiMethod, Interval, PairedTest } from "../../evaluate/stats/methods.js";
import { redactString, redactedJson } from "../../instrument/redact.js";
import { packageRoot, type Dataset } from "../dataset/load.js";
import { checkBaselineIdentity, checkTolerance, gateLines, junitXml, markdownSummary, readBaseline, runGate, type BaselineRun, type GateBaseline, type GateResult, type ResultRow } from "../gate/gate.js";
import { metricsOf } from "../../evaluate/stored-run.js";
import { runById } from "../runs/find.js";
import { LabStore } from "../../store/lab-store.js";
import type { EvaluationRow, LabRun } from "../../store/records.js";
import { postgresRunById } from "../runs/team-store.js";
import { loadBundledExperiment, loadExperimentFile, type LoadedExperiment } from "./load.js";
import type { ModelChoice } from "./model-choice.js";
import { takeReportFolder } from "../report/folder.js";
import { chartsSkippedLine, drawCharts, renderReport } from "../report/report-md.js";
import { libraryVersion, runPlanned, type ExperimentRun, type Manifest, type ModelRunResult } from "./run.js";
import { planExperiment, type ExperimentPlan, type GateOptions, type GatePlan, type RunExperimentOptions } from "./plan.js";

export type { GateOptions } from "./plan.js";

/** The bundled experiments, in the order the help lists them: files in the package's experiments/ folder. */
export const BUNDLED_EXPERIMENTS = ["poem-sentiment", "banking77", "gsm8k", "restaurant8k"] as const;

export interface RunAndReportOptions extends RunExperimentOptions {
  /** The reports folder's parent (default `<cwd>/reports`); the report goes to `<out>/<name>/`. */
  out?: string | undefined;
  /** The regression gate (`--baseline`, `--max-drop`, `--junit`): compare this run's test rows with a baseline's. */
  gate?: GateOptions | undefined;
}

export interface ReproduceOptions extends Omit<RunAndReportOptions, "lm"> {
  /** A bundled experiment's name. */
  experiment: string;
  /** `provider/model` (one or several); else TYPELM_LM, a local Ollama, or the offline stand-in. */
  lm?: readonly string[] | string | undefined;
}

/** One evaluation as results.json keeps it: only what the same inputs reproduce exactly. */
export interface EvaluationResult {
  metrics: Record<string, number>;
  /** Metric name → 95% interval: `report.ci` (modified Wilson for shares, BCa bootstrap otherwise). */
  ci: Record<string, Interval>;
  /** Metric name → how its interval was computed: `report.ciMethod`. */
  ciMethod?: Record<string, CiMethod>;
  failures: number;
  examples: number;
  confusion: { field: string; labels: string[]; matrix: number[][]; unanswered: number[] } | null;
  perLabel: Record<string, { precision: number; recall: number; f1: number; support: number }> | null;
  /** Every test example: its id, expected and predicted outputs and per-example scores (what `--baseline` pairs). */
  rows: ResultRow[];
  /** The evaluation's warnings (`report.warnings`), only when it gave some. */
  warnings?: string[];
}

/** Optimized against baseline on one metric, paired by example: `compare(baseline, optimized)`. */
export interface ComparisonResult {
  /** Baseline and optimized values, and optimized − baseline. */
  a: number;
  b: number;
  diff: number;
  /** The difference's interval at `confidence`, computed as `ciMethod` says. */
  ci: Interval;
  ciMethod?: CiMethod;
  confidence: number;
  pValue: number;
  /** Holm-adjusted over every comparison of the report (metrics × models). */
  pAdjusted?: number;
  significant: boolean;
  test: PairedTest;
  /** The smallest true difference this n detects with 80% power (null: none can be). */
  mde?: number | null;
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
  /** The first model's (the only one's, usually); `models` has every model's part. */
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
  /** null when the experiment's optimizer is "none". */
  optimized: EvaluationResult | null;
  /** Metric name → optimized against baseline. */
  comparison: Record<string, ComparisonResult>;
  optimizer: {
    name: string;
    /** MIPROv2's and GEPA's budget mode, else null. */
    mode: string | null;
    kDemos: number | null;
    bestTrial: number | null;
    trials: { index: number; kind: string; score: number | null; choices: Record<string, unknown>; error: string | null }[];
  } | null;
  program: Record<string, PredictorResult>;
  /** Model id → that model's baseline, optimized program and comparison. */
  models: Record<string, ModelRunResult>;
  /** What went in: file and data hashes, versions, models, seed, options. */
  manifest: Manifest;
}

export interface ReproduceOutcome {
  dir: string;
  results: ReproduceResults;
  /** The first model. */
  model: ModelChoice;
  run: ExperimentRun;
  /** Requests sent to providers, all models (cache hits excluded). */
  providerCalls: number;
  /** The regression gate's verdict, when `gate` was given. */
  gate?: GateResult;
  /** The first model's registry version (null without an optimizer). */
  registryVersion: number | null;
  /** Charts that could not be drawn, with why. */
  chartProblems: string[];
}

/** `typelm reproduce <name>`: the bundled experiment file of that name, run and reported as `typelm run` does. */
export async function reproduce(options: ReproduceOptions): Promise<ReproduceOutcome> {
  const name = options.experiment;
  if (!(BUNDLED_EXPERIMENTS as readonly string[]).includes(name)) {
    throw new ValidationError(`Unknown experiment "${name}": the known ones are ${BUNDLED_EXPERIMENTS.join(", ")}; run a file of your own with typelm run <file>`, { field: "experiment" });
  }
  const file = join(packageRoot(), "experiments", `${name}.ts`);
  if (!existsSync(file)) throw new ConfigurationError(`The bundled experiment file ${file} is missing: is the package installed whole?`);
  // The name is known before the file loads: a report folder that cannot be written stops it first.
  const cwd = resolve(options.cwd ?? process.cwd());
  checkReportWritable(join(options.out === undefined ? join(cwd, "reports") : resolve(cwd, options.out), name), reportFiles(options.lm));
  return runAndReport(await loadBundledExperiment(file, join(packageRoot(), "dist/experiments", `${name}.js`), cwd), options);
}

/**
 * `typelm run <file>`: loads the experiment file, checks the report folder can be written, runs the
 * experiment once per model and writes `<out>/<name>/` (results.json, report.md, charts).
 */
export async function runAndReport(file: string | LoadedExperiment, options: RunAndReportOptions = {}): Promise<ReproduceOutcome> {
  // The options and the environment, resolved once: everything below reads the plan.
  const plan = planExperiment(options);
  const cwd = plan.cwd;
  const loaded = typeof file === "string" ? await loadExperimentFile(file, cwd) : file;
  const dir = join(options.out === undefined ? join(cwd, "reports") : resolve(cwd, options.out), loaded.definition.name);
  checkReportWritable(dir, reportFiles(plan.models.ids));
  // The baseline is read and checked before anything runs (and before this run's report could replace it).
  const baseline = plan.gate === undefined ? undefined : await readGateBaseline(plan.gate, plan);
  // Held from before the run until the last file is written: a second run for the same folder is refused at once.
  const folder = takeReportFolder(dir);
  try {
    const run = await runPlanned(loaded, baseline === undefined ? plan : {
      // A gate run checks its baseline against the data before any model call, and stores no registry version.
      ...plan,
      store: { ...plan.store, register: false },
      checkDataset: (dataset: Dataset) => {
        checkBaselineIdentity(baseline, { experiment: loaded.definition.name, testSha256: dataset.info.splits.test.sha256 });
        checkBaselineIds(baseline, dataset.test.map((e) => String(e.id)));
      },
    });
    const results = resultsOf(run);
    const log = plan.log;
    const pngs: [string, Buffer][] = [];
    const charts = await drawCharts((name, png) => pngs.push([name, png]), run.models.map((m) => ({ id: m.choice.id, baseline: m.baseline, optimized: m.optimized, run: m.run ?? undefined })));
    const md = redactString(renderReport({
      results, summary: loaded.definition.summary ?? "", models: run.models.map((m) => m.choice), charts, providerCalls: run.providerCalls,
      cost: run.models.map((m) => ({
        baseline: m.baseline.cost, optimized: m.optimized?.cost ?? 0, optimizer: (m.run?.trials ?? []).reduce((sum, t) => sum + t.cost, 0),
      })).reduce((a, c) => ({ baseline: a.baseline + c.baseline, optimized: a.optimized + c.optimized, optimizer: a.optimizer + c.optimizer })),
      registered: run.models.some((m) => m.registryVersion !== null),
      bundledDataset: run.dataset.info.path.startsWith(join(packageRoot(), "datasets")),
    }));
    // Everything is made before the first file is replaced, and each file is replaced whole (written
    // aside, then renamed over the old one or over a link there, never through it).
    for (const [name, data] of [["results.json", resultsJson(results)] as const, ...pngs, ["report.md", md] as const]) folder.write(name, data);
    if (charts.skipped !== undefined) log(chartsSkippedLine(charts.skipped));
    const first = run.models[0]!;
    const versions = run.models.filter((m) => m.registryVersion !== null).map((m) => `v${m.registryVersion}`);
    log(`wrote ${join(dir, "report.md")} and results.json` + (versions.length > 0 ? `; registry "${loaded.definition.name}" ${versions.join(", ")}` : "") + `; provider calls: ${run.providerCalls}`);
    const gate = baseline === undefined ? undefined : finishGate(baseline, run, plan.gate!, cwd, log);
    return {
      dir, results, model: first.choice, run, providerCalls: run.providerCalls, registryVersion: first.registryVersion, chartProblems: charts.problems,
      ...(gate === undefined ? {} : { gate }),
    };
  } finally {
    folder.release();
  }
}

/** results.json's text: registered secrets masked wherever they appear (an instruction, a demo), the JSON still valid. */
function resultsJson(results: ReproduceResults): string {
  return JSON.stringify(JSON.parse(redactedJson(results)), null, 2) + "\n";
}

function resultsOf(run: ExperimentRun): ReproduceResults {
  const first = run.models[0]!.result;
  const options = (run.definition.optimizerOptions ?? {}) as Record<string, unknown>;
  const mipro = run.manifest.options.optimizer === "mipro";
  const given = typeof options.kDemos === "number" ? options.kDemos : undefined;
  // MIPROv2 and SimpleOptimizer use at most as many demos as there are training examples (a small --limit).
  const kDemos = mipro || run.manifest.options.optimizer === "simple" ? Math.min(given ?? 4, run.dataset.train.length) : given ?? null;
  const mode = typeof options.mode === "string" ? options.mode : mipro ? "light" : null;
  return {
    experiment: run.definition.name,
    model: first.model,
    seed: run.seed,
    limit: run.limit,
    library: { name: "typelm", version: libraryVersion() },
    dataset: {
      name: run.dataset.info.name, licence: run.dataset.info.licence, source: run.dataset.info.source,
      splits: Object.fromEntries((["train", "dev", "test"] as const).map((s) => [s, { ...run.dataset.info.splits[s], used: run.dataset[s].length }])),
    },
    baseline: first.baseline,
    optimized: first.optimized,
    comparison: first.comparison,
    optimizer: first.optimizer === null ? null : { name: first.optimizer.name, mode, kDemos, bestTrial: first.optimizer.bestTrial, trials: first.optimizer.trials },
    program: first.program,
    models: Object.fromEntries(run.models.map((m) => [m.choice.id, m.result])),
    manifest: run.manifest,
  };
}

/** What a run writes into its report folder (charts per model when there are several). */
function reportFiles(lm: RunAndReportOptions["lm"]): string[] {
  const several = Array.isArray(lm) && lm.length > 1;
  return ["results.json", "report.md", "metrics.png", ...(several ? [] : ["candidates.png"])];
}

/**
 * Checks, before anything runs and without changing anything, that the report can be written: no
 * report file's name is taken by a directory, and the folder (or the nearest one that exists, when it
 * is still to be made) takes a new file. Otherwise a run of minutes would end in EISDIR or EACCES.
 * Existing files are replaced by rename, so only the folder's permissions matter; a symbolic link at a
 * report file's name is replaced by the file, never followed.
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
    const found = lstatSync(file, { throwIfNoEntry: false });
    if (found?.isDirectory() === true) throw refuse(`${file} is a directory, not a file`);
  }
  const probe = join(folder, `.typelm-write-check-${process.pid}`);
  try {
    writeFileSync(probe, "", { flag: "wx" });
    unlinkSync(probe);
  } catch (error) {
    throw refuse(`${folder} does not take new files (${reason(error)})`, error);
  }
}

/** Each metric of the run, optimized against baseline (no timings: the same rows give the same bytes). */
export function comparisonResults(baseline: EvaluationReport, optimized: EvaluationReport): Record<string, ComparisonResult> {
  return Object.fromEntries(Object.keys(baseline.metrics).map((metric) => {
    const c = compare(baseline, optimized, { metric });
    const result: ComparisonResult = {
      a: c.a, b: c.b, diff: c.diff, ci: c.ci, ciMethod: c.ciMethod, confidence: c.confidence, pValue: c.pValue, pAdjusted: c.pAdjusted,
      significant: c.significant, test: c.test, mde: c.mde, n: c.n, better: c.better.length, worse: c.worse.length,
    };
    return [metric, result];
  }));
}


/**
 * Holm's adjustment over every comparison of one report (each metric of each model): sets each
 * comparison's `pAdjusted`. `significant` stays on the unadjusted p (the first metric is the primary one).
 */
export function adjustReportComparisons(parts: readonly { comparison: Record<string, ComparisonResult> }[]): void {
  const family = parts.flatMap((p) => Object.values(p.comparison));
  const adjusted = holm(family.map((c) => c.pValue));
  family.forEach((c, i) => { c.pAdjusted = adjusted[i]!; });
}

async function readGateBaseline(gate: GateOptions, plan: ExperimentPlan): Promise<GateBaseline> {
  const cwd = plan.cwd;
  if (typeof gate.baseline !== "string" || gate.baseline === "") {
    throw new ValidationError("--baseline expects a results.json file or an evaluation run id", { field: "baseline" });
  }
  if (gate.tolerance !== undefined) checkTolerance(gate.tolerance);
  if (gate.maxDrop !== undefined) checkTolerance(gate.maxDrop, "--max-drop");
  const team = plan.store.team;
  const spec = gate.baseline;
  // A run of a team's lab is read (asynchronously) before readBaseline asks for it: when no file of that name exists.
  const teamRun = team === undefined || existsSync(resolve(cwd, spec)) || spec.endsWith(".json") || spec.includes("/") || spec.includes("\\")
    ? undefined
    : await postgresRunById(LabStore.open({ url: team }), spec);
  return readBaseline(spec, cwd, (id) => {
    if (teamRun !== undefined) return baselineRun(teamRun);
    const path = plan.store.file;
    if (!existsSync(path)) throw new ValidationError(`--baseline: "${id}" is neither a file nor a run id: no lab store at ${path}`, { field: "baseline" });
    const store = LabStore.open(path);
    try {
      return baselineRun(runById(store, id));
    } finally {
      store.close();
    }
  });
}

function baselineRun(run: LabRun): BaselineRun {
  if (run.kind !== "evaluation") {
    throw new ValidationError(`--baseline: run ${run.id} is an ${run.kind} run; the baseline is a results.json or an evaluation run (typelm runs --kind evaluation)`, { field: "baseline" });
  }
  return { id: run.id, rows: run.rows, metrics: metricsOf(run), status: run.status, config: run.config };
}

/** The baseline must hold the test examples this run evaluates: said before any model call. */
function checkBaselineIds(baseline: GateBaseline, ids: readonly string[]): void {
  const want = new Set(ids);
  for (const [model, report] of baseline.models) {
    const have = new Set(report.results.map((r) => r.exampleId ?? `#${r.index}`));
    const missing = ids.find((id) => !have.has(id));
    const extra = [...have].find((id) => !want.has(id));
    if (missing !== undefined || extra !== undefined) {
      throw new ValidationError(
        `--baseline: ${baseline.source}${model === "*" ? "" : ` (model "${model}")`} holds other test examples than this run: ` +
          (missing !== undefined ? `"${missing}" is not in the baseline` : `"${extra}" is in the baseline but not in this run's test split`) +
          " (same dataset, split and --limit as the baseline?)",
        { field: "baseline" },
      );
    }
  }
}

function finishGate(baseline: GateBaseline, run: ExperimentRun, gate: GatePlan, cwd: string, log: (line: string) => void): GateResult {
  const result = runGate(
    baseline,
    run.models.map((m) => ({ model: m.choice.id, report: m.optimized ?? m.baseline })),
    run.manifest.options.metrics,
    { tolerance: gate.tolerance ?? gate.maxDrop, allowUnderpowered: gate.allowUnderpowered },
  );
  for (const line of gateLines(result)) log(line);
  if (gate.junit !== undefined) {
    const file = resolve(cwd, gate.junit);
    writeFileSync(file, junitXml(result, run.definition.name));
    log(`wrote ${file}`);
  }
  const summary = gate.summaryFile;
  if (typeof summary === "string" && summary !== "") appendFileSync(summary, markdownSummary(result, run.definition.name));
  return result;
}
