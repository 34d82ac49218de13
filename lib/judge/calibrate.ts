import type { EvaluationOptions } from "../evaluate/evaluation.js";
import type { EvaluationReport } from "../evaluate/report.js";
import type { Interval } from "../evaluate/stats/methods.js";
import type { FewShotExample } from "../prompt/few-shot.js";
import type { Judge } from "./judge.js";
import type { AnnotationSource } from "./calibrate-annotations.js";

export type { AnnotationSource } from "./calibrate-annotations.js";

/** How far a judge agrees with people: what `calibrate` returns. */
export interface Calibration {
  /** Examples compared: those the judge answered. */
  n: number;
  /** Examples the judge could not answer (provider error, unusable reply): left out of every figure below. */
  failures: number;
  /** Share of examples where the judge's verdict (or score) equals the human one. */
  accuracy: number;
  /** Cohen's κ: agreement beyond chance (1 perfect, 0 what chance gives, < 0 worse). NaN when undefined (one category only). */
  kappa: number;
  /** 95% interval of κ: κ̃ ± 1.96·SẼ (Fleiss, Cohen & Everitt 1969) on the table with two pseudo-items spread over its cells, holding κ; see `kappaCiMethod` and `cohenKappa`. */
  kappaCi: Interval;
  /** How `kappaCi` (and `weightedKappaCi`) were computed. */
  kappaCiMethod: "fleiss-cohen-everitt-pseudocounts";
  /** Human label (row) against the judge's (column), in the scale's order. */
  confusion: { labels: string[]; matrix: number[][] };
  /** Numeric scales only: κ with quadratic weights (a 4 where people said 5 counts as near agreement). */
  weightedKappa?: number;
  weightedKappaCi?: Interval;
  /** The evaluation of the judge over the examples (rows hold its verdicts and rationales). */
  report: EvaluationReport;
}

/**
 * Measures a judge against human labels. Each example holds what was judged as its input,
 * `{ inputs, prediction, expected? }` (`expected` for a judge with `reference: true`), and the human
 * verdict as its expected output: `{ verdict: "pass" | "fail" }`, or `{ score }` on the judge's scale.
 * These are the judge program's own inputs and outputs, so the same examples can train it (an
 * optimizer's `trainset` with agreement as the metric).
 *
 * Or `{ annotations: runId, store? }`: people's reviews of that run's rows (`typelm view --review`,
 * the latest per row) are the human verdicts — "pass"/"fail", or a number on the judge's scale (pass
 * counts 1 and fail 0 on a numeric scale; 1 and 0 count pass and fail on a pass-fail judge) — and the
 * judge sees each row's inputs and prediction, with the reviewer's corrected expected output where given.
 *
 * The judge runs as an evaluation (`options` as for `new Evaluation`, named "calibrate:<judge>"),
 * metric `agreement`. Returns agreement, Cohen's κ with its 95% interval (Fleiss–Cohen–Everitt
 * large-sample standard error), the confusion, and for numeric scales quadratic-weighted κ.
 */
export async function calibrate(judge: Judge, examples: readonly FewShotExample[] | AnnotationSource, options: EvaluationOptions = {}): Promise<Calibration> {
  if (!Array.isArray(examples) && typeof examples === "object" && examples !== null && "annotations" in examples) {
    const { annotatedExamples } = await import("./calibrate-annotations.js");
    examples = await annotatedExamples(judge, examples);
  }
  return (await import("./calibrate-run.js")).calibrateRun(judge, examples as readonly FewShotExample[], options);
}
