/**
 * GEPA's planning, worked out before any model call: the check of its options, the budget, the setup of
 * a compile (examples, budget, minibatch) and the estimate of what a compile spends. Plain functions
 * behind the `GEPA` class, so the bundle loads them at the first call (scripts/deferred-modules.mjs)
 * instead of at `import "typelm"`.
 */
import { resolveLM } from "../../config.js";
import { jsonWithMediaLabels } from "../../media/label.js";
import { ValidationError } from "../../errors.js";
import { defaultMetric } from "../../evaluate/metric.js";
import type { Module } from "../../module.js";
import { Predict } from "../../predict/predict.js";
import type { FewShotExample } from "../../prompt/few-shot.js";
import { programCallUsage, signatureCallTokens, spreadSample, totalUsage, type CallUsage, type UsageEstimate } from "../estimate.js";
import { checkExamples } from "../examples.js";
import { checkOptions, tunablePredictors, type CommonOptions } from "../options.js";
import { DEFAULT_MINIBATCH, modeBudget, resolveGEPAMode } from "./budget.js";
import { evidenceText, reflectionSignature } from "./reflection-prompt.js";
import type { GEPA, GEPACompileArgs, GEPAOptions, Setup } from "./gepa.js";

/** `new GEPA(options)`'s checks: one budget (mode or maxMetricCalls), the metric, the counts, limits and the parent selection; a `ValidationError` naming the option. */
export function checkGEPAOptions(options: GEPAOptions): void {
  if (options.mode !== undefined && options.maxMetricCalls !== undefined) {
    throw new ValidationError(
      `GEPA takes a budget as mode or maxMetricCalls, not both: received mode ${JSON.stringify(options.mode)} and maxMetricCalls ${options.maxMetricCalls}; drop one`,
      { field: "maxMetricCalls" },
    );
  }
  if (options.mode !== undefined) resolveGEPAMode(options.mode);
  if (options.metric !== undefined && typeof options.metric !== "function") {
    throw new ValidationError(`GEPA option metric must be a function (example, prediction, trace?) => score or { score, feedback }; received ${typeof options.metric}`, { field: "metric" });
  }
  checkOptions("GEPA", options as CommonOptions, { maxMetricCalls: 1, minibatchSize: 1, concurrency: 1 });
  if (options.candidateSelection !== undefined && options.candidateSelection !== "pareto" && options.candidateSelection !== "best") {
    throw new ValidationError(`GEPA candidateSelection must be "pareto" or "best"; received ${JSON.stringify(options.candidateSelection)}`, { field: "candidateSelection" });
  }
}

/** `GEPA.budget`: the budget in metric calls for `validation` examples and `predictors` predictors. */
export function gepaBudget(o: GEPAOptions, predictors: number, validation: number): number {
  return o.maxMetricCalls ?? modeBudget(resolveGEPAMode(o.mode ?? "light"), validation, predictors, o.minibatchSize ?? DEFAULT_MINIBATCH);
}

/** `GEPA.estimate`: what a compile would spend, without calling any model (the method's comment says how). */
export function estimateGEPA(gepa: GEPA, args: Omit<GEPACompileArgs<Module>, "resume"> & { callsPerRun?: number }): UsageEstimate {
  const s = setupGEPA(gepa, args);
  const P = s.paths.length;
  const V = s.val.length;
  const b = s.minibatchSize;
  const C = args.callsPerRun ?? P;
  const reflections = Math.max(0, Math.floor(((s.budget - V) * P) / (V + 2 * b * P)));
  const trainCalls = Math.min(s.budget - V, 2 * b * reflections);
  const program = args.moduleInstance;
  // With batch, the program calls on validation examples are priced at the batch price (the merges'
  // validation subsamples, which run live, are counted with them: an estimate errs a little low there).
  const batch = gepa.options.batch !== undefined && gepa.options.batch !== false;
  const parts: CallUsage[] = [
    ...programCallUsage({ program, examples: s.val.map((e) => e.example), calls: C * (s.budget - trainCalls) }).map((u) => ({ ...u, batch })),
    ...programCallUsage({ program, examples: s.train.map((e) => e.example), calls: C * trainCalls }),
  ];
  if (reflections > 0) {
    const reflectionLM = gepa.options.reflectionLM ?? resolveLM(undefined, program.config.lm);
    const evidenceFrom = spreadSample(s.train, 50).slice(0, b).map((e) => e.example);
    let input = 0, output = 0;
    const predictors = new Map(program.namedPredictors());
    for (const path of s.paths) {
      const p = predictors.get(path)!;
      const sig = p instanceof Predict ? p.compiledSignature : undefined;
      const fieldsIn = sig?.inputs.map((f) => f.name) ?? Object.keys(evidenceFrom[0]?.input ?? {});
      const fieldsOut = sig?.outputs.map((f) => f.name) ?? Object.keys(evidenceFrom[0]?.output ?? {});
      const pick = (ex: FewShotExample, names: string[]) => Object.fromEntries(names.map((n) => [n, ex.input[n] ?? ex.output[n] ?? ""]));
      const evidence = evidenceFrom.map((ex) => ({
        inputs: pick(ex, fieldsIn), outputs: pick(ex, fieldsOut),
        feedback: `Score 0. Expected outputs: ${jsonWithMediaLabels(ex.output)}; the program's outputs: ${jsonWithMediaLabels(pick(ex, fieldsOut))}.`,
      }));
      const t = signatureCallTokens({
        signature: reflectionSignature(), lm: reflectionLM,
        values: { step: `${path} (outputs: ${fieldsOut.join(", ")})`, currentInstruction: p.instruction, examplesWithFeedback: evidenceText(evidence) },
        outputs: { newInstruction: p.instruction },
      });
      input += t.inputTokens;
      output += t.outputTokens;
    }
    parts.push({ lm: reflectionLM, calls: reflections, inputTokens: (reflections * input) / P, outputTokens: (reflections * output) / P });
  }
  return totalUsage(parts);
}

/** Checks a compile's arguments and works out the examples and the budget (no model call). */
export function setupGEPA(gepa: GEPA, args: Omit<GEPACompileArgs<Module>, "resume">): Setup {
  const paths = tunablePredictors("GEPA", args.moduleInstance).map(([p]) => p);
  const train = checkExamples(args.trainingExamples, "trainingExamples", "GEPA");
  const given = args.validationExamples !== undefined;
  const val = given ? checkExamples(args.validationExamples, "validationExamples", "GEPA") : train;
  const o = gepa.options;
  const budget = gepa.budget(paths.length, val.length);
  const minibatchSize = Math.min(o.minibatchSize ?? DEFAULT_MINIBATCH, train.length);
  if (budget < val.length) {
    throw new ValidationError(
      `GEPA maxMetricCalls is ${budget}, but scoring the seed program once on the ${val.length} validation examples takes ${val.length} metric calls; ` +
        `give at least ${val.length + 2 * minibatchSize + val.length} (one validation pass, one minibatch step of 2×${minibatchSize} and one accepted candidate), or fewer validation examples`,
      { field: "maxMetricCalls" },
    );
  }
  return { paths, train, val, validation: given ? "given" : "training", budget, minibatchSize, metric: o.metric ?? defaultMetric };
}
