// The bundled image task: `typelm run experiments/shapes.ts --lm <a vision model>` counts the shapes in
// datasets/shapes' pictures (CountShapes: an image in, an integer out), with Predict before and after
// MIPROv2, whose demos hold pictures. The offline stand-in (no --lm, no TYPELM_LM, no Ollama) is no
// vision model: it copies the nearest demo's count, so its scores say only that the plumbing runs.
// The simulated vision model of this task (SimulatedShapesLM, in typelm/testing) is used by the
// tests and by notebooks/09-images.ipynb; its rules are in datasets/shapes/README.md.
import { defineExperiment, Predict } from "typelm";

export default defineExperiment({
  name: "shapes",
  dataset: "shapes",
  summary: "Count the coloured shapes in a 96×96 picture: Predict before and after MIPROv2 with picture demos.",
  program: ({ signature }) => new Predict(signature),
  metrics: ["accuracy"],
  optimizer: "mipro",
  optimizerOptions: { mode: "light", kDemos: 3 },
});
