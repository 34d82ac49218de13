/**
 * SimpleOptimizer's planning, worked out before any model call: the check of its options, the setup of
 * a compile (demo pool and scored examples) and the estimate of what a compile spends. Plain functions
 * behind the `SimpleOptimizer` class, so the bundle loads them at the first call
 * (scripts/deferred-modules.mjs) instead of at `import "typelm"`.
 */
import { ValidationError } from "../errors.js";
import { defaultMetric } from "../evaluate/metric.js";
import type { Module } from "../module.js";
import { FewShotExample } from "../prompt/few-shot.js";
import { programCallUsage, totalUsage, type UsageEstimate } from "./estimate.js";
import { checkExamples, labelledFits, type IdentifiedExample as Example } from "./examples.js";
import { checkMetricThreshold, checkOptions, tunablePredictors, type CommonOptions } from "./options.js";
import { Random } from "../random.js";
import type { Setup, SimpleCompileArgs, SimpleOptimizer, SimpleOptimizerOptions } from "./simple.js";

/** `new SimpleOptimizer(options)`'s checks: the counts, seed, metric, limits, metric threshold and instructions; a `ValidationError` naming the option. */
export function checkSimpleOptions(options: SimpleOptimizerOptions): void {
  checkOptions("SimpleOptimizer", options as CommonOptions, { numTrials: 1, kDemos: 0, concurrency: 1 });
  checkMetricThreshold("SimpleOptimizer", options as Record<string, unknown>);
  if (options.instructions !== undefined && (!Array.isArray(options.instructions) || options.instructions.some((i) => typeof i !== "string" || i.trim() === ""))) {
    throw new ValidationError("SimpleOptimizer option instructions must be an array of non-empty strings", { field: "instructions" });
  }
}

/** `SimpleOptimizer.estimate`: what a compile would spend, without calling any model (the method's comment says how). */
export function estimateSimple(optimizer: SimpleOptimizer, args: Omit<SimpleCompileArgs<Module>, "resume"> & { callsPerRun?: number }): UsageEstimate {
  const s = setupSimple(optimizer, args);
  const perRun = args.callsPerRun ?? s.predictors.length;
  const examples = s.scored.map((e) => e.example);
  const baseline = programCallUsage({ program: args.moduleInstance, examples, calls: s.scored.length * perRun });
  const demos = Object.fromEntries(s.predictors.map(([path, p]) => {
    const fits = s.pool.filter((e) => labelledFits(p, e.example)).slice(0, s.kDemos);
    return [path, fits.length === 0 ? p.demos : fits.map((e) => new FewShotExample({ input: e.example.input, output: e.example.output, id: e.id }))];
  }));
  const trials = programCallUsage({ program: args.moduleInstance, examples, calls: s.numTrials * s.scored.length * perRun, demos });
  const k = s.kDemos;
  const teacherRuns = k === 0 || s.numTrials < 2 ? 0 : Math.min(s.pool.length, 2 * k + (k + 1) * (s.numTrials - 2));
  const teacher = programCallUsage({ program: args.moduleInstance, examples: s.pool.map((e) => e.example), calls: teacherRuns * perRun, demos });
  // With batch, every trial's scoring goes through the batch service: all of it at the batch price.
  const batch = optimizer.options.batch !== undefined && optimizer.options.batch !== false;
  // The teacher runs stay live.
  return totalUsage([...[...baseline, ...trials].map((u) => ({ ...u, batch })), ...teacher]);
}

/** Checks a compile's arguments and works out the demo pool and the scored examples (no model call). */
export function setupSimple(optimizer: SimpleOptimizer, args: Omit<SimpleCompileArgs<Module>, "resume">): Setup {
  const predictors = tunablePredictors("SimpleOptimizer", args.moduleInstance);
  const train = checkExamples(args.trainingExamples, "trainingExamples", "SimpleOptimizer");
  const seed = optimizer.options.seed ?? 0;
  const kDemos = optimizer.options.kDemos ?? 4;
  const numTrials = optimizer.options.numTrials ?? 10;
  const metric = optimizer.options.metric ?? defaultMetric;
  let pool: Example[];
  let scored: Example[];
  if (args.validationExamples !== undefined) {
    pool = train;
    scored = checkExamples(args.validationExamples, "validationExamples", "SimpleOptimizer");
  } else if (train.length < 2) {
    [pool, scored] = [train, train];
  } else {
    const shuffled = new Random(seed, "split").shuffle(train);
    const half = Math.ceil(shuffled.length / 2);
    [pool, scored] = [shuffled.slice(0, half), shuffled.slice(half)];
  }
  if (kDemos > pool.length) {
    throw new ValidationError(
      `SimpleOptimizer kDemos is ${kDemos} but the demo pool has ${pool.length} examples ` +
        `(${args.validationExamples === undefined ? "half of the training examples, the other half is scored" : "the training examples"}): lower kDemos or add training examples`,
      { field: "kDemos" },
    );
  }
  return { predictors, train, pool, scored, seed, kDemos, numTrials, metric };
}
