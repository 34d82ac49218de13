import { canonicalJson } from "../canonical-json.js";
import { resolveLM } from "../config.js";
import { TypelmError, ValidationError } from "../errors.js";
import { inSpan } from "../instrument/bus.js";
import { defaultMetric, type Metric } from "../evaluate/metric.js";
import type { LanguageModel } from "../lm/types.js";
import { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { noteScore } from "../store/module-score.js";
import type { OptimizationRun, Trial } from "../store/records.js";
import { bootstrapDemoSets, demoSetsFromJSON, demoSetsToJSON, type DemoSets } from "./bootstrap.js";
import { FULL_EVAL_EVERY, MODES, resolveMode, trialsFor, type MIPROMode } from "./budget.js";
import { configKey, configured, describeChoices, type Candidates, type Choices } from "./candidates.js";
import { ScoreMemo } from "./memo.js";
import { checkExamples, dataFingerprint, type IdentifiedExample as Example } from "./examples.js";
import { checkOptions, tunablePredictors, type CommonOptions } from "./options.js";
import { programStructure, proposeInstructions } from "./propose.js";
import { DescribeModule, DescribeProgram, ObserveDataset, ProposeInstruction, SummarizeDataset, TIPS } from "./proposal-signatures.js";
import { programCallUsage, signatureCallTokens, totalUsage, type UsageEstimate } from "./estimate.js";
import type { SignatureClass } from "../signature/signature.js";
import { Random } from "../random.js";
import { RunRecorder } from "./recorder.js";
import { scoreOn } from "./score.js";
import { miproSearcher, searchLoop } from "./search.js";
import type { BatchOption } from "../evaluate/batch-transport.js";

/** Options of `new MIPROv2(options)`: the metric, the budget (mode or each number), seeds, models, cost and time limits, batches. */
export interface MIPROv2Options {
  /** Scores a prediction; default: every expected output field equal. */
  metric?: Metric;
  /** Demos per demo set (default 4). 0 searches instructions only. */
  kDemos?: number;
  /** Budget preset (default "light"); "medium" is "balanced". See the table in docs/optimizers.md. */
  mode?: MIPROMode | "medium";
  /** Instruction candidates and demo sets per predictor (default: the mode's). */
  numCandidates?: number;
  /** Search trials (default: max(2·2P·log2 N, 1.5·N) for P predictors, N candidates). */
  numTrials?: number;
  /** Validation examples per trial (default: the mode's). */
  minibatchSize?: number;
  /** At most this many validation examples are used (a seeded sample when there are more). */
  validationSize?: number;
  /** A full validation evaluation after every this many trials (default 5). */
  fullEvalEvery?: number;
  /** Seeds every random choice (default 0). */
  seed?: number;
  /** The LM that proposes instructions (default: the configured LM). */
  promptModel?: LanguageModel;
  /** A bootstrapped run's trace becomes demos when the metric scores it at least this (default 1). */
  bootstrapThreshold?: number;
  /** Temperature of each instruction proposal (default 1.0, as DSPy's init_temperature); each proposal also gets its own rollout id. */
  proposalTemperature?: number;
  /** Examples evaluated at once (default 8). */
  concurrency?: number;
  /** A progress bar on standard error when it is a terminal (default); `false` never draws one. */
  progress?: boolean;
  /**
   * USD: once the recorded trials have cost this much the run stops (status "stopped") and returns
   * the best program fully evaluated so far (the program as given when none was); the trial that
   * crossed the limit is recorded. Costs come from the price table (0 for models without a price).
   */
  maxCost?: number;
  /**
   * Score each (configuration, example) pair once per run and reuse it when a later trial meets it
   * again (default true). `false` asks the model again every time: only for measuring what the memo
   * saves (`npm run bench:mipro-memo`).
   */
  memo?: boolean;
  /**
   * Seconds one example may take, its program call plus the metric (default 600), in the bootstrap's
   * teacher runs and in every trial. An example past it counts as failed, with an error that says it
   * timed out: a bootstrap run that timed out gives no demo (listed in the bootstrap trial's
   * `data.failures`); in a trial it scores 0 with the error kept in `exampleScores`, and the trial
   * fails only when more than half its examples failed. The run goes on. Not part of the run's
   * configuration, so a resume may change it.
   */
  exampleTimeout?: number;
  /**
   * The full-validation passes (baseline and full evaluations; not the minibatches) through the
   * provider's batch service at the batch price: `true` or `{ pollInterval, maxRequestsPerBatch,
   * maxRetries }`, as `Evaluation`'s `batch`. Their records are the trials'; replies enter the LM cache.
   */
  batch?: BatchOption;
}

/** What `mipro.compile` takes: the program, the training examples, optional validation examples, and a run id to resume. */
export interface CompileArgs {
  moduleInstance: Module;
  trainingExamples: readonly FewShotExample[];
  /**
   * Scored for the search. Default: a seeded split of the training examples, 20% demo pool and
   * 80% validation, as DSPy does, so no example is scored while it is a demo in the prompt.
   */
  validationExamples?: readonly FewShotExample[];
  /** The id of an interrupted run in the lab store to continue. */
  resume?: string;
}

/** The numbers one compile works with, after mode, options and data sizes. */
export interface MIPROBudget {
  mode: MIPROMode;
  /** Instruction candidates per predictor (the current one included). */
  candidates: number;
  /** Demo sets per predictor (set 0, the demos as given, included); 1 when kDemos is 0. */
  demoSets: number;
  trials: number;
  minibatchSize: number;
  validationSize: number;
  fullEvalEvery: number;
  /** Expected teacher runs of the bootstrap (docs/optimizers.md: half the runs passing), at most the demo pool. */
  bootstrapRuns: number;
  /** Demo sets bootstrapped only to show the proposer (kDemos 0: DSPy's 3-demo sets), else 0. */
  proposerSets: number;
}

/** The demo sets a zero-shot run still bootstraps to show the proposer, and their size (DSPy's BOOTSTRAPPED_FEWSHOT_EXAMPLES_IN_CONTEXT). */
const ZERO_SHOT_PROPOSER_DEMOS = 3;

/** Share of the training examples that become validation examples when none are given (DSPy: 80%, at most 1000). */
const SPLIT_VALIDATION_SHARE = 0.8;
const SPLIT_VALIDATION_MAX = 1000;

/**
 * MIPROv2 (Opsahl-Ong et al. 2024): bootstraps candidate demo sets, proposes grounded candidate
 * instructions, then searches (instruction, demo set) per predictor with a seeded categorical TPE on
 * validation minibatches, evaluating the most promising combination on the full validation set every
 * few trials. Returns a clone holding the best fully evaluated configuration (the baseline unless one
 * scores strictly higher); the module given is never changed.
 */
export class MIPROv2 {
  readonly options: MIPROv2Options;
  /** The last (or current) run: every trial, its choices, scores, calls, tokens and cost. */
  lastRun: OptimizationRun | undefined;

  constructor(options: MIPROv2Options = {}) {
    resolveMode(options.mode);
    checkOptions("MIPROv2", options as CommonOptions, {
      kDemos: 0, numCandidates: 1, numTrials: 1, minibatchSize: 1, validationSize: 1, fullEvalEvery: 1, concurrency: 1,
    });
    this.options = options;
  }

  /**
   * The budget for a program with `predictors` predictors, `training` demo-pool examples and
   * `validation` validation examples (what the table in docs/optimizers.md computes).
   */
  budget(predictors: number, training: number, validation: number): MIPROBudget {
    const o = this.options;
    const mode = resolveMode(o.mode);
    const preset = MODES[mode];
    const kDemos = o.kDemos ?? 4;
    // DSPy's auto modes give the demo sets N and the instructions N/2 when demos are searched
    // ("better to spend optimization budget on few-shot examples"); numCandidates sets both.
    const n = o.numCandidates ?? preset.candidates;
    const candidates = o.numCandidates ?? (kDemos === 0 ? n : Math.max(1, Math.floor(n / 2)));
    const validationSize = Math.min(validation, o.validationSize ?? preset.validationSize);
    const demoSets = kDemos === 0 ? 1 : n;
    const proposerSets = kDemos === 0 ? n : 0;
    const k = kDemos === 0 ? ZERO_SHOT_PROPOSER_DEMOS : kDemos;
    const bootstrapped = kDemos === 0 ? n - 1 : n - 2; // sets filled by the teacher
    return {
      mode, candidates, demoSets,
      trials: o.numTrials ?? trialsFor(n, predictors, kDemos === 0),
      minibatchSize: Math.min(validationSize, o.minibatchSize ?? preset.minibatchSize),
      validationSize,
      fullEvalEvery: o.fullEvalEvery ?? FULL_EVAL_EVERY,
      bootstrapRuns: bootstrapped <= 0 ? 0 : Math.min(training, 2 * k + (k + 1) * Math.max(0, bootstrapped - 1)),
      proposerSets,
    };
  }

  /**
   * What a compile with these arguments is expected to spend, without calling any model: LM calls
   * from the formula in docs/optimizers.md (the bootstrap's runs as `budget` estimates them, every minibatch and
   * full evaluation as if nothing were reused, so an upper bound for those), tokens from the prompts
   * rendered for a sample of the examples (a demo set of kDemos pool examples in them), the
   * proposer's calls from its signatures, and cost from the price table (null when a model has no price).
   */
  async estimate(args: Omit<CompileArgs, "resume">): Promise<UsageEstimate> {
    const predictors = tunablePredictors("MIPROv2", args.moduleInstance);
    const train = checkExamples(args.trainingExamples, "trainingExamples", "MIPROv2");
    const given = args.validationExamples === undefined ? undefined : checkExamples(args.validationExamples, "validationExamples", "MIPROv2");
    const kDemos = this.options.kDemos ?? 4;
    const { pool, val } = splitExamples(train, given, this.options.seed ?? 0, kDemos);
    const b = this.budget(predictors.length, pool.length, val.length);
    const P = predictors.length;
    const E = Math.ceil(b.trials / b.fullEvalEvery);
    const demos = Object.fromEntries(predictors.map(([path]) => [path, pool.slice(0, kDemos).map((e) => e.example)]));
    // With batch, the baseline and full evaluations are priced at the batch price; bootstrap and minibatches live.
    const batch = this.options.batch !== undefined && this.options.batch !== false;
    const liveRuns = b.bootstrapRuns + b.trials * b.minibatchSize + (batch ? 0 : b.validationSize * (1 + E));
    const batchRuns = batch ? b.validationSize * (1 + E) : 0;
    const usage = (runs: number, inBatch: boolean) => runs === 0 ? [] : programCallUsage({ program: args.moduleInstance, examples: val.map((e) => e.example), calls: P * runs, demos })
      .map((u) => ({ ...u, batch: inBatch }));
    const task = [...usage(liveRuns, false), ...usage(batchRuns, true)];
    const promptModel = this.options.promptModel ?? resolveLM(undefined, args.moduleInstance.config.lm);
    const blocks = (n: number) => pool.slice(0, n).map((e) => `Input: ${JSON.stringify(e.example.input)}\nOutput: ${JSON.stringify(e.example.output)}`).join("\n\n");
    const structure = programStructure(args.moduleInstance);
    const text = "x".repeat(400); // a paragraph of the proposer's own prose (summary, descriptions)
    const one = (signature: SignatureClass, values: Record<string, unknown>, outputs: Record<string, unknown>, calls: number) => {
      const t = signatureCallTokens({ signature, lm: promptModel, values, outputs });
      return { lm: promptModel, calls, inputTokens: calls * t.inputTokens, outputTokens: calls * t.outputTokens };
    };
    const observeCalls = Math.ceil(Math.min(pool.length, 20) / 10);
    const proposer = [
      one(ObserveDataset, { examples: blocks(10), priorObservations: text }, { observations: text }, observeCalls),
      one(SummarizeDataset, { observations: text }, { summary: text }, 1),
      one(DescribeProgram, { programStructure: structure, programExample: blocks(1) }, { programDescription: text }, 1),
      one(DescribeModule, { programStructure: structure, programDescription: text, programExample: blocks(1), module: structure }, { moduleDescription: text }, P),
      one(ProposeInstruction, {
        datasetSummary: text, programStructure: structure, programDescription: text, predictor: structure, moduleDescription: text,
        taskDemos: blocks(3), basicInstruction: predictors[0]![1].instruction, tip: TIPS.description!,
      }, { proposedInstruction: text }, P * Math.max(0, b.candidates - 1)),
    ];
    return totalUsage([...task, ...proposer]);
  }

  /** Runs the search (split, bootstrap, proposals, baseline, trials) on a clone and resolves with the clone holding the best configuration found; the module passed is never changed. Every trial goes to the lab store and `lastRun`. */
  compile<M extends Module>(args: CompileArgs & { moduleInstance: M }): Promise<M> {
    // One span around the whole run, so its trials' module calls nest under it in a trace.
    return inSpan(() => this.compileInSpan(args));
  }

  private async compileInSpan<M extends Module>(args: CompileArgs & { moduleInstance: M }): Promise<M> {
    const { moduleInstance, resume } = args;
    const predictors = tunablePredictors("MIPROv2", moduleInstance);
    const train = checkExamples(args.trainingExamples, "trainingExamples", "MIPROv2");
    const given = args.validationExamples === undefined ? undefined : checkExamples(args.validationExamples, "validationExamples", "MIPROv2");
    const kDemos = this.options.kDemos ?? 4;
    const seed = this.options.seed ?? 0;
    const split = splitExamples(train, given, seed, kDemos);
    const { pool, val } = split;
    const metric = this.options.metric ?? defaultMetric;
    const concurrency = this.options.concurrency ?? 8;
    const b = this.budget(predictors.length, pool.length, val.length);
    const promptModel = this.options.promptModel ?? resolveLM(undefined, moduleInstance.config.lm);
    const valSet = val.length > b.validationSize ? new Random(seed, "validation").sample(val, b.validationSize) : val;
    const proposalTemperature = this.options.proposalTemperature ?? 1;
    const config = {
      module: moduleInstance.constructor.name, predictors: predictors.map(([p]) => p), ...b, kDemos, seed,
      metric: metric.name || "metric", promptModel: promptModel.id, bootstrapThreshold: this.options.bootstrapThreshold ?? 1, proposalTemperature,
      trainingExamples: train.length, validationExamples: given?.length ?? null, validation: split.validation, demoPool: pool.length,
      data: dataFingerprint([...train, ...(given ?? [])]),
    };
    // Bootstrap, proposal and baseline, the search trials, and at most one full evaluation per fullEvalEvery trials.
    const total = 3 + b.trials + Math.ceil(b.trials / b.fullEvalEvery);
    const rec = RunRecorder.start("MIPROv2", config, resume, { bar: { progress: this.options.progress, unit: "trials", total, upperBound: true } });
    this.lastRun = rec.run;
    try {
      return await this.search(moduleInstance, rec, { pool, valSet, split, b, kDemos, seed, metric, concurrency, promptModel, proposalTemperature });
    } catch (error) {
      throw rec.fail(error);
    }
  }

  private async search<M extends Module>(
    program: M, rec: RunRecorder,
    s: {
      pool: Example[]; valSet: Example[]; split: Split; b: MIPROBudget; kDemos: number; seed: number; metric: Metric; concurrency: number;
      promptModel: LanguageModel; proposalTemperature: number;
    },
  ): Promise<M> {
    const { b, metric, concurrency } = s;
    const paths = program.namedPredictors().map(([p]) => p);
    const zeroShot = s.kDemos === 0;
    const maxCost = this.options.maxCost;
    const memo = this.options.memo === false ? undefined : new ScoreMemo();
    const zero: Choices = Object.fromEntries(paths.map((p) => [p, { instruction: 0, demos: 0 }]));
    let baseline: Trial | undefined;
    let best: Trial | undefined;
    let candidates: Candidates | undefined;
    let stopped = false;
    /** Ends the search (cleanly) once the recorded trials reached maxCost; the crossing trial is already recorded. */
    const stopIfOverCost = (): void => {
      if (rec.overCost(maxCost)) throw COST_LIMIT;
    };
    try {
      // 1. Demo candidates. A zero-shot run still bootstraps a few demo sets, only to show the proposer.
      const boot = await rec.trial({ kind: "bootstrap", choices: {} }, async () => {
        const r = await bootstrapDemoSets({
          program: program.clone(), pool: s.pool, metric, kDemos: zeroShot ? ZERO_SHOT_PROPOSER_DEMOS : s.kDemos,
          numSets: zeroShot ? b.proposerSets : b.demoSets, teacherDemos: zeroShot ? 0 : s.kDemos,
          threshold: this.options.bootstrapThreshold ?? 1, random: new Random(s.seed, "bootstrap"), concurrency,
          exampleTimeout: this.options.exampleTimeout,
        });
        return {
          kind: "bootstrap", choices: {}, instructions: {}, demoIds: {}, score: r.tried === 0 ? null : r.kept / r.tried,
          data: {
            sets: demoSetsToJSON(r.sets), tried: r.tried, kept: r.kept, quotas: r.quotas, teacherDemoIds: r.teacherDemoIds,
            forProposerOnly: zeroShot, failures: r.failures,
          },
        };
      });
      failIfErrored(boot);
      stopIfOverCost();
      const bootstrapped = demoSetsFromJSON(boot.data.sets);
      // The search's demo sets: the bootstrapped ones, or in a zero-shot run only set 0 (the demos as given).
      const demoSets: DemoSets = zeroShot ? Object.fromEntries(Object.entries(bootstrapped).map(([p, sets]) => [p, sets.slice(0, 1)])) : bootstrapped;

      // 2. Instruction candidates.
      const proposal = await rec.trial({ kind: "propose", choices: {} }, async () => {
        const p = await proposeInstructions({
          program, trainingExamples: s.pool.map((e) => e.example), demoSets: bootstrapped, numCandidates: b.candidates, lm: s.promptModel,
          random: new Random(s.seed, "propose"), temperature: s.proposalTemperature,
        });
        return { kind: "propose", choices: {}, instructions: {}, demoIds: {}, score: null, data: { ...p } };
      });
      failIfErrored(proposal);
      stopIfOverCost();
      const found: Candidates = { instructions: proposal.data.instructions as Record<string, string[]>, demoSets };
      candidates = found;

      // 3. Baseline, then the search.
      // One score per (configuration, example) per run: a pair met again is taken from the memo (also
      // the pairs of replayed trials, so a resumed run reuses what the interrupted one scored).
      const evaluate = async (kind: string, choices: Choices, examples: Example[], data: Record<string, unknown>): Promise<Trial> => {
        const config = configKey(found, choices);
        const trial = await rec.trial({ kind, choices: choices as Trial["choices"] }, async () => {
          const candidate = configured(program, found, choices);
          const r = await scoreOn(s.split.shared > 0 ? withoutOwnDemos(candidate, s.valSet) : candidate, examples, metric, concurrency, {
            memo: memo === undefined ? undefined : { memo, config }, exampleTimeout: this.options.exampleTimeout,
            // Baseline and full evaluations through the batch service; minibatches stay live.
            ...(kind !== "minibatch" && this.options.batch ? { batch: this.options.batch } : {}),
          });
          return {
            kind, ...describeChoices(found, choices), score: r.score, exampleScores: r.exampleScores, reused: r.reused, data: { ...data, failures: r.failures },
          };
        });
        memo?.rememberTrial(config, trial);
        return trial;
      };
      baseline = await evaluate("baseline", zero, s.valSet, {});
      best = baseline.score === null ? undefined : baseline;
      stopIfOverCost();
      const random = new Random(s.seed, "search");
      const params = paths.flatMap((p) => [{ name: `${p}.instruction`, size: b.candidates }, { name: `${p}.demos`, size: b.demoSets }]);
      const asParams = (choices: Choices): Record<string, number> =>
        Object.fromEntries(paths.flatMap((p) => [[`${p}.instruction`, choices[p]!.instruction], [`${p}.demos`, choices[p]!.demos]]));
      const asChoices = (params: Record<string, number>): Choices =>
        Object.fromEntries(paths.map((p) => [p, { instruction: params[`${p}.instruction`]!, demos: params[`${p}.demos`]! }]));
      await searchLoop({
        searcher: miproSearcher(params, random, b.trials),
        trials: b.trials,
        fullEvalEvery: b.fullEvalEvery,
        // The baseline's score is in the history too (DSPy adds it to the Optuna study).
        initial: best === undefined ? [] : [{ params: asParams(zero), score: best.score! }],
        minibatch: async (suggestion, t) => {
          const batch = random.sample(s.valSet, b.minibatchSize);
          const trial = await evaluate("minibatch", asChoices(suggestion), batch, { trial: t });
          stopIfOverCost();
          return trial.score;
        },
        full: async (pick, info) => {
          const full = await evaluate("full", asChoices(pick), s.valSet, info);
          if (full.score !== null && (best === undefined || full.score > best.score!)) best = full;
          stopIfOverCost();
          return full.score;
        },
      });
    } catch (error) {
      if (error !== COST_LIMIT) throw error;
      stopped = true;
    }

    // 4. The best fully evaluated configuration.
    const trials = rec.run.trials;
    if (best === undefined && !stopped) {
      const failed = trials.find((t) => t.error !== null);
      throw new TypelmError(`MIPROv2: no full validation evaluation succeeded, so there is nothing to return; first failure: trial ${failed?.index}: ${failed?.error}`);
    }
    // Stopped by maxCost before any configuration was scored: the program as given.
    const result = (best === undefined || candidates === undefined ? program.clone() : configured(program, candidates, best.choices as Choices)) as M;
    if (best !== undefined) noteScore(result, best.score!);
    const baselineScore = baseline?.score ?? null;
    rec.finish({
      status: stopped ? "stopped" : "completed", score: best?.score ?? null, bestTrial: best?.index ?? null,
      summary: {
        baselineScore, bestScore: best?.score ?? null, gain: baselineScore === null || best === undefined ? null : best.score! - baselineScore,
        validation: s.split.validation, validationExamples: s.valSet.length, demoPool: s.pool.length,
        ...(s.split.droppedFromPool > 0 ? { droppedFromPool: s.split.droppedFromPool } : {}),
        ...(s.split.shared > 0 ? { sharedWithValidation: s.split.shared } : {}),
        instructions: best?.instructions ?? null, demoIds: best?.demoIds ?? null, trials: trials.length, failedTrials: trials.filter((t) => t.error !== null).length,
        reused: trials.reduce((n, t) => n + (t.reused ?? 0), 0),
        ...rec.usageTotals(), ...rec.costSummary(maxCost, stopped),
      },
    });
    return result;
  }
}

/** Thrown inside the search when the recorded trials reached maxCost; caught where the run ends. */
const COST_LIMIT = Symbol("maxCost reached");

/** Bootstrap and proposal are needed by everything after them: their failure ends the run (recorded first). */
function failIfErrored(trial: Trial): void {
  if (trial.error !== null) throw new TypelmError(`MIPROv2 ${trial.kind} step failed (trial ${trial.index}): ${trial.error}`);
}

/** Where the demos come from and what is scored. */
interface Split {
  pool: Example[];
  val: Example[];
  validation: "given" | "split";
  /** Training examples left out of the demo pool because a validation example has the same inputs. */
  droppedFromPool: number;
  /**
   * Given validation examples that are also in the demo pool (the pool would have been smaller
   * than kDemos without them): when one is scored, its own demo is taken out of that prompt.
   */
  shared: number;
}

/**
 * The demo pool and the validation examples. Without validation examples: a seeded shuffle of the
 * training examples, 80% (at most 1000) validation and the rest the demo pool, as DSPy does. With
 * them: the training examples are the pool, less any whose inputs a validation example has — unless
 * that leaves fewer than kDemos (e.g. the same list given twice), in which case they stay and each
 * is left out of its own prompt when scored (`withoutOwnDemos`). Either way no example is ever
 * scored while it is a demo in its own prompt.
 */
function splitExamples(train: Example[], given: Example[] | undefined, seed: number, kDemos: number): Split {
  let split: Split;
  if (given === undefined) {
    if (train.length < 2) {
      throw new ValidationError(
        "MIPROv2.compile: without validationExamples the training examples are split into a demo pool and validation examples, which needs at least 2; " +
          `received ${train.length}. Add training examples or pass validationExamples`,
        { field: "trainingExamples" },
      );
    }
    const shuffled = new Random(seed, "split").shuffle(train);
    const validation = Math.min(SPLIT_VALIDATION_MAX, Math.max(1, Math.floor(train.length * SPLIT_VALIDATION_SHARE)));
    const cut = train.length - validation;
    split = { pool: shuffled.slice(0, cut), val: shuffled.slice(cut), validation: "split", droppedFromPool: 0, shared: 0 };
  } else {
    const scored = new Set(given.map((e) => canonicalJson(e.example.input)));
    const pool = train.filter((e) => !scored.has(canonicalJson(e.example.input)));
    split = pool.length >= Math.max(1, kDemos)
      ? { pool, val: given, validation: "given", droppedFromPool: train.length - pool.length, shared: 0 }
      : { pool: train, val: given, validation: "given", droppedFromPool: 0, shared: train.length - pool.length };
  }
  if (kDemos > split.pool.length) {
    const where = split.validation === "split"
      ? `the demo pool holds ${split.pool.length} (20% of the ${train.length} training examples; the other 80% are the validation examples)`
      : `there are only ${train.length} training examples to draw demos from`;
    throw new ValidationError(
      `MIPROv2 kDemos is ${kDemos} but ${where}: lower kDemos to at most ${split.pool.length}, add training examples, or pass validationExamples`,
      { field: "kDemos" },
    );
  }
  return split;
}

/**
 * `program` scored so that an example never meets itself as a demo: when the inputs of the call are
 * those of a demo (or of a validation example whose id a demo carries), that call runs on a copy
 * without those demos. Used only when validation examples are also in the demo pool.
 */
function withoutOwnDemos(program: Module, val: readonly Example[]): Module {
  const idOf = new Map(val.map((e) => [canonicalJson(e.example.input), e.id]));
  return new OwnDemoGuard(program, idOf);
}

class OwnDemoGuard extends Module {
  constructor(private readonly inner: Module, private readonly idOf: Map<string, string>) {
    super();
  }

  async forward(inputs: Record<string, unknown>): Promise<unknown> {
    const key = canonicalJson(inputs);
    const id = this.idOf.get(key);
    const own = (d: FewShotExample) => (id !== undefined && d.id === id) || canonicalJson(d.input) === key;
    if (!this.inner.namedPredictors().some(([, p]) => p.demos.some(own))) return this.inner.call(inputs);
    const copy = this.inner.clone();
    for (const [, p] of copy.namedPredictors()) p.demos = p.demos.filter((d) => !own(d));
    return copy.call(inputs);
  }
}
