// A bundled experiment: `typelm reproduce restaurant8k` runs this file (as `typelm run experiments/restaurant8k.ts`).
import { defineExperiment, Predict } from "typelm";

export default defineExperiment({
  name: "restaurant8k",
  dataset: "restaurant8k",
  summary: "Booking details (people, date, time, names) copied from a message: Predict before and after MIPROv2; accuracy = every slot right.",
  program: ({ signature }) => new Predict(signature),
  metrics: ["accuracy"],
  optimizer: "mipro",
  optimizerOptions: { mode: "light", kDemos: 4 },
});
