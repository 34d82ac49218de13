// Batch rounds: runs every item of a list (an evaluation's examples, `program.batch`'s inputs) with
// its model calls collected and sent through a provider's batch service, round after round, until
// every item's calls have been answered. Shared by Evaluation({ batch }) and program.batch({ via:
// "provider-batch" }); it imports neither evaluate/ nor optimize/.
import { TypelmError } from "../errors.js";
import { inBatchRound, type BatchAnswer, type CollectedRequest } from "../lm/batch-scope.js";

/** Sends one LM's collected requests as a batch and waits for the provider's answers. */
export interface BatchTransport {
  /**
   * All requests are for the same LM (provider, model, server). Resolves with an answer for each key
   * it has one for: a reply, or the error of a request that failed or expired inside the batch. A
   * key without an answer counts as failed. Rejects when the batch as a whole failed.
   */
  send(requests: readonly CollectedRequest[], info: { round: number; signal?: AbortSignal }): Promise<Map<string, BatchAnswer>>;
}

export interface RoundsOptions<R = unknown> {
  /** A request that fails or expires inside a batch goes into the next one up to this many times (default 2). */
  maxRetries?: number;
  /** Examples run at once within a round (default 64); their calls do not wait on the network. */
  concurrency?: number;
  /** Told after each batch: the round, the LM, how many requests it held. */
  onBatch?: (info: { round: number; lm: string; requests: number }) => void;
  /** Told as soon as an item's result stands (it collected nothing in that run). */
  onDone?: (index: number, result: R) => void;
  /**
   * Stops the run: no item starts once it has aborted, no new round begins, and the run rejects
   * with the signal's reason (a batch already submitted stays at the provider). The transport is
   * handed the signal to stop waiting on a batch.
   */
  signal?: AbortSignal;
}

export interface RoundsResult<R> {
  /** Each item's result from the run that completed it, in item order. */
  results: R[];
  /** Batches sent (a round with requests for two LMs sends two). */
  batches: number;
  /** Rounds that sent at least one batch. */
  rounds: number;
}

/** More rounds than any module needs: a loop that keeps asking for new requests is a bug, not a batch. */
const MAX_ROUNDS = 1_000;

/**
 * Runs `work` for every item in batch rounds. Each round runs every unfinished item; its model calls
 * are answered from the LM cache or earlier batches, or collected (see `batch-scope.ts`). An item
 * that collected a request is run again after the round's batches are back; its result from this
 * round is dropped. Items that collected nothing are done. Requests answered with an error are
 * collected again, at most `maxRetries` times, then the error is the call's answer (an `LMError`
 * the item's work sees, as it would a live failure).
 */
export async function runInRounds<T, R>(
  items: readonly T[], work: (item: T, index: number) => Promise<R>, transport: BatchTransport, options: RoundsOptions<R> = {},
): Promise<RoundsResult<R>> {
  const maxRetries = options.maxRetries ?? 2;
  const concurrency = Math.max(1, options.concurrency ?? 64);
  const answers = new Map<string, BatchAnswer>();
  const failures = new Map<string, number>();
  const results = new Array<R>(items.length);
  let open = items.map((_, i) => i);
  let batches = 0;
  let rounds = 0;
  const signal = options.signal;
  for (let round = 0; open.length > 0; round++) {
    signal?.throwIfAborted();
    if (round >= MAX_ROUNDS) throw new TypelmError(`Batch rounds: still collecting new requests after ${MAX_ROUNDS} rounds; the module keeps asking the model without end`);
    const collected = new Map<string, CollectedRequest>();
    const waiting: number[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let at = next++; at < open.length && signal?.aborted !== true; at = next++) {
        const index = open[at]!;
        let pending = false;
        const run = inBatchRound({
          answer: (key) => answers.get(key),
          collect: (request) => {
            pending = true;
            if (!collected.has(request.key)) collected.set(request.key, request);
          },
        }, () => work(items[index]!, index));
        // An item that collected a request waits for the batch whatever its work did with the
        // PendingBatchRequest (threw it, or caught it into a failed result); otherwise its outcome stands.
        const settled = await run.then((value) => ({ value }), (error: unknown) => ({ error }));
        if (pending) waiting.push(index);
        else if ("error" in settled) throw settled.error;
        else {
          results[index] = settled.value;
          options.onDone?.(index, settled.value);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, open.length) }, worker));
    signal?.throwIfAborted();
    if (collected.size === 0) break;
    rounds++;
    const byLM = new Map<string, CollectedRequest[]>();
    for (const request of collected.values()) {
      const lm = `${request.lm.provider}/${request.lm.model} @ ${request.lm.endpoint}`;
      const group = byLM.get(lm);
      if (group === undefined) byLM.set(lm, [request]);
      else group.push(request);
    }
    for (const [lm, requests] of byLM) {
      const got = await transport.send(requests, signal === undefined ? { round } : { round, signal });
      batches++;
      options.onBatch?.({ round, lm, requests: requests.length });
      for (const request of requests) {
        const answer = got.get(request.key) ?? { ok: false, error: "the batch returned no result for this request" };
        if (answer.ok) {
          answers.set(request.key, answer);
          continue;
        }
        const failed = (failures.get(request.key) ?? 0) + 1;
        failures.set(request.key, failed);
        // Past the retries the error is the answer; until then the request is collected again next round.
        if (failed > maxRetries) answers.set(request.key, { ok: false, error: `${answer.error} (after ${failed} ${failed === 1 ? "batch" : "batches"})` });
      }
    }
    open = waiting.sort((a, b) => a - b);
  }
  return { results, batches, rounds };
}
