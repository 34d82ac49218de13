// A bundled experiment: `typelm reproduce poem-sentiment` runs this file (as `typelm run experiments/poem-sentiment.ts`).
import { defineExperiment, Predict } from "typelm";

export default defineExperiment({
  name: "poem-sentiment",
  dataset: "poem-sentiment",
  summary: "Sentiment of a verse (4 labels): a Predict program before and after MIPROv2 chose its instruction and demos.",
  program: ({ signature }) => new Predict(signature),
  metrics: ["accuracy", "f1_score"],
  labelField: "label",
  optimizer: "mipro",
  optimizerOptions: { mode: "light", kDemos: 4 },
});
