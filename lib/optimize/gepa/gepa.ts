import { resolveLM } from "../../config.js";
import { TypelmError, ValidationError } from "../../errors.js";
import { inSpan } from "../../instrument/bus.js";
import { defaultMetric, type Metric } from "../../evaluate/metric.js";
import type { ExampleOutcome } from "../../evaluate/run-example.js";
import type { LanguageModel } from "../../lm/types.js";
import type { Module } from "../../module.js";
import type { FewShotExample } from "../../prompt/few-shot.js";
import { noteScore } from "../../store/module-score.js";
import type { ExampleScore, OptimizationRun, Trial } from "../../store/records.js";
import { checkExamples, dataFingerprint } from "../examples.js";
import { checkOptions, tunablePredictors, type CommonOptions } from "../options.js";
import { Random } from "../random.js";
import { RunRecorder } from "../recorder.js";
import { scoreOn, type Scored } from "../score.js";
import { DEFAULT_MINIBATCH, MAX_MERGES, MERGE_SUBSAMPLE, modeBudget, resolveGEPAMode, type GEPAMode } from "./budget.js";
import { mergeSubsample, planMerge, type MergePlan } from "./merge.js";
import { fronts, nonDominated, selectBest, selectPareto } from "./pareto.js";
import { evidenceFor, reflect } from "./reflect.js";

export interface GEPAOptions {
  /** Scores a prediction, ideally with `{ score, feedback }`; default: every expected output field equal. */
  metric?: Metric;
  /** Budget preset (default "light"); the README's table gives each in metric calls. Not with `maxMetricCalls`. */
  mode?: GEPAMode | "medium";
  /** The budget in metric calls (one per example a program is run on); never exceeded. Not with `mode`. */
  maxMetricCalls?: number;
  /** The LM that writes new instructions from the feedback (default: the configured LM). */
  reflectionLM?: LanguageModel;
  /** Seeds every random choice (default 0). */
  seed?: number;
  /** Training examples per reflective step (default 3). */
  minibatchSize?: number;
  /** Also try merging two descendants that improved different predictors (default true, at most 5 merges). */
  useMerge?: boolean;
  /** How a parent is chosen: from the Pareto front by example (default) or the best average. */
  candidateSelection?: "pareto" | "best";
  /** Examples evaluated at once (default 8). */
  concurrency?: number;
  /** A progress bar on standard error when it is a terminal (default); metric calls spent / budget; `false` never draws one. */
  progress?: boolean;
}

export interface GEPACompileArgs<M extends Module> {
  moduleInstance: M;
  trainingExamples: readonly FewShotExample[];
  /** Scored for the Pareto front and the final choice (default: the training examples). */
  validationExamples?: readonly FewShotExample[];
  /** The id of an interrupted GEPA run in the lab store to continue. */
  resume?: string;
}

type Example = { example: FewShotExample; id: string };

/** One program in the pool: its instructions, where it came from and its validation scores. */
interface Candidate {
  trial: number;
  instructions: Record<string, string>;
  parents: number[];
  scores: number[];
  mean: number;
  /** The predictor its next reflective step changes (round robin per candidate). */
  nextPredictor: number;
}

interface Context {
  program: Module;
  paths: string[];
  train: Example[];
  val: Example[];
  metric: Metric;
  metricName: string;
  reflectionLM: LanguageModel;
  budget: number;
  minibatchSize: number;
  concurrency: number;
  seed: number;
}

const KINDS = ["rejected", "candidate"] as const;

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);

/**
 * GEPA (Agrawal et al. 2025, "Reflective Prompt Evolution Can Outperform Reinforcement Learning"):
 * evolves the instructions of a program's predictors. From a pool of candidates scored per
 * validation example it picks a parent on the Pareto front, runs it on a training minibatch, shows
 * one predictor's inputs, outputs and the metric's feedback to a reflection LM that writes a new
 * instruction, keeps the child only when it beats the parent on that minibatch, and then scores it
 * on the validation set. Optionally merges two descendants that improved different predictors.
 * Spends at most the budget in metric calls and returns a clone holding the candidate with the best
 * validation average (the seed unless one is strictly better); the module given is never changed.
 */
export class GEPA {
  readonly options: GEPAOptions;
  /** The last (or current) run: every candidate and rejected proposal, with scores, budget spent, tokens and cost. */
  lastRun: OptimizationRun | undefined;

  constructor(options: GEPAOptions = {}) {
    if (options.mode !== undefined && options.maxMetricCalls !== undefined) {
      throw new ValidationError(
        `GEPA takes a budget as mode or maxMetricCalls, not both: received mode ${JSON.stringify(options.mode)} and maxMetricCalls ${options.maxMetricCalls}; drop one`,
        { field: "maxMetricCalls" },
      );
    }
    if (options.mode !== undefined) resolveGEPAMode(options.mode);
    if (options.metric !== undefined && typeof options.metric !== "function") {
      throw new ValidationError(`GEPA option metric must be a function (example, prediction, trace?) => score or { score, feedback }; received ${typeof options.metric}`, { field: "metric" });
    }
    checkOptions("GEPA", options as CommonOptions, { maxMetricCalls: 1, minibatchSize: 1, concurrency: 1 });
    if (options.candidateSelection !== undefined && options.candidateSelection !== "pareto" && options.candidateSelection !== "best") {
      throw new ValidationError(`GEPA candidateSelection must be "pareto" or "best"; received ${JSON.stringify(options.candidateSelection)}`, { field: "candidateSelection" });
    }
    this.options = options;
  }

  /** The budget in metric calls for `validation` examples and `predictors` predictors (what the README's table computes). */
  budget(predictors: number, validation: number): number {
    const o = this.options;
    return o.maxMetricCalls ?? modeBudget(resolveGEPAMode(o.mode ?? "light"), validation, predictors, o.minibatchSize ?? DEFAULT_MINIBATCH);
  }

  compile<M extends Module>(args: GEPACompileArgs<M>): Promise<M> {
    // One span around the whole run, so its module calls nest under it in a trace.
    return inSpan(() => this.compileInSpan(args));
  }

  private async compileInSpan<M extends Module>(args: GEPACompileArgs<M>): Promise<M> {
    const { moduleInstance, resume } = args;
    const paths = tunablePredictors("GEPA", moduleInstance).map(([p]) => p);
    const train = checkExamples(args.trainingExamples, "trainingExamples", "GEPA");
    const val = args.validationExamples === undefined ? train : checkExamples(args.validationExamples, "validationExamples", "GEPA");
    const o = this.options;
    const budget = this.budget(paths.length, val.length);
    const minibatchSize = Math.min(o.minibatchSize ?? DEFAULT_MINIBATCH, train.length);
    if (budget < val.length) {
      throw new ValidationError(
        `GEPA maxMetricCalls is ${budget}, but scoring the seed program once on the ${val.length} validation examples takes ${val.length} metric calls; ` +
          `give at least ${val.length + 2 * minibatchSize + val.length} (one validation pass, one minibatch step of 2×${minibatchSize} and one accepted candidate), or fewer validation examples`,
        { field: "maxMetricCalls" },
      );
    }
    const metric = o.metric ?? defaultMetric;
    const reflectionLM = o.reflectionLM ?? resolveLM(undefined, moduleInstance.config.lm);
    const seed = o.seed ?? 0;
    const config = {
      module: moduleInstance.constructor.name, predictors: paths, mode: o.maxMetricCalls === undefined ? resolveGEPAMode(o.mode ?? "light") : null,
      maxMetricCalls: budget, minibatchSize, useMerge: o.useMerge ?? true, candidateSelection: o.candidateSelection ?? "pareto", seed,
      metric: metric.name || "metric", reflectionLM: reflectionLM.id, trainingExamples: train.length, validationExamples: val.length,
      data: dataFingerprint([...train, ...val]),
    };
    const counter = { spent: 0 };
    const rec = RunRecorder.start("GEPA", config, resume, {
      spent: () => counter.spent, bar: { progress: o.progress, unit: "metric calls", total: budget },
    });
    this.lastRun = rec.run;
    const ctx: Context = {
      program: moduleInstance, paths, train, val, metric, metricName: metric.name || "metric", reflectionLM, budget, minibatchSize,
      concurrency: o.concurrency ?? 8, seed,
    };
    try {
      return await new Search(ctx, rec, counter, config).run() as M;
    } catch (error) {
      throw rec.fail(error);
    }
  }
}

/** One compile's state: the pool, the random streams, the budget spent and the merge bookkeeping. */
class Search {
  private readonly pool: Candidate[] = [];
  private readonly select: Random;
  private readonly batches: Random;
  private readonly merges: Random;
  private queue: number[] = [];
  private mergesDue = 0;
  private mergesTried = 0;
  private foundNew = false;
  private readonly triedMerges = new Set<string>();

  constructor(
    private readonly ctx: Context,
    private readonly rec: RunRecorder,
    private readonly counter: { spent: number },
    private readonly config: { useMerge: boolean; candidateSelection: "pareto" | "best" },
  ) {
    this.select = new Random(ctx.seed, "select");
    this.batches = new Random(ctx.seed, "minibatch");
    this.merges = new Random(ctx.seed, "merge");
  }

  private get left(): number {
    return this.ctx.budget - this.counter.spent;
  }

  /** A clone of the program with these instructions (demos as given). */
  private build(instructions: Record<string, string>): Module {
    const copy = this.ctx.program.clone();
    for (const [path, p] of copy.namedPredictors()) p.instruction = instructions[path]!;
    return copy;
  }

  /** Scores `program` on examples, counting one metric call per example before any is run. */
  private async score(program: Module, examples: readonly Example[], onExample?: (o: ExampleOutcome) => void): Promise<Scored> {
    this.counter.spent += examples.length;
    return scoreOn(program, examples, this.ctx.metric, this.ctx.concurrency, onExample);
  }

  /** The next `size` training examples: one seeded shuffle per epoch, as in GEPA's batch sampler. */
  private minibatch(): Example[] {
    const { train, minibatchSize } = this.ctx;
    while (this.queue.length < minibatchSize) this.queue.push(...this.batches.shuffle(train.map((_, i) => i)));
    return this.queue.splice(0, minibatchSize).map((i) => train[i]!);
  }

  private add(trial: Trial, parents: number[]): void {
    const scores = trial.exampleScores!.map((e) => e.score);
    const nextPredictor = parents.length === 0 ? 0 : Math.max(...parents.map((p) => this.pool[p]!.nextPredictor));
    this.pool.push({ trial: trial.index, instructions: trial.instructions, parents, scores, mean: mean(scores), nextPredictor });
    this.foundNew = true;
    if (this.config.useMerge && this.mergesTried + this.mergesDue < MAX_MERGES) this.mergesDue++;
  }

  async run(): Promise<Module> {
    const { ctx, rec } = this;
    const seedInstructions = Object.fromEntries(ctx.program.namedPredictors().map(([p, m]) => [p, m.instruction]));
    const seedTrial = await rec.trial({ kind: "seed", choices: {} }, async () => {
      const r = await this.score(this.build(seedInstructions), ctx.val);
      return { kind: "seed", choices: {}, instructions: seedInstructions, demoIds: {}, score: r.score, exampleScores: r.exampleScores, data: { failures: r.failures } };
    });
    this.counter.spent = seedTrial.budgetSpent;
    if (seedTrial.error !== null) throw new TypelmError(`GEPA could not score the seed program on the validation set (trial ${seedTrial.index}): ${seedTrial.error}`);
    this.add(seedTrial, []);
    this.foundNew = false;
    this.mergesDue = 0;

    let stopped = "budget";
    for (;;) {
      if (this.mergesDue > 0 && this.foundNew) {
        this.foundNew = false;
        if (await this.tryMerge()) continue;
      }
      // A reflective step may spend 2 minibatches and a validation pass: start it only when all fit.
      if (this.left < 2 * ctx.minibatchSize + ctx.val.length) break;
      // A candidate scoring 1 everywhere cannot be beaten on the validation average.
      if (this.pool.some((c) => c.mean === 1)) {
        stopped = "perfect";
        break;
      }
      await this.reflectiveStep();
    }
    return this.finish(stopped);
  }

  /** Picks a parent, reflects on one predictor, and records the child as a candidate or a rejected proposal. */
  private async reflectiveStep(): Promise<void> {
    const { ctx, rec, pool } = this;
    const parentAt = this.config.candidateSelection === "best" ? selectBest(pool) : selectPareto(pool, this.select);
    const parent = pool[parentAt]!;
    const path = ctx.paths[parent.nextPredictor]!;
    parent.nextPredictor = (parent.nextPredictor + 1) % ctx.paths.length;
    const batch = this.minibatch();
    const batchIds = batch.map((e) => e.id);
    const trial = await rec.trial({ kind: KINDS, choices: { [path]: { parent: parent.trial } } }, async () => {
      const program = this.build(parent.instructions);
      const predictor = new Map(program.namedPredictors()).get(path)!;
      const outcomes: ExampleOutcome[] = new Array(batch.length);
      const before = await this.score(program, batch, (o) => { outcomes[o.row.index] = o; });
      const beforeScores = before.exampleScores.map((e) => e.score);
      const base = { choices: { [path]: { parent: parent.trial } }, parents: [parent.trial], demoIds: {} };
      const data: Record<string, unknown> = { predictor: path, parentCandidate: parentAt, minibatch: batchIds, minibatchBefore: beforeScores };
      const rejected = (reason: string, instructions = parent.instructions, after?: Scored) =>
        ({ ...base, kind: "rejected", instructions, score: after?.score ?? null, data: { ...data, reason, minibatchAfter: after?.exampleScores.map((e) => e.score) ?? null } });
      if (beforeScores.every((s) => s === 1)) return rejected("the parent scored 1 on every minibatch example: nothing to learn from");
      const evidence = evidenceFor(predictor, outcomes, batchIds, ctx.metricName);
      if (evidence.length === 0) return rejected(`predictor "${path}" was not called on any minibatch example`);
      const proposed = await reflect(ctx.reflectionLM, `${path} (outputs: ${Object.keys(evidence[0]!.outputs).join(", ")})`, parent.instructions[path]!, evidence);
      data.feedback = evidence.map((e) => e.feedback);
      if (proposed === "" || proposed === parent.instructions[path]) return rejected("the reflection LM proposed no new instruction");
      const instructions = { ...parent.instructions, [path]: proposed };
      const child = this.build(instructions);
      const after = await this.score(child, batch);
      if (sum(after.exampleScores.map((e) => e.score)) <= sum(beforeScores)) return rejected("the child did not beat its parent on the minibatch", instructions, after);
      const full = await this.score(child, ctx.val);
      return {
        ...base, kind: "candidate", instructions, score: full.score, exampleScores: full.exampleScores,
        data: { ...data, minibatchAfter: after.exampleScores.map((e) => e.score), failures: full.failures },
      };
    });
    this.counter.spent = trial.budgetSpent;
    if (trial.kind === "candidate" && trial.error === null) this.add(trial, [parentAt]);
  }

  /** Attempts one merge when a pair qualifies and its worst case fits the budget; returns whether one was tried. */
  private async tryMerge(): Promise<boolean> {
    const { ctx, rec, pool } = this;
    if (this.left < ctx.val.length) return false;
    const front = fronts(pool);
    const plan: MergePlan | undefined = planMerge(pool, [...nonDominated(pool, front)], this.triedMerges, this.merges);
    if (plan === undefined) return false;
    this.triedMerges.add(`${plan.a},${plan.b},${plan.ancestor}`);
    this.mergesDue--;
    this.mergesTried++;
    const [A, B] = [pool[plan.a]!, pool[plan.b]!];
    const positions = mergeSubsample(A.scores, B.scores, Math.min(MERGE_SUBSAMPLE, ctx.val.length), this.merges);
    const choices = Object.fromEntries(Object.entries(plan.from).map(([p, from]) => [p, { from: pool[from]!.trial }]));
    const trial = await rec.trial({ kind: KINDS, choices }, async () => {
      const program = this.build(plan.instructions);
      const sub = await this.score(program, positions.map((k) => ctx.val[k]!));
      const subScores = sub.exampleScores.map((e) => e.score);
      const parentSums = [A, B].map((c) => sum(positions.map((k) => c.scores[k]!)));
      const base = { choices, parents: [A.trial, B.trial], demoIds: {}, instructions: plan.instructions };
      const data: Record<string, unknown> = { merge: { ancestor: pool[plan.ancestor]!.trial }, subsample: positions.map((k) => ctx.val[k]!.id), subsampleScores: subScores, parentSubsampleSums: parentSums };
      if (sum(subScores) < Math.max(...parentSums)) return { ...base, kind: "rejected", score: sub.score, data: { ...data, reason: "the merge scored below a parent on the subsample" } };
      // The rest of the validation set; the subsample's scores are reused.
      const restAt = ctx.val.map((_, k) => k).filter((k) => !positions.includes(k));
      const rest = restAt.length === 0 ? undefined : await this.score(program, restAt.map((k) => ctx.val[k]!));
      const byPosition = new Map<number, ExampleScore>();
      positions.forEach((k, i) => byPosition.set(k, sub.exampleScores[i]!));
      restAt.forEach((k, i) => byPosition.set(k, rest!.exampleScores[i]!));
      const exampleScores = ctx.val.map((_, k) => byPosition.get(k)!);
      return { ...base, kind: "candidate", score: mean(exampleScores.map((e) => e.score)), exampleScores, data: { ...data, failures: rest?.failures ?? [] } };
    });
    this.counter.spent = trial.budgetSpent;
    if (trial.kind === "candidate" && trial.error === null) this.add(trial, [plan.a, plan.b]);
    return true;
  }

  /** Why the seed is returned: nothing beat it, or the budget left after its validation pass held no step at all. */
  private seedNote(stopped: string, trials: number): string {
    const { budget, minibatchSize, val } = this.ctx;
    const step = 2 * minibatchSize + val.length;
    if (stopped === "budget" && trials === 1) {
      return `maxMetricCalls ${budget} left ${budget - val.length} metric calls after the seed's validation pass; one reflective step needs up to ${step} ` +
        `(2×${minibatchSize} + ${val.length}), so no candidate was tried and the seed program is returned; give at least ${val.length + step}`;
    }
    return "no candidate scored a higher validation average than the seed program, so the seed program is returned";
  }

  private finish(stopped: string): Module {
    const { rec, pool } = this;
    const bestAt = selectBest(pool);
    const best = pool[bestAt]!;
    const seedReturned = bestAt === 0;
    const result = this.build(best.instructions);
    noteScore(result, best.mean);
    const trials = rec.run.trials;
    rec.finish({
      status: "completed", score: best.mean, bestTrial: best.trial,
      summary: {
        seedScore: pool[0]!.mean, bestScore: best.mean, gain: best.mean - pool[0]!.mean, instructions: best.instructions,
        seedReturned,
        note: seedReturned ? this.seedNote(stopped, trials.length) : null,
        stopped, metricCalls: this.counter.spent, maxMetricCalls: this.ctx.budget,
        candidates: pool.length, proposals: trials.filter((t) => t.kind !== "seed").length,
        rejected: trials.filter((t) => t.kind === "rejected").length, failedTrials: trials.filter((t) => t.error !== null).length,
        ...rec.usageTotals(),
      },
    });
    return result;
  }
}
