import { resolveLM, resolveStrategy } from "../config.js";
import { validateInputs } from "../convert/input.js";
import { estimateCost } from "../lm/prices.js";
import type { LanguageModel } from "../lm/types.js";
import { Module } from "../module.js";
import { Predict } from "../predict/predict.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { SignatureClass } from "../signature/signature.js";
import { predictorLMs } from "../evaluate/predictor-models.js";
import { estimatedUsage, writeReply } from "../testing/reply.js";

/** What an optimizer run is expected to cost, worked out without calling any model. */
export interface UsageEstimate {
  lmCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** USD; null when a model involved has no known price (`lib/lm/prices.ts`). */
  cost: number | null;
}

/** Token counts of LM calls made with one model (the unit costs are priced in). */
export interface CallUsage {
  lm: LanguageModel;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** Sent through the provider's batch service: priced at the batch price. */
  batch?: boolean;
}

/** Up to `size` examples spread evenly over the list (all of them when there are fewer). */
export function spreadSample<T>(items: readonly T[], size: number): T[] {
  if (items.length <= size) return [...items];
  return Array.from({ length: size }, (_, i) => items[Math.floor((i * items.length) / size)]!);
}

/**
 * The tokens of one call of a `Predict` on these input values, as sent (`prompt(...).messages`, in the
 * formats the model and the strategy choose) and as a well-behaved model would reply with `outputs`
 * (bare JSON for native structured output, else a fenced block in the data format).
 */
export function predictCallTokens(predictor: Predict, lm: LanguageModel, values: Record<string, unknown>, outputs: Record<string, unknown>): { inputTokens: number; outputTokens: number } {
  const native = resolveStrategy(predictor.config.strategy).useStructuredOutputs(lm);
  const dataFormat = native ? "json" : lm.dataFormat;
  const sig = predictor.compiledSignature;
  let checked: Record<string, unknown>;
  try {
    checked = validateInputs(sig, values);
  } catch {
    checked = values;
  }
  let messages: { content: string }[];
  try {
    messages = predictor.prompt(lm.schemaFormat, dataFormat).messages(checked);
  } catch {
    messages = [{ content: predictor.prompt(lm.schemaFormat, dataFormat).system() }, { content: JSON.stringify(values) }];
  }
  const reply: Record<string, unknown> = {};
  for (const field of sig.outputs) reply[field.name] = outputs[field.name] ?? "";
  let content: string;
  try {
    content = writeReply(reply, native, dataFormat);
  } catch {
    content = JSON.stringify(reply);
  }
  return estimatedUsage(messages, content);
}

/**
 * The tokens of one call of a signature (an optimizer's own step: GEPA's reflection, MIPROv2's
 * proposer) with these input values and a reply holding `outputs`.
 */
export function signatureCallTokens(args: {
  signature: SignatureClass; lm: LanguageModel; values: Record<string, unknown>; outputs: Record<string, unknown>; instruction?: string;
}): { inputTokens: number; outputTokens: number } {
  const p = new Predict(args.signature, args.instruction === undefined ? {} : { instruction: args.instruction });
  return predictCallTokens(p, args.lm, args.values, args.outputs);
}

export interface ProgramUsageArgs {
  program: Module;
  /** The examples the program is run on; a spread sample of `sample` of them is rendered. */
  examples: readonly FewShotExample[];
  /** LM calls of the program to price: one per predictor call (a straight pipeline of P predictors makes P per run). */
  calls: number;
  /**
   * The demos each predictor holds during the run, by predictor path (a typical demo set of what the
   * optimizer puts in); a predictor not named keeps its own.
   */
  demos?: Record<string, readonly FewShotExample[]>;
  /** The model of every predictor (default: each predictor's own, as a call would resolve it). */
  lm?: LanguageModel;
  /** Examples rendered (default 50). */
  sample?: number;
}

/**
 * The token usage of `calls` program LM calls: every predictor's prompt is rendered for a sample of
 * the examples (its input fields taken from the example's inputs, else from its expected outputs,
 * else empty: a later step of a pipeline whose inputs the data does not hold is underestimated),
 * with the reply written from the example's expected outputs; `calls` are shared evenly among the
 * predictors. No model is called.
 */
export function programCallUsage(args: ProgramUsageArgs): CallUsage[] {
  const program = args.program.clone();
  const lms = predictorLMs(program);
  const predictors = program.namedPredictors().filter((e): e is [string, Predict] => e[1] instanceof Predict);
  if (predictors.length === 0 || args.calls === 0) return [];
  const examples = spreadSample(args.examples, args.sample ?? 50);
  const byLM = new Map<LanguageModel, CallUsage>();
  for (const [path, p] of predictors) {
    const demos = args.demos?.[path];
    if (demos !== undefined) p.demos = [...demos];
    const lm = args.lm ?? lms.get(p) ?? resolveLM(undefined, undefined);
    let input = 0, output = 0;
    for (const ex of examples) {
      const values: Record<string, unknown> = {};
      for (const f of p.compiledSignature.inputs) values[f.name] = ex.input[f.name] ?? ex.output[f.name] ?? "";
      const t = predictCallTokens(p, lm, values, { ...ex.input, ...ex.output });
      input += t.inputTokens;
      output += t.outputTokens;
    }
    const calls = args.calls / predictors.length;
    const n = Math.max(1, examples.length);
    const u = byLM.get(lm) ?? { lm, calls: 0, inputTokens: 0, outputTokens: 0 };
    u.calls += calls;
    u.inputTokens += (calls * input) / n;
    u.outputTokens += (calls * output) / n;
    byLM.set(lm, u);
  }
  return [...byLM.values()];
}

/** Adds up call usages into an estimate, pricing each model's calls (null when one has no price). */
export function totalUsage(parts: readonly CallUsage[]): UsageEstimate {
  let lmCalls = 0, inputTokens = 0, outputTokens = 0;
  let cost: number | null = 0;
  for (const p of parts) {
    lmCalls += p.calls;
    inputTokens += p.inputTokens;
    outputTokens += p.outputTokens;
    const c = estimateCost(p.lm.provider, p.lm.model, { inputTokens: p.inputTokens, outputTokens: p.outputTokens }, { batch: p.batch === true });
    cost = c === null || cost === null ? null : cost + c;
  }
  return { lmCalls: Math.round(lmCalls), inputTokens: Math.round(inputTokens), outputTokens: Math.round(outputTokens), cost };
}

/**
 * The whole estimate for program calls alone: `programCallUsage` priced by `totalUsage`. Optimizers
 * with calls of their own (reflection, proposals) add those parts (`signatureCallTokens`) before totalling.
 */
export function estimateUsage(args: ProgramUsageArgs): UsageEstimate {
  return totalUsage(programCallUsage(args));
}
