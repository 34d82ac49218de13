// `program.batch(inputsList, options)`: checks the options, reports progress, and runs the inputs
// live (live.ts) or through the provider's batch service (provider.ts). Loaded the first time a
// program's `batch` runs, so `import "typelm"` does not compile it.
import type { Module } from "../module.js";
import { checkBatchOptions, type BatchCallOptions, type BatchResult } from "./options.js";
import { runLive } from "./live.js";
import { BatchReporter } from "./progress.js";
import { runViaProviderBatch } from "./provider.js";

/**
 * Calls `program` on every input of `inputsList` and resolves with one result per input, in the
 * order of `inputsList`: `{ ok: true, value }` (what `call` resolves with) or `{ ok: false, error }`.
 * It rejects only for a bad argument (a `ValidationError` before any call), never for an input.
 */
export async function runBatch<I, O>(program: Module<I, O>, inputsList: readonly I[], options: BatchCallOptions = {}): Promise<BatchResult<O>[]> {
  const plan = checkBatchOptions(program.constructor.name, inputsList, options);
  const reporter = new BatchReporter(plan.name, inputsList.length, plan.progress, { concurrency: plan.concurrency, via: plan.via });
  if (plan.via === "provider-batch") {
    const results = await runViaProviderBatch(program, inputsList, plan, reporter);
    reporter.end({ aborted: plan.signal?.aborted === true });
    return results;
  }
  const { results, summary } = await runLive(program, inputsList, plan, reporter);
  reporter.end({ aborted: plan.signal?.aborted === true, ...summary });
  return results;
}
