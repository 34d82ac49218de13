// `calibrate(judge, { annotations: runId })`: people's reviews of a run's rows (the lab's annotations,
// written by `typelm view --review`) read as the human verdicts calibrate compares the judge with.
// Loaded at its first use, with the lab store, so `import "typelm"` loads neither.
import { ConfigurationError, ValidationError } from "../errors.js";
import { FewShotExample } from "../prompt/few-shot.js";
import type { Lab } from "../store/lab-store.js";
import { isPostgresUrl } from "../store/pg-url.js";
import type { Judge } from "./judge.js";

/** Where `calibrate` reads human verdicts from instead of examples: a run's reviews, in a lab store. */
export interface AnnotationSource {
  /** The run whose rows were reviewed (its id). */
  annotations: string;
  /** The lab store holding it: a file's path, a postgres:// URL or an open store; default the configured lab. */
  store?: string | Lab;
}

/**
 * One calibration example per reviewed row (the latest review of each): the judge's inputs are the
 * row's inputs and prediction, and as reference the corrected expected output where the reviewer gave
 * one, else the row's; the human verdict is the review's: "pass"/"fail" (1 and 0 on a numeric scale),
 * or a number (1 = pass, 0 = fail on a pass-fail judge). A verdict the judge's scale has no label for
 * is a `ValidationError` naming the row.
 */
export async function annotatedExamples(judge: Judge, source: AnnotationSource): Promise<FewShotExample[]> {
  const runId = source.annotations;
  if (typeof runId !== "string" || runId === "") {
    throw new ValidationError(`calibrate: annotations must be the id of a reviewed run; received ${JSON.stringify(runId)}`, { field: "annotations" });
  }
  const { LabStore, labFromConfig } = await import("../store/lab-store.js");
  const { listAnnotations } = await import("../store/annotations/annotations.js");
  const given = source.store;
  const lab: Lab | null = given === undefined ? labFromConfig() : typeof given === "string"
    ? (isPostgresUrl(given) ? LabStore.open({ url: given }) : LabStore.open({ path: given })) : given;
  if (lab === null) throw new ConfigurationError("calibrate: reading annotations needs a lab store, and recording is off (c.lab = false): give { annotations, store }");
  const rows = await lab.rows(runId);
  const reviews = await listAnnotations(lab, runId);
  if (reviews.length === 0) {
    throw new ValidationError(`calibrate: run ${runId} has no reviews in ${lab.path}; review its rows with typelm view --review first`, { field: "annotations" });
  }
  const byId = new Map(rows.map((r) => [r.exampleId ?? `#${r.index}`, r]));
  const field = judge.verdictField;
  return reviews.map((a) => {
    const row = byId.get(a.exampleId);
    if (row === undefined) throw new ValidationError(`calibrate: run ${runId} has no row ${JSON.stringify(a.exampleId)}, which review ${a.id} names`, { field: "annotations" });
    const human = humanVerdict(judge, a.verdict);
    if (human === undefined || !judge.labels.includes(String(human))) {
      throw new ValidationError(
        `calibrate: the review of ${a.exampleId} in run ${runId} says ${JSON.stringify(a.verdict)}; judge "${judge.name}" gives one of ` +
          `${judge.labels.map((l) => JSON.stringify(l)).join(", ")} (pass counts 1 and fail 0 on a numeric scale; 1 and 0 count pass and fail on a pass-fail one)`,
        { field: "annotations" },
      );
    }
    return new FewShotExample({
      input: { inputs: row.inputs, prediction: row.prediction ?? {}, ...(judge.reference ? { expected: a.expected ?? row.expected } : {}) },
      output: { [field]: human },
      id: a.exampleId,
    });
  });
}

function humanVerdict(judge: Judge, verdict: "pass" | "fail" | number): string | number | undefined {
  if (judge.scale === "pass-fail") {
    if (verdict === "pass" || verdict === "fail") return verdict;
    return verdict === 1 ? "pass" : verdict === 0 ? "fail" : undefined;
  }
  if (verdict === "pass") return 1;
  if (verdict === "fail") return 0;
  return verdict;
}
