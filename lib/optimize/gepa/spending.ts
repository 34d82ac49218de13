// GEPA's budget as its run spends it (MetricBudget) and the run's merge limits: loaded with the run
// (run.ts) at a GEPA's first compile, so `import "typelm"` does not compile them.
import { TypelmError } from "../../errors.js";

/** Merges attempted at most (DSPy's default `max_merge_invocations`). */
export const MAX_MERGES = 5;
/** Validation examples a merged candidate is first scored on before its full validation pass. */
export const MERGE_SUBSAMPLE = 5;

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
