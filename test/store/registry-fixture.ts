import { z } from "zod";
import { ChainOfThought, FewShotExample, Module, Predict, Signature } from "../../lib/index.js";

/** A two-predictor program shared by the registry tests and the child process they start. */
export const Classify = Signature.define({
  name: "Classify",
  description: "Classify the sentiment of the sentence.",
  input: { sentence: z.string() },
  output: { sentiment: z.enum(["negative", "positive"]) },
});
export const Explain = Signature.define({
  name: "Explain",
  description: "Explain the label.",
  input: { sentence: z.string(), sentiment: z.string() },
  output: { explanation: z.string() },
});

export class SentimentProgram extends Module {
  classify = new Predict(Classify);
  explain = new ChainOfThought(Explain);
  async forward(inputs: { sentence: string }) {
    const c = await this.classify.call(inputs);
    return this.explain.call({ sentence: inputs.sentence, sentiment: c.sentiment });
  }
}

/** A program tuned the way an optimizer leaves one: new instructions and demos with ids. */
export function tunedProgram(): SentimentProgram {
  const program = new SentimentProgram();
  program.classify.instruction = "Label the sentence; irony counts as negative.";
  program.classify.demos = [
    new FewShotExample({ id: "train-17", input: { sentence: "What a lovely day" }, output: { sentiment: "positive" } }),
    new FewShotExample({ id: "train-3", input: { sentence: "Oh great, rain again" }, output: { sentiment: "negative" } }),
  ];
  program.explain.instruction = "Say in one sentence why the label fits.";
  program.explain.demos = [
    new FewShotExample({ id: "train-8", input: { sentence: "Fine", sentiment: "positive" }, output: { reasoning: "r", explanation: "It approves." } }),
  ];
  return program;
}

/** The system prompt of every predictor, by path: what "identical prompts" compares. */
export function prompts(module: Module): Record<string, string> {
  return Object.fromEntries(module.namedPredictors().map(([path, p]) => [path, (p as unknown as Predict).prompt().system()]));
}
