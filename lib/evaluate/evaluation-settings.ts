// `new Evaluation(options)`'s options checked (lib/evaluate/evaluation.ts): concurrency, recording, name,
// store, the per-example time limit and batches. Deferred (scripts/deferred-modules.mjs): loaded at the
// first `new Evaluation`, not at `import "typelm"`.
import { ValidationError } from "../errors.js";
import type { Lab } from "../store/lab-store.js";
import { batchSettings, type BatchSettings } from "../batch/settings.js";
import type { EvaluationOptions } from "./evaluation.js";
import { checkExampleTimeout } from "./timeout.js";

/** An `Evaluation`'s settings, as its constructor sets them from its options. */
export interface EvaluationSettings {
  concurrency: number;
  progress: boolean | undefined;
  record: boolean;
  recordCalls: boolean;
  name: string;
  givenName: string | undefined;
  lab: Lab | null | undefined;
  exampleTimeout: number;
  batch: BatchSettings | null;
}

/** The options checked (a `ValidationError` naming the option otherwise) and defaulted. */
export function evaluationSettings(options: EvaluationOptions): EvaluationSettings {
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ValidationError(`Evaluation concurrency must be a positive integer; received ${JSON.stringify(concurrency)}`, { field: "concurrency" });
  }
  return {
    concurrency,
    progress: options.progress,
    record: options.record ?? true,
    recordCalls: options.recordCalls ?? true,
    name: options.name ?? "evaluation",
    givenName: options.name,
    lab: options.lab,
    exampleTimeout: checkExampleTimeout("Evaluation", options.exampleTimeout),
    batch: batchSettings("Evaluation", options.batch),
  };
}
