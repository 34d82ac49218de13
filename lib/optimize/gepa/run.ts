// GEPA.compile's run, loaded the first time a GEPA compiles (see GEPA.compile), so `import "typelm"`
// does not compile the search, reflection, merges, recording and scoring.
import { resolveLM } from "../../config.js";
import { TypelmError } from "../../errors.js";
import type { Metric } from "../../evaluate/metric.js";
import type { ExampleOutcome } from "../../evaluate/run-example.js";
import type { LanguageModel } from "../../lm/types.js";
import type { Module } from "../../module.js";
import { noteScore } from "../../store/module-score.js";
import type { ExampleScore, Trial } from "../../store/records.js";
import { instructionsKey, ScoreMemo } from "../memo.js";
import { Random } from "../../random.js";
import { Instrumentation } from "../../instrument/bus.js";
import { dataFingerprint, RunRecorder, TrialError } from "../recorder.js";
import { scoreOn, scoringName, type Scored } from "../score.js";
import { resolveGEPAMode } from "./budget.js";
import { MAX_MERGES, MERGE_SUBSAMPLE, MetricBudget } from "./spending.js";
import { mergeSubsample, planMerge, type MergePlan } from "./merge.js";
import { fronts, nonDominated, selectBest, selectPareto } from "./pareto.js";
import { evidenceFor, predictorFeedback, reflect } from "./reflect.js";
import type { BatchOption } from "../../evaluate/batch-transport.js";
import type { Example, GEPA, GEPACompileArgs, Setup } from "./gepa.js";

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
  /** Seconds per example (program call plus metric), undefined for the default. */
  exampleTimeout: number | undefined;
  batch: BatchOption | undefined;
  budget: number;
  minibatchSize: number;
  concurrency: number;
  seed: number;
  maxCost: number | undefined;
  /** "given" validation examples, or "training" (scored on the training examples). */
  validation: "given" | "training";
  /** What the run warned about, kept in its summary. */
  warnings: string[];
}

/** The `code` of the warning GEPA gives when it scores candidates on its training examples. */
export const SCORED_ON_TRAINING = "TYPELM_GEPA_SCORED_ON_TRAINING";

/**
 * Without validation examples GEPA scores and chooses its candidates on the training examples its
 * reflection learns from (DSPy's GEPA logs a warning there too): says so on the event bus
 * (`optimizer.warning`, which the logger writes at level warn) and as a Node process warning, and
 * returns the text for the run's summary.
 */
function warnScoredOnTraining(runId: string, examples: number): string {
  const message =
    `GEPA got no validationExamples, so it scores and chooses its candidates on the ${examples} training examples its reflection learns from: ` +
    "the chosen program's score is optimistic (it overfits them). Pass validationExamples (held-out examples) for a score that stands for new data.";
  Instrumentation.emit("optimizer.warning", { runId, optimizer: "GEPA", code: SCORED_ON_TRAINING, message });
  process.emitWarning(message, { type: "TypelmWarning", code: SCORED_ON_TRAINING });
  return message;
}

const KINDS = ["rejected", "candidate"] as const;

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);

/** Runs a compile whose arguments `setup` checked: the seed, reflective steps and merges until the budget runs out, recorded; resolves with the best candidate. */
export async function compileGEPA<M extends Module>(gepa: GEPA, args: GEPACompileArgs<M>, setup: Setup): Promise<M> {
  const { moduleInstance, resume } = args;
  const { paths, train, val, validation, budget, minibatchSize, metric } = setup;
  const o = gepa.options;
  const reflectionLM = o.reflectionLM ?? resolveLM(undefined, moduleInstance.config.lm);
  const seed = o.seed ?? 0;
  const config = {
    module: moduleInstance.constructor.name, predictors: paths, mode: o.maxMetricCalls === undefined ? resolveGEPAMode(o.mode ?? "light") : null,
    maxMetricCalls: budget, minibatchSize, useMerge: o.useMerge ?? true, candidateSelection: o.candidateSelection ?? "pareto", seed,
    metric: metric.name || "metric", reflectionLM: reflectionLM.id, trainingExamples: train.length, validationExamples: val.length,
    data: dataFingerprint([...train, ...val]),
  };
  const spending = new MetricBudget(budget);
  const rec = await RunRecorder.begin("GEPA", config, resume, {
    spent: () => spending.spent,
    bar: { progress: o.progress, unit: "metric calls", total: budget, ...(validation === "training" ? { scoreLabel: "training examples (chosen on them)" } : {}) },
  });
  gepa.lastRun = rec.run;
  const warnings = validation === "training" ? [warnScoredOnTraining(rec.id, train.length)] : [];
  const ctx: Context = {
    program: moduleInstance, paths, train, val, metric, metricName: scoringName(metric), reflectionLM, exampleTimeout: o.exampleTimeout, batch: o.batch, budget, minibatchSize,
    concurrency: o.concurrency ?? 8, seed, maxCost: o.maxCost, validation, warnings,
  };
  try {
    return await new Search(ctx, rec, spending, config).run() as M;
  } catch (error) {
    throw rec.fail(error);
  }
}

/** One compile's state: the pool, the random streams, the budget spent, the score memo and the merge bookkeeping. */
class Search {
  private readonly pool: Candidate[] = [];
  private readonly select: Random;
  private readonly batches: Random;
  private readonly merges: Random;
  private readonly memo = new ScoreMemo();
  private queue: number[] = [];
  /** Merges scheduled (one per new reflective candidate while the cap allows), and merges accepted. */
  private mergesDue = 0;
  private mergesAccepted = 0;
  private foundNew = false;
  private readonly triedMerges = new Set<string>();

  constructor(
    private readonly ctx: Context,
    private readonly rec: RunRecorder,
    private readonly budget: MetricBudget,
    private readonly config: { useMerge: boolean; candidateSelection: "pareto" | "best" },
  ) {
    this.select = new Random(ctx.seed, "select");
    this.batches = new Random(ctx.seed, "minibatch");
    this.merges = new Random(ctx.seed, "merge");
  }

  /** A clone of the program with these instructions (demos as given). */
  private build(instructions: Record<string, string>): Module {
    const copy = this.ctx.program.clone();
    for (const [path, p] of copy.namedPredictors()) p.instruction = instructions[path]!;
    return copy;
  }

  /**
   * Scores a program on examples. Examples the memo knows for these `instructions` cost nothing; the
   * others are counted against the step's reservation before any is run. `instructions: null` runs
   * every example and keeps nothing (the parent's reflective minibatch). A scoring with more than half
   * its examples failed throws a `TrialError` saying which scoring and program it was.
   */
  private async score(program: Module, instructions: Record<string, string> | null, examples: readonly Example[], scoring: string, onExample?: (o: ExampleOutcome) => void): Promise<Scored> {
    try {
      return await scoreOn(program, examples, this.ctx.metric, this.ctx.concurrency, {
        onExample, memo: instructions === null ? undefined : { memo: this.memo, config: instructionsKey(instructions) },
        beforeRun: (n) => this.budget.spend(n), exampleTimeout: this.ctx.exampleTimeout,
        // Validation passes through the batch service; minibatches (and their reflection) stay live.
        ...(scoring === "validation" && this.ctx.batch ? { batch: this.ctx.batch } : {}),
      });
    } catch (error) {
      if (error instanceof TrialError) Object.assign(error.partial, { data: { ...error.partial.data, scoring, scoredInstructions: instructions } });
      throw error;
    }
  }

  /**
   * After each trial, recorded or replayed: the budget at its recorded total, and the memo holding
   * every score it recorded (its `exampleScores` under the program they scored, and a child's minibatch
   * scores), so a resumed run reuses what the uninterrupted one did.
   */
  private settle(trial: Trial): void {
    this.budget.settle(trial.budgetSpent);
    const d = trial.data;
    if (trial.exampleScores !== null && d.scoring !== "parent") {
      const scored = (d.scoredInstructions as Record<string, string> | null | undefined) ?? trial.instructions;
      this.memo.remember(instructionsKey(scored), trial.exampleScores);
    }
    if (Array.isArray(d.minibatchAfter) && Array.isArray(d.minibatch)) {
      const errors = (d.minibatchAfterErrors as (string | null)[] | undefined) ?? [];
      this.memo.remember(instructionsKey(trial.instructions), (d.minibatch as string[]).map((exampleId, i) => ({
        exampleId, score: (d.minibatchAfter as number[])[i]!, error: errors[i] ?? null,
      })));
    }
  }

  /** The next `size` training examples: one seeded shuffle per epoch, as in GEPA's batch sampler. */
  private minibatch(): Example[] {
    const { train, minibatchSize } = this.ctx;
    while (this.queue.length < minibatchSize) this.queue.push(...this.batches.shuffle(train.map((_, i) => i)));
    return this.queue.splice(0, minibatchSize).map((i) => train[i]!);
  }

  /**
   * Adds a kept candidate to the pool. A new reflective candidate schedules a merge while the cap
   * allows; a merged one does not (gepa's engine: only `_run_reflective_batch` sets
   * `last_iter_found_new_program` and adds to `merges_due`).
   */
  private add(trial: Trial, parents: number[], how: "seed" | "reflective" | "merge"): void {
    const scores = trial.exampleScores!.map((e) => e.score);
    const nextPredictor = parents.length === 0 ? 0 : Math.max(...parents.map((p) => this.pool[p]!.nextPredictor));
    this.pool.push({ trial: trial.index, instructions: trial.instructions, parents, scores, mean: mean(scores), nextPredictor });
    if (how !== "reflective") return;
    this.foundNew = true;
    if (this.config.useMerge && this.mergesAccepted + this.mergesDue < MAX_MERGES) this.mergesDue++;
  }

  async run(): Promise<Module> {
    const { ctx, rec } = this;
    const seedInstructions = Object.fromEntries(ctx.program.namedPredictors().map(([p, m]) => [p, m.instruction]));
    this.budget.reserve(ctx.val.length);
    const seedTrial = await rec.trial({ kind: "seed", choices: {} }, async () => {
      const r = await this.score(this.build(seedInstructions), seedInstructions, ctx.val, "validation");
      return {
        kind: "seed", choices: {}, instructions: seedInstructions, demoIds: {}, score: r.score, exampleScores: r.exampleScores, reused: r.reused,
        data: { failures: r.failures },
      };
    });
    this.settle(seedTrial);
    if (seedTrial.error !== null) throw new TypelmError(`GEPA could not score the seed program on the validation set (trial ${seedTrial.index}): ${seedTrial.error}`);
    this.add(seedTrial, [], "seed");

    let stopped = "budget";
    for (;;) {
      // maxCost is checked after every trial (each one ends a turn of this loop).
      if (this.rec.overCost(ctx.maxCost)) {
        stopped = "maxCost";
        break;
      }
      if (this.mergesDue > 0 && this.foundNew) {
        this.foundNew = false;
        if (await this.tryMerge()) continue;
      }
      // A reflective step may spend 2 minibatches and a validation pass: start it only when all fit.
      const worst = 2 * ctx.minibatchSize + ctx.val.length;
      if (this.budget.left < worst) break;
      // A candidate scoring 1 everywhere cannot be beaten on the validation average.
      if (this.pool.some((c) => c.mean === 1)) {
        stopped = "perfect";
        break;
      }
      this.budget.reserve(worst);
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
    // Which call of the predictor each example shows: a stream of its own per trial, so a replayed
    // step (which draws nothing) leaves every later draw as the uninterrupted run made it.
    const evidenceRandom = new Random(ctx.seed, `evidence:${rec.run.trials.length}`);
    const choices = { [path]: { parent: parent.trial } };
    const trial = await rec.trial({ kind: KINDS, choices }, async () => {
      const base = { choices, parents: [parent.trial], demoIds: {} };
      const data: Record<string, unknown> = { predictor: path, parentCandidate: parentAt, minibatch: batchIds };
      let instructions = parent.instructions;
      let reused = 0;
      try {
        const program = this.build(parent.instructions);
        const predictor = new Map(program.namedPredictors()).get(path)!;
        const outcomes: ExampleOutcome[] = new Array(batch.length);
        // Never from the memo: the reflection needs what the parent did on each example.
        const before = await this.score(program, null, batch, "parent", (o) => { outcomes[o.row.index] = o; });
        const beforeScores = before.exampleScores.map((e) => e.score);
        data.minibatchBefore = beforeScores;
        const rejected = (reason: string, after?: Scored) => ({
          ...base, kind: "rejected", instructions, score: after?.score ?? null, reused, data: { ...data, reason, minibatchAfter: after?.exampleScores.map((e) => e.score) ?? null },
        });
        if (beforeScores.every((s) => s === 1)) return rejected("the parent scored 1 on every minibatch example: nothing to learn from");
        const drawn = evidenceFor(predictor, outcomes, batchIds, ctx.metricName, evidenceRandom);
        if (drawn.length === 0) return rejected(`predictor "${path}" was not called on any minibatch example`);
        // The metric's feedback on this predictor (its fourth argument), else the scoring's feedback.
        const byId = new Map(batch.map((e, i) => [e.id, { example: e.example, outcome: outcomes[i]! }]));
        const { evidence, errors } = await predictorFeedback(ctx.metric, ctx.metricName, path, drawn, byId, ctx.exampleTimeout);
        data.evidenceCalls = evidence.map((e) => [e.call, e.calls]);
        data.feedback = evidence.map((e) => e.feedback);
        if (errors.length > 0) data.feedbackErrors = errors;
        const proposed = await reflect(ctx.reflectionLM, `${path} (outputs: ${Object.keys(evidence[0]!.outputs).join(", ")})`, parent.instructions[path]!, evidence);
        if (proposed === "" || proposed === parent.instructions[path]) return rejected("the reflection LM proposed no new instruction");
        instructions = { ...parent.instructions, [path]: proposed };
        const child = this.build(instructions);
        const after = await this.score(child, instructions, batch, "child");
        reused += after.reused;
        data.minibatchAfter = after.exampleScores.map((e) => e.score);
        data.minibatchAfterErrors = after.exampleScores.map((e) => e.error);
        if (sum(after.exampleScores.map((e) => e.score)) <= sum(beforeScores)) return rejected("the child did not beat its parent on the minibatch", after);
        const full = await this.score(child, instructions, ctx.val, "validation");
        reused += full.reused;
        return {
          ...base, kind: "candidate", instructions, score: full.score, exampleScores: full.exampleScores, reused,
          data: { ...data, failures: full.failures },
        };
      } catch (error) {
        // A scoring with more than half its examples failed: record what the step had done.
        if (error instanceof TrialError) {
          Object.assign(error.partial, { ...base, instructions, reused: reused + (error.partial.reused ?? 0), data: { ...data, ...error.partial.data } });
        }
        throw error;
      }
    });
    this.settle(trial);
    if (trial.kind === "candidate" && trial.error === null) this.add(trial, [parentAt], "reflective");
  }

  /**
   * Attempts one merge when a pair qualifies and its worst case fits the budget; returns whether one
   * was tried. The worst case is the subsample plus the rest of the validation set: V metric calls,
   * set aside before the merge starts (a merge started with less than that left is what overspent a
   * budget of 51 by 13, one validation pass).
   */
  private async tryMerge(): Promise<boolean> {
    const { ctx, rec, pool } = this;
    if (!this.budget.reserve(ctx.val.length)) return false;
    const front = fronts(pool);
    const plan: MergePlan | undefined = planMerge(pool, [...nonDominated(pool, front)], this.triedMerges, this.merges);
    if (plan === undefined) return false;
    this.triedMerges.add(`${plan.a},${plan.b},${plan.ancestor}`);
    const [A, B] = [pool[plan.a]!, pool[plan.b]!];
    const positions = mergeSubsample(A.scores, B.scores, Math.min(MERGE_SUBSAMPLE, ctx.val.length), this.merges);
    const choices = Object.fromEntries(Object.entries(plan.from).map(([p, from]) => [p, { from: pool[from]!.trial }]));
    const trial = await rec.trial({ kind: KINDS, choices }, async () => {
      const program = this.build(plan.instructions);
      const sub = await this.score(program, plan.instructions, positions.map((k) => ctx.val[k]!), "subsample");
      const subScores = sub.exampleScores.map((e) => e.score);
      const parentSums = [A, B].map((c) => sum(positions.map((k) => c.scores[k]!)));
      const base = { choices, parents: [A.trial, B.trial], demoIds: {}, instructions: plan.instructions };
      const data: Record<string, unknown> = { merge: { ancestor: pool[plan.ancestor]!.trial }, subsample: positions.map((k) => ctx.val[k]!.id), subsampleScores: subScores, parentSubsampleSums: parentSums };
      if (sum(subScores) < Math.max(...parentSums)) {
        // exampleScores: the subsample's (validation examples), so a resumed run knows them too.
        return { ...base, kind: "rejected", score: sub.score, exampleScores: sub.exampleScores, reused: sub.reused, data: { ...data, reason: "the merge scored below a parent on the subsample" } };
      }
      // The rest of the validation set; the subsample's scores are reused.
      const restAt = ctx.val.map((_, k) => k).filter((k) => !positions.includes(k));
      const rest = restAt.length === 0 ? undefined : await this.score(program, plan.instructions, restAt.map((k) => ctx.val[k]!), "validation");
      const byPosition = new Map<number, ExampleScore>();
      positions.forEach((k, i) => byPosition.set(k, sub.exampleScores[i]!));
      restAt.forEach((k, i) => byPosition.set(k, rest!.exampleScores[i]!));
      const exampleScores = ctx.val.map((_, k) => byPosition.get(k)!);
      return {
        ...base, kind: "candidate", score: mean(exampleScores.map((e) => e.score)), exampleScores, reused: sub.reused + (rest?.reused ?? 0),
        data: { ...data, failures: exampleScores.filter((e) => e.error !== null).map((e) => `${e.exampleId}: ${e.error}`) },
      };
    });
    this.settle(trial);
    // As gepa's engine does (engine.py: "REJECTED: do NOT consume merges_due or total_merges_tested"),
    // only an accepted merge uses up a scheduled merge and counts toward the cap; a rejected (or
    // failed) one leaves both, and the next merge is tried after the next new reflective candidate.
    if (trial.kind === "candidate" && trial.error === null) {
      this.mergesDue--;
      this.mergesAccepted++;
      this.add(trial, [plan.a, plan.b], "merge");
    }
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
    if (stopped === "maxCost") return "the run stopped on maxCost before any candidate scored a higher validation average than the seed program, so the seed program is returned";
    return "no candidate scored a higher validation average than the seed program, so the seed program is returned";
  }

  private async finish(stopped: string): Promise<Module> {
    const { rec, pool, ctx } = this;
    const bestAt = selectBest(pool);
    const best = pool[bestAt]!;
    const seedReturned = bestAt === 0;
    const result = this.build(best.instructions);
    noteScore(result, best.mean);
    const trials = rec.run.trials;
    await rec.finish({
      status: stopped === "maxCost" ? "stopped" : "completed", score: best.mean, bestTrial: best.trial,
      summary: {
        seedScore: pool[0]!.mean, bestScore: best.mean, gain: best.mean - pool[0]!.mean, instructions: best.instructions,
        seedReturned,
        note: seedReturned ? this.seedNote(stopped, trials.length) : null,
        ...rec.costSummary(ctx.maxCost, stopped === "maxCost"),
        stopped, metricCalls: this.budget.spent, maxMetricCalls: ctx.budget,
        // Without validationExamples the candidates are scored on the training examples: GEPA tunes
        // only instructions (demos stay as given), so no example is scored against itself as a demo.
        validation: ctx.validation,
        ...(ctx.warnings.length > 0 ? { warnings: ctx.warnings } : {}),
        candidates: pool.length, proposals: trials.filter((t) => t.kind !== "seed").length,
        rejected: trials.filter((t) => t.kind === "rejected").length, failedTrials: trials.filter((t) => t.error !== null).length,
        merges: trials.filter((t) => t.parents.length === 2).length,
        reused: trials.reduce((n, t) => n + t.reused, 0),
        ...rec.usageTotals(),
      },
    });
    return result;
  }
}
