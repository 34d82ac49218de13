import { ValidationError } from "../errors.js";

/** MIPROv2's budget presets; each sets the candidates, trials, minibatch and validation sizes. */
export type MIPROMode = "light" | "balanced" | "heavy";

/** Per mode: candidates N (instructions and demo sets per predictor), minibatch size, validation size. */
export const MODES: Record<MIPROMode, { candidates: number; minibatchSize: number; validationSize: number }> = {
  light: { candidates: 6, minibatchSize: 25, validationSize: 100 },
  balanced: { candidates: 12, minibatchSize: 35, validationSize: 300 },
  heavy: { candidates: 18, minibatchSize: 50, validationSize: 1000 },
};

/** A full validation evaluation of the best minibatch combination after every this many trials (and after the last). */
export const FULL_EVAL_EVERY = 5;

export function resolveMode(mode: unknown): MIPROMode {
  if (mode === undefined) return "light";
  if (mode === "medium") return "balanced";
  if (mode === "light" || mode === "balanced" || mode === "heavy") return mode;
  throw new ValidationError(
    `MIPROv2 mode ${JSON.stringify(mode)} is not known: expected "light", "balanced" or "heavy" ("medium" means "balanced")`,
    { field: "mode" },
  );
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
