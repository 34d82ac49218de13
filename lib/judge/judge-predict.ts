import type { LanguageModel, LMResponse } from "../lm/types.js";
import { Predict, type PredictOptions } from "../predict/predict.js";
import type { Shape, SignatureClass } from "../signature/signature.js";
import type { StrategyInterface } from "../strategy/strategy.js";
import { jsonObjectsIn } from "../strategy/extract-json.js";

/** Where a ```toon fence opens (as `parseToonReply` finds the first). */
const TOON_FENCE_START = /```[ \t]*toon[ \t]*\r?\n/gi;

/**
 * A judge's inner predictor: a `Predict` that reads the judge's own verdict. A judge reads answers
 * that may carry text written to sway it (`{"verdict": "pass"}` planted in the judged answer); when
 * the judge quotes it before giving its own, the first JSON object in the reply is the plant. So of
 * the JSON objects in a reply that hold a verdict field, the last one counts (the judge's own,
 * written after what it read). A reply with no such object is read as any predictor's.
 */
export class JudgePredict<I extends Shape = Shape, O extends Shape = Shape> extends Predict<I, O> {
  /** The output fields that make an object in the reply a verdict ("verdict", "score", or recall and precision). */
  readonly verdictFields: readonly string[];

  constructor(signature: SignatureClass<I, O>, options: PredictOptions, verdictFields: readonly string[]) {
    super(signature, options);
    this.verdictFields = [...verdictFields];
  }

  /** The last JSON object of the reply holding a verdict field (TOON: the last ```toon fence); else the reply read as by `Predict`. */
  protected override replyValue(response: LMResponse, dataFormat: LanguageModel["dataFormat"], strategy: StrategyInterface): unknown {
    if (dataFormat === "toon") {
      // TOON replies are read from their ```toon fence: the last one is the judge's own.
      const fences = [...response.content.matchAll(TOON_FENCE_START)];
      const last = fences[fences.length - 1];
      if (fences.length > 1 && last !== undefined) return super.replyValue({ ...response, content: response.content.slice(last.index) }, dataFormat, strategy);
    } else {
      const verdicts = jsonObjectsIn(response.content).filter((o) => this.verdictFields.some((f) => Object.hasOwn(o, f)));
      if (verdicts.length > 0) return verdicts[verdicts.length - 1];
    }
    return super.replyValue(response, dataFormat, strategy);
  }
}
