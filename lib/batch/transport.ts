// The transport that sends a round's collected requests through the
// provider's batch service (and, when a run is recorded, writes each batch to the lab store). Used by
// evaluations, optimizers and `program.batch`.
import type { BatchRequest } from "../lm/batch.js";
import { batchEnded } from "../lm/batch-ended.js";
import type { BatchAnswer, CollectedRequest } from "../lm/batch-scope.js";
import type { Lab } from "../store/lab-store.js";
import type { BatchTransport } from "./rounds.js";
import type { BatchSettings } from "./settings.js";

// The `batch` option's settings moved to settings.ts (checked synchronously by every option reader, so
// loaded at import); these names keep existing imports working.
export { batchSettings, type BatchOption, type BatchSettings } from "./settings.js";

export interface BatchProgress {
  round: number;
  batchId: string;
  status: string;
  counts: { total: number; completed: number; failed: number };
  /** Seconds this run has been waiting for the batch. */
  waited: number;
}

/**
 * Sends collected requests through the provider's batch service (the official SDKs, via the LM's
 * `BatchClient`). Each batch is written to the lab store (its id and the request keys it holds) as
 * soon as the provider accepted it, before the first poll. A batch an earlier process of the run
 * submitted (a resumed run) that holds these requests is waited for, or read again, instead of
 * being submitted twice; a request whose result this transport read from a batch is never taken
 * from it again, so a request that failed in it goes into a new batch.
 */
export function providerTransport(options: {
  settings: BatchSettings;
  store: Lab | null;
  runId: string | null;
  onProgress?: (progress: BatchProgress) => void;
}): BatchTransport {
  const { settings, store, runId } = options;
  const recorded = store !== null && runId !== null;
  /** By batch id, the requests whose results this transport has read from it. */
  const read = new Map<string, Set<string>>();
  return {
    async send(requests: readonly CollectedRequest[], { round, signal }): Promise<Map<string, BatchAnswer>> {
      const first = requests[0]!;
      const client = await first.client({
        ...(settings.pollInterval === undefined ? {} : { pollInterval: settings.pollInterval }),
        ...(settings.maxRequestsPerBatch === undefined ? {} : { maxRequestsPerBatch: settings.maxRequestsPerBatch }),
      });
      const byKey = new Map(requests.map((r) => [r.key, r]));
      const asBatch = (keys: Iterable<string>): BatchRequest[] => [...keys].flatMap((k) => {
        const r = byKey.get(k);
        return r === undefined ? [] : [{ customId: k, request: r.request }];
      });
      // Batches an earlier, interrupted process of this run submitted that hold requests asked for
      // again (a resumed run): wait for those, or read them again when they completed, so none of
      // their requests is paid twice. A request whose result this transport has read from a batch is
      // never taken from that batch again: when it failed there, it goes into the next batch.
      const open = new Set(byKey.keys());
      /** Each batch to read, with the requests whose answer is taken from it. */
      const batches: { id: string; keys: string[] }[] = [];
      if (recorded) {
        // Newest first: the latest batch holding a request is its latest attempt.
        for (const b of (await store!.batches(runId!)).reverse()) {
          if (b.status === "failed" || b.provider !== first.lm.provider || b.model !== first.lm.model) continue;
          const done = read.get(b.batchId);
          const keys = b.customIds.filter((k) => open.has(k) && done?.has(k) !== true);
          if (keys.length === 0) continue;
          batches.push({ id: b.batchId, keys });
          for (const k of keys) open.delete(k);
        }
      }
      if (open.size > 0) {
        const submitted = await client.submit(asBatch(open), {
          onSubmitted: (batch) => {
            if (recorded) {
              store!.recordBatch(runId!, {
                batchId: batch.id, provider: first.lm.provider, model: first.lm.model, endpoint: first.lm.endpoint, round, customIds: batch.customIds,
              });
            }
          },
        });
        batches.push(...submitted.map((b) => ({ id: b.id, keys: b.customIds })));
        // A team's lab queues its writes: have the batches in the database before the first poll.
        if (recorded && store!.engine === "postgresql") await store!.flush();
      }
      const answers = new Map<string, BatchAnswer>();
      for (const batch of batches) {
        const since = Date.now();
        try {
          await client.wait(batch.id, {
            maxWait: settings.maxWait,
            ...(signal === undefined ? {} : { signal }),
            onPoll: (status) => options.onProgress?.({
              round, batchId: batch.id, status: status.status, counts: status.counts, waited: Math.round((Date.now() - since) / 1000),
            }),
          });
        } catch (error) {
          // A batch that may still be running (maxWait, an unknown status, the network) stays
          // "submitted", so resuming the run waits for it instead of paying for it again.
          if (recorded && batchEnded(error)) store!.finishBatch(runId!, batch.id, "failed");
          throw error;
        }
        const results = await client.results(batch.id, asBatch(batch.keys));
        const done = read.get(batch.id) ?? new Set<string>();
        read.set(batch.id, done);
        for (const k of batch.keys) done.add(k);
        for (const [key, result] of results) answers.set(key, result.ok ? { ok: true, reply: result.reply } : { ok: false, error: result.error });
        if (recorded) store!.finishBatch(runId!, batch.id, "completed");
      }
      return answers;
    },
  };
}
