// MIPROv2.compile's run, loaded the first time a MIPROv2 compiles (see MIPROv2.compile), so
// `import "typelm"` does not compile the bootstrap, the proposer, the search, recording and scoring.
import { canonicalJson } from "../canonical-json.js";
import { resolveLM } from "../config.js";
import { TypelmError } from "../errors.js";
import { defaultMetric, type Metric } from "../evaluate/metric.js";
import type { LanguageModel } from "../lm/types.js";
import { Module } from "../module.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import { noteScore } from "../store/module-score.js";
import type { Trial } from "../store/records.js";
import { runMedia } from "./run-media.js";
import { bootstrapDemoSets, demoSetsFromJSON, demoSetsToJSON, type DemoSets } from "./bootstrap.js";
import { configKey, configured, describeChoices, type Candidates, type Choices } from "./candidates.js";
import { ScoreMemo } from "./memo.js";
import { checkExamples, type IdentifiedExample as Example } from "./examples.js";
import { tunablePredictors } from "./options.js";
import { proposeInstructions } from "./propose.js";
import { Random } from "../random.js";
import { dataFingerprint, RunRecorder } from "./recorder.js";
import { scoreOn } from "./score.js";
import { miproSearcher, searchLoop } from "./search.js";
import { ZERO_SHOT_PROPOSER_DEMOS } from "./budget.js";
import type { CompileArgs, MIPROBudget, MIPROv2 } from "./mipro.js";
import { splitExamples, type Split } from "./mipro-split.js";

/** Runs a compile: split, bootstrap, proposals, baseline and trials, recorded; resolves with a clone holding the best configuration. */
export async function compileMIPRO<M extends Module>(opt: MIPROv2, args: CompileArgs & { moduleInstance: M }): Promise<M> {
  const { moduleInstance, resume } = args;
  const predictors = tunablePredictors("MIPROv2", moduleInstance);
  const train = checkExamples(args.trainingExamples, "trainingExamples", "MIPROv2");
  const given = args.validationExamples === undefined ? undefined : checkExamples(args.validationExamples, "validationExamples", "MIPROv2");
  const kDemos = opt.options.kDemos ?? 4;
  const seed = opt.options.seed ?? 0;
  const split = splitExamples(train, given, seed, kDemos);
  const { pool, val } = split;
  const metric = opt.options.metric ?? defaultMetric;
  const concurrency = opt.options.concurrency ?? 8;
  const b = opt.budget(predictors.length, pool.length, val.length);
  const promptModel = opt.options.promptModel ?? resolveLM(undefined, moduleInstance.config.lm);
  const valSet = val.length > b.validationSize ? new Random(seed, "validation").sample(val, b.validationSize) : val;
  const proposalTemperature = opt.options.proposalTemperature ?? 1;
  const config = {
    module: moduleInstance.constructor.name, predictors: predictors.map(([p]) => p), ...b, kDemos, seed,
    metric: metric.name || "metric", promptModel: promptModel.id, metricThreshold: opt.options.metricThreshold ?? null, proposalTemperature,
    trainingExamples: train.length, validationExamples: given?.length ?? null, validation: split.validation, demoPool: pool.length,
    data: dataFingerprint([...train, ...(given ?? [])]),
  };
  // Bootstrap, proposal and baseline, the search trials, and at most one full evaluation per fullEvalEvery trials.
  const total = 3 + b.trials + Math.ceil(b.trials / b.fullEvalEvery);
  const rec = await RunRecorder.begin("MIPROv2", config, resume, { bar: { progress: opt.options.progress, unit: "trials", total, upperBound: true } });
  opt.lastRun = rec.run;
  try {
    return await search(opt, moduleInstance, rec, { pool, valSet, split, b, kDemos, seed, metric, concurrency, promptModel, proposalTemperature });
  } catch (error) {
    throw rec.fail(error);
  }
}

async function search<M extends Module>(
  opt: MIPROv2, program: M, rec: RunRecorder,
  s: {
    pool: Example[]; valSet: Example[]; split: Split; b: MIPROBudget; kDemos: number; seed: number; metric: Metric; concurrency: number;
    promptModel: LanguageModel; proposalTemperature: number;
  },
): Promise<M> {
  const { b, metric, concurrency } = s;
  const paths = program.namedPredictors().map(([p]) => p);
  const zeroShot = s.kDemos === 0;
  const maxCost = opt.options.maxCost;
  const memo = opt.options.memo === false ? undefined : new ScoreMemo();
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
        // Zero-shot, DSPy bootstraps its proposer's sets with max_labeled_demos 0: no labelled demos anywhere.
        program: program.clone(), pool: s.pool, metric, kDemos: zeroShot ? ZERO_SHOT_PROPOSER_DEMOS : s.kDemos, maxLabelled: zeroShot ? 0 : s.kDemos,
        numSets: zeroShot ? b.proposerSets : b.demoSets, teacherDemos: zeroShot ? 0 : s.kDemos,
        metricThreshold: opt.options.metricThreshold, random: new Random(s.seed, "bootstrap"), concurrency,
        exampleTimeout: opt.options.exampleTimeout,
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
    const bootstrapped = demoSetsFromJSON(boot.data.sets, runMedia(s.pool, program));
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
          memo: memo === undefined ? undefined : { memo, config }, exampleTimeout: opt.options.exampleTimeout,
          // Baseline and full evaluations through the batch service; minibatches stay live.
          ...(kind !== "minibatch" && opt.options.batch ? { batch: opt.options.batch } : {}),
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
  await rec.finish({
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

/** Thrown inside the search when the recorded trials reached maxCost; caught where the run ends. */
const COST_LIMIT = Symbol("maxCost reached");

/** Bootstrap and proposal are needed by everything after them: their failure ends the run (recorded first). */
function failIfErrored(trial: Trial): void {
  if (trial.error !== null) throw new TypelmError(`MIPROv2 ${trial.kind} step failed (trial ${trial.index}): ${trial.error}`);
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
