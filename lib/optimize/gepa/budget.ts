import { TypelmError, ValidationError } from "../../errors.js";

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
/** Merges attempted at most (DSPy's default `max_merge_invocations`). */
export const MAX_MERGES = 5;
/** Validation examples a merged candidate is first scored on before its full validation pass. */
export const MERGE_SUBSAMPLE = 5;

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


/**
 * GEPA's metric-call budget as it is spent. A step first reserves its worst case (a reflective step
 * 2·b + V, a merge V); it starts only when that fits in what is left, and each scoring inside it
 * spends from the reservation before its examples are run. A scoring that would spend more than its
 * step reserved is refused before it runs (an error recorded on the trial, never a call over the
 * budget), so the budget cannot be exceeded by a step whose worst case was reckoned wrong.
 */
export class MetricBudget {
  spent = 0;
  private reserved = 0;

  constructor(readonly total: number) {}

  get left(): number {
    return this.total - this.spent;
  }

  /** Sets aside a step's worst case; false (nothing set aside) when it does not fit in what is left. */
  reserve(calls: number): boolean {
    if (calls > this.left) return false;
    this.reserved = calls;
    return true;
  }

  /** Counts `calls` metric calls against the current step's reservation, before they are made. */
  spend(calls: number): void {
    if (calls > this.reserved) {
      throw new TypelmError(
        `GEPA: a scoring of ${calls} examples would spend more than the ${this.reserved} metric calls left of its step's reservation ` +
          `(budget ${this.total}, spent ${this.spent}); it was not run`,
      );
    }
    this.reserved -= calls;
    this.spent += calls;
  }

  /** Ends a step at its recorded total (a replayed step's too); what it did not spend goes back. */
  settle(spent: number): void {
    this.spent = spent;
    this.reserved = 0;
  }
}
