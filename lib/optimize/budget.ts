/**
 * MIPROv2's budget: the check of its options, the mode presets and the numbers one compile works with
 * (candidates, trials, minibatch and validation sizes, bootstrap runs). Plain functions, so the bundle loads this module at
 * the first call (scripts/deferred-modules.mjs) instead of at `import "typelm"`.
 */
import { ValidationError } from "../errors.js";
import type { MIPROBudget, MIPROv2Options } from "./mipro.js";
import { checkMetricThreshold, checkOptions, type CommonOptions } from "./options.js";

/** MIPROv2's budget presets; each sets the candidates, trials, minibatch and validation sizes. */
export type MIPROMode = "light" | "balanced" | "heavy";

/** Per mode: candidates N (instructions and demo sets per predictor), minibatch size, validation size. */
const MODES: Record<MIPROMode, { candidates: number; minibatchSize: number; validationSize: number }> = {
  light: { candidates: 6, minibatchSize: 25, validationSize: 100 },
  balanced: { candidates: 12, minibatchSize: 35, validationSize: 300 },
  heavy: { candidates: 18, minibatchSize: 50, validationSize: 1000 },
};

/** A full validation evaluation of the best minibatch combination after every this many trials (and after the last). */
export const FULL_EVAL_EVERY = 5;

/** The demo sets a zero-shot run still bootstraps to show the proposer, and their size (DSPy's BOOTSTRAPPED_FEWSHOT_EXAMPLES_IN_CONTEXT). @internal */
export const ZERO_SHOT_PROPOSER_DEMOS = 3;

/** The mode an option names (default "light"; "medium" is "balanced"); a `ValidationError` for any other value. */
export function resolveMode(mode: unknown): MIPROMode {
  if (mode === undefined) return "light";
  if (mode === "medium") return "balanced";
  if (mode === "light" || mode === "balanced" || mode === "heavy") return mode;
  throw new ValidationError(
    `MIPROv2 mode ${JSON.stringify(mode)} is not known: expected "light", "balanced" or "heavy" ("medium" means "balanced")`,
    { field: "mode" },
  );
}

/** `new MIPROv2(options)`'s checks: the mode, the counts, seed, metric, limits and the metric threshold; a `ValidationError` naming the option. */
export function checkMIPROOptions(options: MIPROv2Options): void {
  resolveMode(options.mode);
  checkOptions("MIPROv2", options as CommonOptions, {
    kDemos: 0, numCandidates: 1, numTrials: 1, minibatchSize: 1, validationSize: 1, fullEvalEvery: 1, concurrency: 1,
  });
  checkMetricThreshold("MIPROv2", options as Record<string, unknown>);
}

/**
 * Trials for N candidates and P predictors, DSPy's rule: max(2·V·log2 N, 1.5·N), rounded down, with
 * V = 2P search variables (instruction and demo set per predictor), V = P in a zero-shot run —
 * enough for the search to see every candidate about once and each variable's choices several times.
 */
export function trialsFor(candidates: number, predictors: number, zeroShot = false): number {
  const variables = zeroShot ? predictors : 2 * predictors;
  return Math.max(1, Math.floor(Math.max(2 * variables * Math.log2(Math.max(candidates, 1)), 1.5 * candidates)));
}

/**
 * `MIPROv2.budget`: the numbers one compile works with for the options, `predictors` predictors,
 * `training` demo-pool examples and `validation` validation examples (the table in docs/optimizers.md).
 */
export function miproBudget(o: MIPROv2Options, predictors: number, training: number, validation: number): MIPROBudget {
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
