import { terminalBar } from "../evaluate/progress.js";
import type { Trial } from "../store/records.js";

/** What an optimizer's terminal bar is told: each trial as it is recorded (or replayed), then the end. */
export interface TrialProgress {
  trial(trial: Trial): void;
  stop(settled: boolean): void;
}

export interface TrialProgressOptions {
  /** The optimizer's `progress` option: `false` never draws. */
  progress: boolean | undefined;
  label: string;
  /** What the bar counts: recorded trials, or GEPA's metric calls (a trial's `budgetSpent`). */
  unit: "trials" | "metric calls";
  total: number;
  /** `total` is an upper bound (MIPROv2 skips a full evaluation with nothing new to check): end on what was done. */
  upperBound?: boolean;
  /** What the best score is labelled (default "validation (chosen on it)": the search chose on that score, so it is optimistic). */
  scoreLabel?: string;
}

const NONE: TrialProgress = { trial() {}, stop() {} };

// As in the notebook's display: minibatch scores (and GEPA's rejected proposals, scored on a
// minibatch) and bootstrap pass rates are not validation scores, so they never set the best.
const notAValidationScore = /minibatch|rejected|bootstrap/i;

/**
 * One terminal bar per compile (standard error, only when it is a terminal and `progress` is not
 * false): trials or metric calls done / total, best validation score so far (labelled "validation
 * (chosen on it)"), failed trials, cost.
 */
export function trialProgress(o: TrialProgressOptions): TrialProgress {
  const bar = terminalBar(o.progress, o.total, `${o.label} {bar} {value}/{total} ${o.unit} | best {best}, ${o.scoreLabel ?? "validation (chosen on it)"} | failed {failures} | $ {cost}`, {
    best: "-", failures: 0, cost: "0.0000",
  });
  if (bar === null) return NONE;
  let trials = 0, failures = 0, cost = 0;
  let best: number | null = null;
  let done = 0;
  return {
    trial(t) {
      trials++;
      if (t.error !== null) failures++;
      cost += t.cost;
      if (t.score !== null && !notAValidationScore.test(t.kind)) best = Math.max(best ?? t.score, t.score);
      done = o.unit === "trials" ? trials : t.budgetSpent;
      bar.update(done, { best: best === null ? "-" : best.toFixed(3), failures, cost: cost.toFixed(4) });
    },
    stop(settled) {
      if (settled && o.upperBound) bar.setTotal(done);
      bar.stop();
    },
  };
}
