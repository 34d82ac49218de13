import { ValidationError } from "../../errors.js";

/** GEPA's budget presets; each sets the budget in metric calls from the validation size, predictors and minibatch size. */
export type GEPAMode = "light" | "balanced" | "heavy";

/**
 * Per mode: how many new candidates per predictor the budget has room for (DSPy's `auto` presets,
 * 6 / 12 / 18). The budget in metric calls is `V + c·(V + 2·b·P)` for V validation examples, P
 * predictors and minibatch size b: the seed's validation pass, then room for c·P reflective
 * proposals (each scores parent and child on one minibatch, 2·b calls) of which c are scored on the
 * whole validation set. Rejected proposals cost only their 2·b calls, so the run usually tries more.
 */
const GEPA_MODES: Record<GEPAMode, { candidatesPerPredictor: number }> = {
  light: { candidatesPerPredictor: 6 },
  balanced: { candidatesPerPredictor: 12 },
  heavy: { candidatesPerPredictor: 18 },
};

/** Training examples per reflective minibatch (GEPA's default). */
export const DEFAULT_MINIBATCH = 3;

export function resolveGEPAMode(mode: unknown): GEPAMode {
  if (mode === "medium") return "balanced";
  if (mode === "light" || mode === "balanced" || mode === "heavy") return mode;
  throw new ValidationError(
    `GEPA mode ${JSON.stringify(mode)} is not known: expected "light", "balanced" or "heavy" ("medium" means "balanced"), or pass maxMetricCalls instead`,
    { field: "mode" },
  );
}

/** The metric-call budget of a mode for V validation examples, P predictors and minibatch size b (the table in docs/optimizers.md). */
export function modeBudget(mode: GEPAMode, validation: number, predictors: number, minibatchSize: number): number {
  const c = GEPA_MODES[mode].candidatesPerPredictor;
  return validation + c * (validation + 2 * minibatchSize * predictors);
}
