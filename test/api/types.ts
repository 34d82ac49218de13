// Type-level acceptance checks (API.md "Types flow"): compiled by `tsc --noEmit` (npm run typecheck,
// .ci/run), never executed. Each `@ts-expect-error` must fail to compile, else tsc reports it unused.
import { z } from "zod";
import { ChainOfThought, Module, Predict, ReAct, Signature } from "typelm";

class Classify extends Signature {
  static override description = "Classify the sentiment of a sentence.";
  static override input = { sentence: z.string() };
  static override output = { sentiment: z.enum(["positive", "negative", "neutral"]), confidence: z.number().default(1.0) };
}

// A typed predictor is a `Predict` (and a Module): lists and parameters of plain `Predict` accept it.
export const predictors: Predict[] = [new Predict(Classify)];
export const anyPredict: Predict<any, any> = new Predict(Classify);
export const cot: ChainOfThought = new ChainOfThought(Classify);
export const agent: ReAct = new ReAct(Classify);
export const modules: Module[] = [new Predict(Classify), new ChainOfThought(Classify)];

export async function outputsStayTyped(): Promise<void> {
  const r = await new Predict(Classify).call({ sentence: "x" });
  const sentiment: "positive" | "negative" | "neutral" = r.sentiment;
  const confidence: number = r.confidence;
  // @ts-expect-error an enum output is not a number
  const wrong: number = r.sentiment;
  // @ts-expect-error an undeclared output is not on the prediction
  void r.nope;
  // @ts-expect-error an undeclared input is rejected
  await new Predict(Classify).call({ sentense: "typo" });
  void [sentiment, confidence, wrong];
}
