// A bundled experiment: `typelm reproduce banking77` runs this file (as `typelm run experiments/banking77.ts`).
import { defineExperiment, Predict } from "typelm";

export default defineExperiment({
  name: "banking77",
  dataset: "banking77",
  summary: "Intent of a bank customer's message (10 of BANKING77's intents): Predict before and after MIPROv2.",
  program: ({ signature }) => new Predict(signature),
  metrics: ["accuracy", "f1_score"],
  labelField: "intent",
  optimizer: "mipro",
  optimizerOptions: { mode: "light", kDemos: 4 },
});
