// `program.batch` with `via: "provider-batch"`: the inputs run in batch rounds (rounds.ts) over the
// provider's batch service (transport.ts), as `Evaluation({ batch })` runs its examples: a one-call
// program takes one batch, a two-call program two rounds, and the program's code does not change.
// Nothing is recorded in the lab store. Never throws for an input: its error is its result.
import { ConfigurationError } from "../errors.js";
import { emptyUsage, trackUsage, type UsageTotals } from "../lm/usage-scope.js";
import type { Module } from "../module.js";
import { abortedInput, type BatchPlan, type BatchResult } from "./options.js";
import type { BatchReporter } from "./progress.js";
import { runInRounds } from "./rounds.js";
import { providerTransport } from "./transport.js";

/** Inputs run at once within a round, at least: their calls are collected, not sent. */
const MIN_ROUND_CONCURRENCY = 64;

/**
 * Calls `program` on every input through provider batches and resolves with each input's result at
 * its position. A batch that fails as a whole (or a wait past `maxWait`) is the result of every
 * input still waiting on it; inputs already answered keep their results. A model that has no batch
 * service is a `ConfigurationError` (rejected). Once `plan.signal` aborts,
 * the run stops waiting and the inputs without a result resolve with an `AbortError` (a batch
 * already submitted stays at the provider).
 */
export async function runViaProviderBatch<I, O>(
  program: Module<I, O>, inputs: readonly I[], plan: BatchPlan, reporter: BatchReporter,
): Promise<BatchResult<O>[]> {
  const settings = plan.providerBatch!;
  const results = new Array<BatchResult<O> | undefined>(inputs.length);
  const transport = providerTransport({ settings, store: null, runId: null, onProgress: (p) => reporter.provider(p) });
  const work = async (i: number): Promise<{ result: BatchResult<O>; usage: UsageTotals }> => {
    // Each round runs the input again from the start: only the run that completes it counts its cost.
    const usage = emptyUsage();
    try {
      return { result: { ok: true, value: await trackUsage(usage, () => program.call(inputs[i] as I, plan.call)) }, usage };
    } catch (error) {
      return { result: { ok: false, error }, usage };
    }
  };
  try {
    await runInRounds(inputs.map((_, i) => i), work, transport, {
      maxRetries: settings.maxRetries,
      concurrency: Math.max(plan.concurrency, MIN_ROUND_CONCURRENCY),
      ...(plan.signal === undefined ? {} : { signal: plan.signal }),
      onDone: (i, { result, usage }) => {
        results[i] = result;
        reporter.input(i, result.ok ? undefined : result.error, usage.cost, plan.concurrency);
      },
    });
  } catch (error) {
    // A model with no batch service (Ollama) or no key is the batch's mistake, not an input's: it
    // rejects, as Evaluation({ batch }) does.
    if (error instanceof ConfigurationError && plan.signal?.aborted !== true) throw error;
    for (let i = 0; i < inputs.length; i++) {
      if (results[i] !== undefined) continue;
      const reason = plan.signal?.aborted === true ? abortedInput(plan.signal, "before this input's calls were answered") : error;
      results[i] = { ok: false, error: reason };
      reporter.input(i, reason, 0, plan.concurrency);
    }
  }
  return results as BatchResult<O>[];
}
