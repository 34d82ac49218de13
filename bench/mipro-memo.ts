/**
 * MIPROv2's LM calls with and without the per-run score memo, on the poem-sentiment experiment as
 * `typelm reproduce` runs it (Predict, MIPROv2 light, kDemos 4, seed 0, train → dev), with the offline
 * stand-in model (SimulatedLM) as task and prompt model and no response cache, so every request
 * reaches the model and is counted. The memo scores each (configuration, example) pair once per
 * run; without it, a pair a later trial meets again is asked again.
 *
 * Run with `npm run bench:mipro-memo` (builds to dist/, then runs dist/bench/mipro-memo.js).
 * Options (environment variables): BENCH_SEED (0), BENCH_EXPERIMENT (poem-sentiment).
 */
import { configure, resetConfiguration } from "../lib/config.js";
import { join } from "node:path";
import { loadDataset, packageRoot } from "../lib/lab/dataset/load.js";
import { loadExperimentFile } from "../lib/lab/experiment/load.js";
import type { Module } from "../lib/module.js";
import { MIPROv2 } from "../lib/optimize/mipro.js";
import { SimulatedLM } from "../lib/testing/index.js";
import { intFromEnv } from "./env.js";

const SEED = intFromEnv("BENCH_SEED", 0);
const EXPERIMENT = process.env.BENCH_EXPERIMENT ?? "poem-sentiment";

interface Measured {
  requests: number;
  taskRequests: number;
  promptRequests: number;
  reused: number;
  bestScore: number | null;
  bestTrial: number | null;
}

// The bundled experiment file, as `typelm reproduce` loads it.
const { definition: experiment } = await loadExperimentFile(join(packageRoot(), "experiments", `${EXPERIMENT}.ts`));
const options = (experiment.optimizerOptions ?? {}) as { mode?: "light" | "balanced" | "heavy"; kDemos?: number };

async function run(memo: boolean): Promise<Measured> {
  const data = await loadDataset(experiment.dataset as string);
  const lm = new SimulatedLM({ model: "stand-in" });
  const promptModel = new SimulatedLM({ model: "stand-in" });
  configure((c) => { c.lab = false; c.cache = false; c.lm = lm; });
  try {
    const mipro = new MIPROv2({ ...options, seed: SEED, promptModel, progress: false, memo });
    const program = typeof experiment.program === "function" ? experiment.program({ signature: data.signature }) : (experiment.program as Module).clone();
    await mipro.compile({ moduleInstance: program, trainingExamples: data.train, validationExamples: data.dev });
    const run = mipro.lastRun!;
    return {
      requests: lm.requests.length + promptModel.requests.length, taskRequests: lm.requests.length, promptRequests: promptModel.requests.length,
      reused: run.trials.reduce((n, t) => n + (t.reused ?? 0), 0), bestScore: run.score, bestTrial: run.bestTrial,
    };
  } finally {
    resetConfiguration();
  }
}

const without = await run(false);
const withMemo = await run(true);
if (without.bestTrial !== withMemo.bestTrial || without.bestScore !== withMemo.bestScore) {
  console.error(`The memo changed the result (best trial ${without.bestTrial} → ${withMemo.bestTrial}, score ${without.bestScore} → ${withMemo.bestScore}); it must only save calls.`);
  process.exit(1);
}
console.log(`MIPROv2 ${options.mode ?? "light"} on ${EXPERIMENT}, seed ${SEED}, stand-in model, no response cache`);
console.log("| | LM requests | task model | prompt model | reused scores |");
console.log("|---|---|---|---|---|");
console.log(`| memo off | ${without.requests} | ${without.taskRequests} | ${without.promptRequests} | ${without.reused} |`);
console.log(`| memo on | ${withMemo.requests} | ${withMemo.taskRequests} | ${withMemo.promptRequests} | ${withMemo.reused} |`);
console.log(`ratio on / off: ${(withMemo.requests / without.requests).toFixed(3)} (same best trial ${withMemo.bestTrial}, score ${withMemo.bestScore})`);
