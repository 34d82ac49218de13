// A bundled experiment: `typelm reproduce gsm8k` runs this file (as `typelm run experiments/gsm8k.ts`).
import { ChainOfThought, defineExperiment } from "typelm";

export default defineExperiment({
  name: "gsm8k",
  dataset: "gsm8k",
  summary: "Grade-school math word problems, final number only: ChainOfThought before and after MIPROv2.",
  program: ({ signature }) => new ChainOfThought(signature),
  metrics: ["accuracy"],
  optimizer: "mipro",
  optimizerOptions: { mode: "light", kDemos: 3 },
});
