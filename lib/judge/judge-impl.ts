// The bodies of `Judge` and `SemanticF1` (lib/judge/judge.ts, semantic-f1.ts): the constructors' checks,
// the inner predictors' signatures and instructions, and how a Judge's answer becomes a score, details
// and labels. Deferred (scripts/deferred-modules.mjs): loaded at the first `new Judge` / `new SemanticF1`,
// so `import "typelm"` parses only the classes' facades.
import { z } from "zod";
import { ValidationError } from "../errors.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { Metric } from "../evaluate/metric.js";
import type { Predict } from "../predict/predict.js";
import { Signature, type Shape, type SignatureClass } from "../signature/signature.js";
import { onFirstUse } from "../load-sync.js";
import { JudgePredict } from "./judge-predict.js";
import type { Judge, JudgeOptions, JudgeOutput, JudgeScale } from "./judge.js";
import type { SemanticF1Options } from "./semantic-f1.js";

const VERDICTS = ["pass", "fail"] as const;

/** `new Judge(options)`'s options checked: its name, criteria, scale and whether it reads the reference. */
export function checkJudgeOptions(options: JudgeOptions): { name: string; criteria: string; scale: JudgeScale; reference: boolean } {
  if (options === null || typeof options !== "object") {
    throw new ValidationError("new Judge(options): expected { name, criteria, scale?, reference?, lm? }", { field: "options" });
  }
  const { name, criteria } = options;
  if (typeof name !== "string" || !/^[A-Za-z_$][\w$-]*$/.test(name)) {
    throw new ValidationError(
      `Judge name must be an identifier such as "correct" (it names the metric in reports); received ${JSON.stringify(name)}`,
      { field: "name" },
    );
  }
  if (typeof criteria !== "string" || criteria.trim() === "") {
    throw new ValidationError(`Judge "${name}": criteria must be a non-empty text saying what the judge checks; received ${JSON.stringify(criteria)}`, { field: "criteria" });
  }
  const scale = checkScale(name, options.scale ?? "pass-fail");
  const reference = options.reference ?? false;
  if (typeof reference !== "boolean") {
    throw new ValidationError(`Judge "${name}": reference must be true or false; received ${JSON.stringify(options.reference)}`, { field: "reference" });
  }
  return { name, criteria, scale, reference };
}

function checkScale(name: string, scale: unknown): JudgeScale {
  if (scale === "pass-fail") return scale;
  const s = scale as { min?: unknown; max?: unknown } | null;
  if (
    s !== null && typeof s === "object" && Number.isInteger(s.min) && Number.isInteger(s.max) && (s.min as number) < (s.max as number) &&
    (s.max as number) - (s.min as number) <= 100
  ) {
    return { min: s.min as number, max: s.max as number };
  }
  throw new ValidationError(
    `Judge "${name}": scale must be "pass-fail" or { min, max } with whole numbers min < max (at most 100 apart), e.g. { min: 1, max: 5 }; received ${JSON.stringify(scale)}`,
    { field: "scale" },
  );
}

/** A judge's inner predictor (`Judge.buildPredictor`): the verdict or score signature, and its instruction. */
export function judgePredictor(scale: JudgeScale, reference: boolean, options: JudgeOptions): Predict {
  const verdictField = scale === "pass-fail" ? "verdict" : "score";
  return new JudgePredict(judgeSignature(scale, reference), {
    instruction: options.instruction ?? defaultInstruction(options.criteria, scale, reference),
  }, [verdictField]);
}

function judgeSignature(scale: JudgeScale, reference: boolean): SignatureClass {
  const object = () => z.record(z.string(), z.unknown());
  const verdict: Shape = scale === "pass-fail"
    ? { verdict: z.enum(VERDICTS).describe("pass when the answer meets the criteria, fail when it does not") }
    : { score: z.number().int().min(scale.min).max(scale.max).describe(`${scale.min} (does not meet the criteria) to ${scale.max} (fully meets them)`) };
  return Signature.define({
    name: scale === "pass-fail" ? "JudgeVerdict" : "JudgeScore",
    input: {
      inputs: object().describe("the task's inputs"),
      ...(reference ? { reference: object().describe("the expected (reference) outputs") } : {}),
      answer: object().describe("the outputs to judge"),
    },
    output: { rationale: z.string().describe("why, briefly, before the verdict"), ...verdict },
  });
}

function defaultInstruction(criteria: string, scale: JudgeScale, reference: boolean): string {
  const given = reference ? "the task's inputs, the reference outputs and the answer" : "the task's inputs and the answer";
  const how = scale === "pass-fail"
    ? "then the verdict: pass if the answer meets the criteria, fail if it does not."
    : `then a whole-number score from ${scale.min} (does not meet the criteria) to ${scale.max} (fully meets them).`;
  return `Judge the answer. Criteria: ${criteria}\nRead ${given}; give a brief rationale first, ${how}`;
}

/** `Judge.outputOf`: the predictor's outputs as the judge's answer (verdict or score, and rationale). */
export function judgeOutputOf(scale: JudgeScale, out: Record<string, unknown>): JudgeOutput {
  const rationale = String(out["rationale"] ?? "");
  return scale === "pass-fail"
    ? { verdict: out["verdict"] as "pass" | "fail", rationale }
    : { score: out["score"] as number, rationale };
}

/** `Judge.detailsOf`: what a row keeps of the judge's answer, verdict (or score) and rationale. */
export function judgeDetailsOf(scale: JudgeScale, output: JudgeOutput): Record<string, unknown> {
  return scale === "pass-fail"
    ? { verdict: output.verdict, rationale: output.rationale }
    : { score: output.score, rationale: output.rationale };
}

/** `Judge.scoreOf`: pass = 1, fail = 0, a score s → (s − min)/(max − min). */
export function judgeScoreOf(scale: JudgeScale, output: JudgeOutput): number {
  if (scale === "pass-fail") return output.verdict === "pass" ? 1 : 0;
  const { min, max } = scale;
  return (Number(output.score) - min) / (max - min);
}

/** `Judge.labels`: ["pass", "fail"], or min … max as text. */
export function judgeLabels(scale: JudgeScale): string[] {
  if (scale === "pass-fail") return [...VERDICTS];
  const out: string[] = [];
  for (let s = scale.min; s <= scale.max; s++) out.push(String(s));
  return out;
}

/** `Judge.metric`: the judge as a metric function named after it. */
export function judgeMetric(judge: Judge): Metric {
  const fn = (example: FewShotExample, prediction: Record<string, unknown>) => judge.judge(example, prediction);
  Object.defineProperty(fn, "name", { value: judge.name });
  return fn;
}

// SemanticF1

const SEMANTIC_CRITERIA = "The answer covers the key ideas of the reference (recall) and says nothing the reference does not support (precision).";

const SEMANTIC_INSTRUCTION =
  "Compare the answer with the reference to compute recall and precision of their key ideas. First list the key ideas of the " +
  "reference and of the answer, then discuss their overlap in the rationale, then give recall (the fraction of the reference's " +
  "key ideas the answer covers) and precision (the fraction of the answer's key ideas the reference supports), each from 0 to 1.";

const unit = (what: string) => z.number().min(0).max(1).describe(what);

/** Key ideas listed, their overlap discussed, then recall and precision in [0, 1] (DSPy's decompositional form). Defined once, at the first use. */
const semanticRecallPrecision = onFirstUse(() => Signature.define({
  name: "SemanticRecallPrecision",
  input: {
    inputs: z.record(z.string(), z.unknown()).describe("the task's inputs"),
    reference: z.record(z.string(), z.unknown()).describe("the expected (reference) outputs"),
    answer: z.record(z.string(), z.unknown()).describe("the outputs to judge"),
  },
  output: {
    reference_key_ideas: z.string().describe("the key ideas of the reference, listed"),
    answer_key_ideas: z.string().describe("the key ideas of the answer, listed"),
    rationale: z.string().describe("the overlap between the two lists, discussed"),
    recall: unit("fraction (0 to 1) of the reference's key ideas the answer covers"),
    precision: unit("fraction (0 to 1) of the answer's key ideas the reference supports"),
  },
}));

/** The `Judge` options `new SemanticF1(options)` stands for: its name, its criteria, judged against the reference. */
export function semanticJudgeOptions(options: SemanticF1Options): JudgeOptions {
  const judgeOptions: JudgeOptions = { name: options.name ?? "semantic_f1", criteria: SEMANTIC_CRITERIA, reference: true };
  if (options.lm !== undefined) judgeOptions.lm = options.lm;
  if (options.instruction !== undefined) judgeOptions.instruction = options.instruction;
  return judgeOptions;
}

/** `SemanticF1`'s inner predictor: key ideas, their overlap, recall and precision. */
export function semanticPredictor(options: JudgeOptions): Predict {
  return new JudgePredict(semanticRecallPrecision(), { instruction: options.instruction ?? SEMANTIC_INSTRUCTION }, ["recall", "precision"]);
}
