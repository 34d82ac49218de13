import type { ExampleScore, Trial } from "../store/records.js";

/** What the memo keeps of one scored (configuration, example) pair. */
export interface MemoEntry {
  score: number;
  /** `Name: message` when the program call or the metric failed on it (the score is then 0). */
  error: string | null;
}

/**
 * The scores of one optimizer run by (configuration, example): within a run a pair is scored once,
 * and a later trial that meets it again takes the score from here without a model or metric call.
 * A configuration is a string key the optimizer chooses (MIPROv2 and SimpleOptimizer: the choices
 * or their contents, see `configKey`; GEPA: the instruction map, see `instructionsKey`). Failed
 * examples are kept too (score 0 with their error): running them again would spend calls to most
 * likely fail the same way, and a trial made of reused entries then fails or succeeds as the first did.
 *
 * On resume, feed it the replayed trials' `exampleScores` (`rememberTrial`), so a resumed run reuses
 * exactly what the uninterrupted run would have.
 */
export class ScoreMemo {
  private readonly byConfig = new Map<string, Map<string, MemoEntry>>();

  get(config: string, exampleId: string): MemoEntry | undefined {
    return this.byConfig.get(config)?.get(exampleId);
  }

  /** Records a score; a pair already known keeps its first score (a pair is scored once). */
  set(config: string, exampleId: string, entry: MemoEntry): void {
    let scores = this.byConfig.get(config);
    if (scores === undefined) this.byConfig.set(config, (scores = new Map()));
    if (!scores.has(exampleId)) scores.set(exampleId, { score: entry.score, error: entry.error });
  }

  /** Records every entry of a list of per-example scores (a trial's, or part of one). */
  remember(config: string, scores: readonly ExampleScore[] | null | undefined): void {
    for (const e of scores ?? []) this.set(config, e.exampleId, { score: e.score, error: e.error ?? null });
  }

  /** Records a finished (or replayed) trial's per-example scores under `config`. */
  rememberTrial(config: string, trial: Pick<Trial, "exampleScores">): void {
    this.remember(config, trial.exampleScores);
  }

  /** Pairs known. */
  get size(): number {
    let n = 0;
    for (const m of this.byConfig.values()) n += m.size;
    return n;
  }
}

/** GEPA's configuration key: the instruction text of every predictor (demos never change there). */
export function instructionsKey(instructions: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.keys(instructions).sort().map((p) => [p, instructions[p]]));
}
