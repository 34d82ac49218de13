// SimpleOptimizer.compile's run, loaded the first time a SimpleOptimizer compiles (see
// SimpleOptimizer.compile), so `import "typelm"` does not compile the search, recording and scoring.
import { TypelmError } from "../errors.js";
import type { Module } from "../module.js";
import { FewShotExample } from "../prompt/few-shot.js";
import { noteScore } from "../store/module-score.js";
import type { Trial } from "../store/records.js";
import { runMedia } from "./run-media.js";
import { bootstrapDemoSets, demoSetsFromJSON, demoSetsToJSON } from "./bootstrap.js";
import { configKey, configured, describeChoices, type Candidates, type Choices } from "./candidates.js";
import { labelledFits } from "./examples.js";
import { ScoreMemo } from "./memo.js";
import { Random } from "../random.js";
import { dataFingerprint, RunRecorder } from "./recorder.js";
import { scoreOn } from "./score.js";
import type { Setup, SimpleCompileArgs, SimpleOptimizer } from "./simple.js";

/** Runs a compile whose arguments `setup` checked: the baseline and every trial, recorded; resolves with the best configuration. */
export async function compileSimple<M extends Module>(opt: SimpleOptimizer, args: SimpleCompileArgs<M>, setup: Setup): Promise<M> {
  const { moduleInstance } = args;
  const { predictors, train, pool, scored, seed, kDemos, numTrials, metric } = setup;
  const maxCost = opt.options.maxCost;
  const concurrency = opt.options.concurrency ?? 8;
  const bootstraps = kDemos > 0;
  const config = {
    module: moduleInstance.constructor.name, predictors: predictors.map(([p]) => p), seed, kDemos, numTrials, metric: metric.name || "metric",
    metricThreshold: opt.options.metricThreshold ?? null,
    instructions: opt.options.instructions ?? [], pool: pool.length, scored: scored.length,
    data: dataFingerprint([...train, ...scored]),
  };
  const rec = await RunRecorder.begin("SimpleOptimizer", config, args.resume, {
    bar: { progress: opt.options.progress, unit: "trials", total: numTrials + 1 + (bootstraps ? 1 : 0) },
  });
  opt.lastRun = rec.run;
  try {
    // Candidates: instructions shared by all trials; one demo set per trial (set 0: the demos as given).
    const random = new Random(seed, "search");
    const candidates: Candidates = { instructions: {}, demoSets: {} };
    for (const [path, p] of predictors) candidates.instructions[path] = [p.instruction, ...(opt.options.instructions ?? [])];
    let stopped = false;
    if (bootstraps) {
      // Trial t's demos are DSPy's candidate set t (BootstrapFewShotWithRandomSearch): labelled only,
      // bootstrapped in the pool's order, then from seeded shuffles, each topped up to kDemos.
      const boot = await rec.trial({ kind: "bootstrap", choices: {} }, async () => {
        const r = await bootstrapDemoSets({
          program: moduleInstance.clone(), pool, metric, kDemos, maxLabelled: kDemos, numSets: numTrials + 1, teacherDemos: kDemos,
          metricThreshold: opt.options.metricThreshold, random: new Random(seed, "bootstrap"), concurrency, exampleTimeout: opt.options.exampleTimeout,
        });
        return {
          kind: "bootstrap", choices: {}, instructions: {}, demoIds: {}, score: r.tried === 0 ? null : r.kept / r.tried,
          data: { sets: demoSetsToJSON(r.sets), tried: r.tried, kept: r.kept, quotas: r.quotas, teacherDemoIds: r.teacherDemoIds, failures: r.failures },
        };
      });
      if (boot.error !== null) throw new TypelmError(`SimpleOptimizer bootstrap step failed (trial ${boot.index}): ${boot.error}`);
      candidates.demoSets = demoSetsFromJSON(boot.data.sets, runMedia(pool, moduleInstance));
      stopped = rec.overCost(maxCost);
    } else {
      for (const [path, p] of predictors) candidates.demoSets[path] = [[...p.demos]];
    }
    const plans: Choices[] = [Object.fromEntries(predictors.map(([path]) => [path, { instruction: 0, demos: 0 }]))];
    // Instructions are drawn round by round from fresh permutations, so every variant gets tried.
    const rounds = new Map<string, number[]>();
    for (let t = 1; t <= numTrials; t++) {
      const choices: Choices = {};
      for (const [path, p] of predictors) {
        const n = candidates.instructions[path]!.length;
        if ((t - 1) % n === 0) rounds.set(path, random.shuffle([...Array(n).keys()]));
        if (!bootstraps) {
          // Instructions only: no demos (the demos as given when no training example fits the predictor).
          const fits = pool.filter((e) => labelledFits(p, e.example));
          const demos = random.sample(fits, kDemos).map((e) => new FewShotExample({ input: e.example.input, output: e.example.output, id: e.id }));
          candidates.demoSets[path]!.push(fits.length === 0 ? [...p.demos] : demos);
        }
        choices[path] = { instruction: rounds.get(path)![(t - 1) % n]!, demos: t };
      }
      plans.push(choices);
    }
    // Scores by (configuration, example), also those of replayed trials, so a resumed run reuses what the uninterrupted one did.
    const memo = new ScoreMemo();
    let best: Trial | undefined;
    for (const [t, choices] of stopped ? [] : plans.entries()) {
      const kind = t === 0 ? "baseline" : "trial";
      const key = configKey(candidates, choices);
      const trial = await rec.trial({ kind, choices: choices as Trial["choices"] }, async () => {
        const r = await scoreOn(configured(moduleInstance, candidates, choices), scored, metric, concurrency, {
          memo: { memo, config: key }, exampleTimeout: opt.options.exampleTimeout,
          ...(opt.options.batch ? { batch: opt.options.batch } : {}),
        });
        return { kind, ...describeChoices(candidates, choices), score: r.score, exampleScores: r.exampleScores, reused: r.reused, data: { failures: r.failures } };
      });
      memo.rememberTrial(key, trial);
      if (trial.score !== null && (best === undefined || trial.score > best.score!)) best = trial;
      if (t < plans.length - 1 && rec.overCost(maxCost)) {
        stopped = true;
        break;
      }
    }
    const trials = rec.run.trials;
    if (best === undefined && !stopped) {
      throw new TypelmError(`SimpleOptimizer: every trial failed, so there is nothing to return; first failure: ${trials.find((t) => t.error !== null)?.error}`);
    }
    // Stopped before anything scored: the configuration as given (trial 0's) is all there is.
    const result = configured(moduleInstance, candidates, (best?.choices ?? plans[0]!) as Choices) as M;
    if (best !== undefined) noteScore(result, best.score!);
    const baseline = trials.find((t) => t.kind === "baseline")?.score ?? null;
    await rec.finish({
      status: stopped ? "stopped" : "completed", score: best?.score ?? null, bestTrial: best?.index ?? null,
      summary: {
        baselineScore: baseline, bestScore: best?.score ?? null, gain: baseline === null || best === undefined ? null : best.score! - baseline,
        instructions: best?.instructions ?? null, demoIds: best?.demoIds ?? null, trials: trials.length, failedTrials: trials.filter((t) => t.error !== null).length,
        reused: trials.reduce((n, t) => n + t.reused, 0),
        ...rec.costSummary(maxCost, stopped),
        ...rec.usageTotals(),
      },
    });
    return result;
  } catch (error) {
    throw rec.fail(error);
  }
}
