/**
 * Which errors of `BatchClient.wait` mean the batch has ended without results to read. Apart from
 * lib/lm/batch.ts so that code asking (the evaluation's batch transport) does not load the batch
 * client and every provider at `import "typelm"`.
 */
const endedBatchErrors = new WeakSet<object>();

/** Marks `error` as the error of a batch that ended without results to read. */
export function markBatchEnded(error: object): void {
  endedBatchErrors.add(error);
}

/**
 * True when `error` is `BatchClient.wait`'s error for a batch that has ended without results to
 * read (failed, cancelled, or expired with nothing answered): nothing more will come of it. False
 * for a wait that stopped while the batch may still be running (maxWait, an unknown status, the
 * network).
 */
export function batchEnded(error: unknown): boolean {
  return typeof error === "object" && error !== null && endedBatchErrors.has(error);
}
