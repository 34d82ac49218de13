import { z } from "zod";
import type { LanguageModel } from "../lm/types.js";
import type { Predict } from "../predict/predict.js";
import { JudgePredict } from "./judge-predict.js";
import { Signature } from "../signature/signature.js";
import { onFirstUse } from "../load-sync.js";
import { Judge, type JudgeOptions, type JudgeOutput } from "./judge.js";

/** Options of `new SemanticF1(options)`. */
export interface SemanticF1Options {
  /** The metric's name in reports (default "semantic_f1"). */
  name?: string;
  /** The judge's model (default: the configured one). */
  lm?: LanguageModel;
  /** The judge's instruction (default: enumerate the key ideas of each, discuss their overlap, then recall and precision). */
  instruction?: string;
}

const CRITERIA = "The answer covers the key ideas of the reference (recall) and says nothing the reference does not support (precision).";

const INSTRUCTION =
  "Compare the answer with the reference to compute recall and precision of their key ideas. First list the key ideas of the " +
  "reference and of the answer, then discuss their overlap in the rationale, then give recall (the fraction of the reference's " +
  "key ideas the answer covers) and precision (the fraction of the answer's key ideas the reference supports), each from 0 to 1.";

const unit = (what: string) => z.number().min(0).max(1).describe(what);

/**
 * Key ideas listed, their overlap discussed, then recall and precision in [0, 1] (DSPy's decompositional
 * form). Defined at the first `new SemanticF1`, so `import "typelm"` does not build its schemas.
 */
const semanticRecallPrecision = onFirstUse(() => Signature.define({
  name: "SemanticRecallPrecision",
  input: {
    inputs: z.record(z.string(), z.unknown()).describe("the task's inputs"),
    reference: z.record(z.string(), z.unknown()).describe("the expected (reference) outputs"),
    answer: z.record(z.string(), z.unknown()).describe("the outputs to judge"),
  },
  output: {
    reference_key_ideas: z.string().describe("the key ideas of the reference, listed"),
    answer_key_ideas: z.string().describe("the key ideas of the answer, listed"),
    rationale: z.string().describe("the overlap between the two lists, discussed"),
    recall: unit("fraction (0 to 1) of the reference's key ideas the answer covers"),
    precision: unit("fraction (0 to 1) of the answer's key ideas the reference supports"),
  },
}));

/**
 * A reference-based semantic metric in the spirit of DSPy's `SemanticF1`: a `Judge` whose typed
 * predictor lists the key ideas of the reference and of the answer, discusses their overlap, and
 * gives recall and precision in [0, 1]; the score is their F1, 2pr/(p + r) (0 when both are 0). A
 * recall or precision outside [0, 1] is an `OutputError` (an error row), not a clamped value. Each
 * row keeps recall, precision and the rationale in `row.details[name]`.
 */
export class SemanticF1 extends Judge {
  constructor(options: SemanticF1Options = {}) {
    const judgeOptions: JudgeOptions = { name: options.name ?? "semantic_f1", criteria: CRITERIA, reference: true };
    if (options.lm !== undefined) judgeOptions.lm = options.lm;
    if (options.instruction !== undefined) judgeOptions.instruction = options.instruction;
    super(judgeOptions);
  }

  protected override buildPredictor(options: JudgeOptions): Predict {
    return new JudgePredict(semanticRecallPrecision(), { instruction: options.instruction ?? INSTRUCTION }, ["recall", "precision"]);
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
