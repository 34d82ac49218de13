// The bodies of `PairwiseJudge` (lib/judge/pairwise.ts): its constructor's check, its inner predictor's
// signature and instruction. Deferred (scripts/deferred-modules.mjs): loaded at the first `new PairwiseJudge`, not at `import "typelm"`.
import { z } from "zod";
import { ValidationError } from "../errors.js";
import type { Predict } from "../predict/predict.js";
import { Signature, type SignatureClass } from "../signature/signature.js";
import { JudgePredict } from "./judge-predict.js";
import type { PairwiseJudgeOptions } from "./pairwise.js";

const WINNERS = ["first", "second", "tie"] as const;

/** `new PairwiseJudge(options)`'s options checked: its name, criteria and whether it reads the reference. */
export function checkPairwiseOptions(options: PairwiseJudgeOptions): { name: string; criteria: string; reference: boolean } {
  if (options === null || typeof options !== "object" || typeof options.criteria !== "string" || options.criteria.trim() === "") {
    throw new ValidationError(
      `new PairwiseJudge(options): criteria must be a non-empty text saying what makes an answer better; received ${JSON.stringify((options as { criteria?: unknown } | null)?.criteria)}`,
      { field: "criteria" },
    );
  }
  return { name: options.name ?? "pairwise", criteria: options.criteria, reference: options.reference ?? false };
}

/** A pairwise judge's inner predictor: its own (last) winner counts, not one quoted from an answer (see JudgePredict). */
export function pairwisePredictor(reference: boolean, options: PairwiseJudgeOptions): Predict {
  return new JudgePredict(pairwiseSignature(reference), { instruction: options.instruction ?? defaultInstruction(options.criteria, reference) }, ["winner"]);
}

function pairwiseSignature(reference: boolean): SignatureClass {
  const object = () => z.record(z.string(), z.unknown());
  return Signature.define({
    name: "PairwiseVerdict",
    input: {
      inputs: object().describe("the task's inputs"),
      ...(reference ? { reference: object().describe("the expected (reference) outputs") } : {}),
      first: object().describe("the first answer"),
      second: object().describe("the second answer"),
    },
    output: {
      rationale: z.string().describe("why, briefly, before the verdict"),
      winner: z.enum(WINNERS).describe("the better answer: first, second, or tie when neither is better"),
    },
  });
}

function defaultInstruction(criteria: string, reference: boolean): string {
  return `Compare two answers to the same task. Criteria: ${criteria}\nRead the task's inputs${reference ? ", the reference outputs" : ""} and both answers; ` +
    "give a brief rationale first, then the winner: first, second, or tie. The order the answers are shown in says nothing about their quality.";
}
