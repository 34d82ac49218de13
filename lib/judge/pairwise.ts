import type { LanguageModel } from "../lm/types.js";
import { Module, type CallOptions } from "../module.js";
import type { Predict } from "../predict/predict.js";
import { checkPairwiseOptions, pairwisePredictor } from "./pairwise-impl.js";
import type { Interval } from "../evaluate/stats/methods.js";
import type { JudgeUsage } from "../evaluate/report.js";
import type { EvaluationRow } from "../store/records.js";

/** Options of `new PairwiseJudge(options)`. */
export interface PairwiseJudgeOptions {
  /** What makes one answer better: "Which answer follows the instruction better?" */
  criteria: string;
  /** A name for the judge (default "pairwise"). */
  name?: string;
  /** Show the judge the example's expected outputs (default false). */
  reference?: boolean;
  /** The judge's model (default: the configured one). */
  lm?: LanguageModel;
  /** The judge's instruction (default: one written from the criteria). */
  instruction?: string;
}

/** What a pairwise judge is shown: the inputs, the two answers in the order asked, and optionally the reference. */
export interface PairwiseInput {
  inputs: Record<string, unknown>;
  first: Record<string, unknown>;
  second: Record<string, unknown>;
  expected?: Record<string, unknown>;
}

/** Which answer the judge prefers in the order it was shown them, and why. */
export interface PairwiseOutput {
  rationale: string;
  winner: "first" | "second" | "tie";
}

/** One example's outcome in `compare`. */
export interface PairwiseRow {
  index: number;
  exampleId: string | null;
  /** "A", "B" or "tie" after both orders; null when the judge could not answer (see `error`). */
  outcome: "A" | "B" | "tie" | null;
  /** The judge's answer with A shown first, and with B shown first; null when not asked (a side had no prediction) or on error. */
  aFirst: PairwiseOutput | null;
  bFirst: PairwiseOutput | null;
  /** The two orders disagreed (counted as a tie). */
  inconsistent: boolean;
  /** Why the example was decided without the judge ("A failed", "both failed"), or null. */
  note: string | null;
  /** `Name: message` of the judge call that failed, or null. */
  error: string | null;
}

/** What `PairwiseJudge.compare` returns. */
export interface PairwiseComparison {
  /** Examples decided (the judge's failures left out). */
  n: number;
  winsA: number;
  winsB: number;
  /** Ties, the inconsistent examples included. */
  ties: number;
  /** Examples whose two orders gave different verdicts (position bias): counted as ties. */
  inconsistent: number;
  /** (winsB + ties/2) / n: how often B is preferred, ties counted half; 0.5 when n = 0. */
  winRate: number;
  /**
   * 95% interval of `winRate`: with no tie, the modified Wilson interval of winsB of n (a share); else
   * the BCa bootstrap over the examples' outcomes (1, ½, 0), 2,000 resamples, seed 0, except that when
   * every outcome is the same (all ties) it is the Wilson interval of that value as a share of n.
   */
  ci: Interval;
  /** How `ci` was computed: `"wilson"` or `"bootstrap-bca"` (see `ci`). */
  ciMethod: "wilson" | "bootstrap-bca";
  /** Exact two-sided sign test on the decisive examples (winsA against winsB, p = 1/2); 1 when none is decisive. */
  pValue: number;
  /** Examples the judge could not answer in one or both orders (provider error, unusable reply). */
  failures: number;
  rows: PairwiseRow[];
  /** The judge's model calls. */
  judge: JudgeUsage;
}

/** The reports `compare` takes: anything with evaluation rows in example order (an `EvaluationReport`). */
export interface PairwiseReport {
  results: readonly EvaluationRow[];
}

/**
 * An LM judge that compares two programs' answers to the same example. `compare(reportA, reportB)`
 * asks twice per example, once with A's answer first and once with B's first, so a judge that
 * prefers a position cancels out: when the two orders disagree the example is a tie and counts in
 * `inconsistent`. A `Module` with a typed inner predictor, like `Judge`.
 */
export class PairwiseJudge extends Module<PairwiseInput, PairwiseOutput> {
  readonly name: string;
  readonly criteria: string;
  readonly reference: boolean;
  readonly predictor: Predict;

  constructor(options: PairwiseJudgeOptions) {
    super();
    const { name, criteria, reference } = checkPairwiseOptions(options);
    this.name = name;
    this.criteria = criteria;
    this.reference = reference;
    this.predictor = pairwisePredictor(reference, options);
    if (options.lm !== undefined) this.config.lm = options.lm;
  }

  /** Asks once, in the order given. */
  async forward(input: PairwiseInput, options: CallOptions = {}): Promise<PairwiseOutput> {
    const values = (await import("./judge-run.js")).pairwiseValues(this, input);
    const out = (await this.predictor.call(values, options)) as unknown as Record<string, unknown>;
    return { rationale: String(out["rationale"] ?? ""), winner: out["winner"] as PairwiseOutput["winner"] };
  }

  /**
   * Compares report B with report A example by example (rows paired by position; their example ids
   * must match). Each example is judged in both orders; agreeing verdicts decide it, disagreeing ones
   * make it a tie counted in `inconsistent`. A side with no prediction (its program failed) loses
   * without a judge call, both failed is a tie. A judge call that fails leaves the example out of
   * `n`, counted in `failures` with its error on the row.
   */
  async compare(reportA: PairwiseReport, reportB: PairwiseReport, options: { concurrency?: number } = {}): Promise<PairwiseComparison> {
    return (await import("./pairwise-compare.js")).comparePairs(this, reportA, reportB, options);
  }
}
