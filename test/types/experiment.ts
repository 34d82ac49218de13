// Type-level tests of defineExperiment: compiled by `tsc --noEmit`, never executed.
// Each `@ts-expect-error` line must fail to compile, or tsc reports an unused directive.
import { z } from "zod";
import { defineExperiment, MIPROv2, Predict, runExperiment, Signature } from "../../lib/index.js";

const Triage = Signature.define({
  name: "Triage",
  description: "Route a ticket.",
  input: { ticket: z.string() },
  output: { team: z.enum(["billing", "technical"]) },
});
const base = { name: "tickets", dataset: "../data/tickets", signature: Triage, program: new Predict(Triage) };

export function optimizerOptionsByOptimizer(): void {
  // Each named optimizer takes its own constructor's options.
  defineExperiment({ ...base, optimizer: "mipro", optimizerOptions: { mode: "light", kDemos: 2, proposalTemperature: 0.7 } });
  defineExperiment({ ...base, optimizerOptions: { kDemos: 2 } }); // "mipro" is the default
  defineExperiment({ ...base, optimizer: "gepa", optimizerOptions: { maxMetricCalls: 50, useMerge: false } });
  defineExperiment({ ...base, optimizer: "simple", optimizerOptions: { numTrials: 3, instructions: ["Be brief."] } });
  defineExperiment({ ...base, optimizer: "none" });
  defineExperiment({ ...base, optimizer: ({ metric, seed }) => new MIPROv2({ metric, seed, kDemos: 1 }) });

  // @ts-expect-error a misspelt option (kDemos)
  defineExperiment({ ...base, optimizer: "mipro", optimizerOptions: { kDemo: 2 } });
  // @ts-expect-error misspelt with the default optimizer too
  defineExperiment({ ...base, optimizerOptions: { kDemo: 2 } });
  // @ts-expect-error GEPA has no kDemos
  defineExperiment({ ...base, optimizer: "gepa", optimizerOptions: { kDemos: 2 } });
  // @ts-expect-error SimpleOptimizer has no mode
  defineExperiment({ ...base, optimizer: "simple", optimizerOptions: { mode: "light" } });
  // @ts-expect-error an option of the wrong type
  defineExperiment({ ...base, optimizer: "mipro", optimizerOptions: { kDemos: "2" } });
  // @ts-expect-error "none" reads no options
  defineExperiment({ ...base, optimizer: "none", optimizerOptions: { kDemos: 2 } });
  // @ts-expect-error an optimizer function makes its own optimizer
  defineExperiment({ ...base, optimizer: () => new MIPROv2(), optimizerOptions: { kDemos: 2 } });
}

export function metricNames(): void {
  defineExperiment({ ...base, metrics: ["accuracy", "f1_score", "exact_match", "token_f1", (example, prediction) => example.output["team"] === prediction["team"]] });
  // @ts-expect-error a misspelt built-in metric
  defineExperiment({ ...base, metrics: ["acuracy"] });
}

export async function runsWithItsSignature(): Promise<void> {
  // A definition whose signature is a specific one (its program function typed by it) runs as it is.
  const experiment = defineExperiment({ ...base, program: ({ signature }) => new Predict(signature), optimizer: "none" });
  const run = await runExperiment(experiment, { limit: 2 });
  void run.models;
}
