import { asyncLocalStorage } from "../load-sync.js";
import type { BatchClient, BatchClientOptions } from "./batch.js";
import type { ProviderReply } from "./providers/provider.js";
import type { LMRequest } from "./types.js";

/**
 * Batch rounds. A module runs as usual inside a round; each model call it makes is answered from
 * the LM cache, or from the replies of the batches already completed in this run, or else it is
 * collected for the next batch and the call throws `PendingBatchRequest`, which suspends that
 * example until the batch is back. Running the example again then replays the calls it already has
 * replies for and reaches its next one: a one-step module takes one batch, a two-step pipeline two,
 * an agent loop as many as its longest example needs, and the module code does not change.
 */

/** A model call collected for a batch: the request as the live call would send it, and who sends it. */
export interface CollectedRequest {
  /** The response-cache key of the request (also its custom id in the batch). */
  key: string;
  /** `provider/model` and the server, so requests for different LMs go to different batches. */
  lm: { provider: string; model: string; endpoint: string };
  request: LMRequest;
  settings: { model: string; temperature: number | undefined; maxTokens: number | undefined };
  /** A batch client for the LM that made the call (its key, server and settings). */
  client(options: Pick<BatchClientOptions, "pollInterval" | "maxRequestsPerBatch">): Promise<BatchClient>;
}

/** What a finished batch said about one request. */
export type BatchAnswer = { ok: true; reply: ProviderReply } | { ok: false; error: string };

export interface BatchRoundScope {
  /** The batch's answer to a request already sent in this run, if any. */
  answer(key: string): BatchAnswer | undefined;
  /** Adds a request to the next batch (a request met twice is collected once). */
  collect(request: CollectedRequest): void;
}

/** Thrown by a model call inside a round when its reply is not there yet; the example waits for the batch. */
export class PendingBatchRequest extends Error {
  constructor(readonly key: string) {
    super("waiting for a batch reply");
    this.name = "PendingBatchRequest";
  }
}

const rounds = asyncLocalStorage<BatchRoundScope>();

/** Runs `fn` with its model calls going through `scope`. */
export function inBatchRound<T>(scope: BatchRoundScope, fn: () => Promise<T>): Promise<T> {
  return rounds.run(scope, fn);
}

/** The round a model call is made in, if any. */
export function currentBatchRound(): BatchRoundScope | undefined {
  return rounds.getStore();
}

/** True when `error` (or what it wraps) is a call waiting for its batch reply. */
export function isPendingBatch(error: unknown): boolean {
  for (let e = error, depth = 0; e !== null && e !== undefined && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof PendingBatchRequest) return true;
  }
  return false;
}
