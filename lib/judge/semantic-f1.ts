import type { LanguageModel } from "../lm/types.js";
import type { Predict } from "../predict/predict.js";
import { Judge, type JudgeOptions, type JudgeOutput } from "./judge.js";
import { semanticJudgeOptions, semanticPredictor } from "./judge-impl.js";

/** Options of `new SemanticF1(options)`. */
export interface SemanticF1Options {
  /** The metric's name in reports (default "semantic_f1"). */
  name?: string;
  /** The judge's model (default: the configured one). */
  lm?: LanguageModel;
  /** The judge's instruction (default: enumerate the key ideas of each, discuss their overlap, then recall and precision). */
  instruction?: string;
}

/**
 * A reference-based semantic metric in the spirit of DSPy's `SemanticF1`: a `Judge` whose typed
 * predictor lists the key ideas of the reference and of the answer, discusses their overlap, and
 * gives recall and precision in [0, 1]; the score is their F1, 2pr/(p + r) (0 when both are 0). A
 * recall or precision outside [0, 1] is an `OutputError` (an error row), not a clamped value. Each
 * row keeps recall, precision and the rationale in `row.details[name]`.
 */
export class SemanticF1 extends Judge {
  constructor(options: SemanticF1Options = {}) {
    super(semanticJudgeOptions(options));
  }

  protected override buildPredictor(options: JudgeOptions): Predict {
    return semanticPredictor(options);
  }

  protected override outputOf(out: Record<string, unknown>): JudgeOutput {
    return { rationale: String(out["rationale"] ?? ""), recall: out["recall"] as number, precision: out["precision"] as number };
  }

  protected override detailsOf(output: JudgeOutput): Record<string, unknown> {
    return { recall: output.recall, precision: output.precision, rationale: output.rationale };
  }

  /** F1 of recall and precision: 2pr/(p + r), 0 when both are 0. */
  override scoreOf(output: JudgeOutput): number {
    const p = Number(output.precision), r = Number(output.recall);
    return p + r === 0 ? 0 : (2 * p * r) / (p + r);
  }
}
