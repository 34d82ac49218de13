import type Anthropic from "@anthropic-ai/sdk";
import type { MessageBatch, MessageBatchIndividualResponse } from "@anthropic-ai/sdk/resources/messages/batches";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages/messages";
import { LMError } from "../../errors.js";
import { redactError } from "../../instrument/redact.js";
import { readResultLines } from "./jsonl-batch.js";
import type { BatchCall, BatchConnection, BatchLimits, BatchStatus, BatchWriter, RawBatchResult } from "./provider.js";

/**
 * Anthropic Message Batches: at most 100,000 requests and 256 MB per batch. Bytes are counted in
 * decimal megabytes, which leaves room for the envelope (`{"requests":[…]}`) under the limit.
 */
export const ANTHROPIC_BATCH_LIMITS: BatchLimits = { maxRequests: 100_000, maxBytes: 256_000_000 };

/** One request of a batch: the Messages API body, unchanged, as `params`. */
export function anthropicBatchLine(customId: string, body: object): object {
  return { custom_id: customId, params: body };
}

/** Message Batches through the `@anthropic-ai/sdk` SDK: `messages.batches.create`, `retrieve`, `results`. */
export function anthropicBatches(client: () => Promise<Anthropic>, call: BatchCall): BatchConnection {
  return {
    open: () => new RequestsBody(client, call),
    async status(batchId) {
      const anthropic = await client();
      const batch = await call("batch status", (signal, timeout) => anthropic.messages.batches.retrieve(batchId, {}, { signal, timeout, maxRetries: 0 }));
      return anthropicBatchStatus(batch);
    },
    async results(batchId, each, unreadable) {
      const anthropic = await client();
      const batch = await call("batch status", (signal, timeout) => anthropic.messages.batches.retrieve(batchId, {}, { signal, timeout, maxRetries: 0 }));
      const url = batch.results_url;
      if (!url) throw new LMError(`anthropic batch ${batchId} has no results_url (processing status ${batch.processing_status})`, { provider: "anthropic", retryable: false });
      await call("batch results", async (signal, timeout) => {
        // The raw JSONL (as the SDK's batches.results() fetches it), read line by line here so that one
        // line that does not parse costs its own request only, not the rest of the file.
        const response = await anthropic.get<Response>(url, {
          headers: { Accept: "application/binary" }, __binaryResponse: true, signal, timeout, maxRetries: 0,
        });
        if (response.body === null) return;
        await readResultLines(response.body, "results", (value) => anthropicResultLine(value as MessageBatchIndividualResponse), each, unreadable);
      }, { bulk: true });
    },
  };
}

/**
 * Where an Anthropic batch is, in typelm's words. Anthropic validates a batch when it is created
 * (a bad one is refused there), so it is never "validating" or "failed"; an ended batch is
 * "cancelled" when someone cancelled it, "expired" when requests ran out of the 24-hour window.
 * A processing status the service does not document is an `LMError` naming it and the batch.
 */
export function anthropicBatchStatus(batch: MessageBatch): BatchStatus {
  const c = batch.request_counts;
  const counts = {
    total: c.processing + c.succeeded + c.errored + c.canceled + c.expired,
    completed: c.succeeded,
    failed: c.errored + c.canceled + c.expired,
  };
  if (batch.processing_status === "in_progress" || batch.processing_status === "canceling") return { id: batch.id, status: "in_progress", counts };
  if (batch.processing_status !== "ended") {
    throw new LMError(
      `anthropic batch ${batch.id} reports processing_status ${JSON.stringify(redactError(String(batch.processing_status)))}, which is not one of ` +
        "Message Batches' (in_progress, canceling, ended); stopped waiting for it. It may still be running at the provider: resume the run to wait for it again once it reports a known status",
      { provider: "anthropic", retryable: false },
    );
  }
  if (batch.cancel_initiated_at !== null) return { id: batch.id, status: "cancelled", counts, reason: "the batch was cancelled" };
  if (c.expired > 0) {
    return {
      id: batch.id, status: "expired", counts,
      reason: `the 24-hour processing window ran out with ${c.succeeded + c.errored} of ${counts.total} requests processed`,
    };
  }
  return { id: batch.id, status: "completed", counts };
}

export function anthropicResultLine(line: MessageBatchIndividualResponse): RawBatchResult {
  const customId = line.custom_id;
  if (typeof customId !== "string") throw new SyntaxError(`batch result without a custom_id: ${JSON.stringify(line)?.slice(0, 200)}`);
  const result = line.result;
  switch (result?.type) {
    case "succeeded": return { customId, ok: true, body: result.message };
    case "errored": {
      const error = result.error?.error;
      return { customId, ok: false, error: `${error?.type ?? "error"}: ${error?.message ?? "(no message)"}` };
    }
    case "canceled": return { customId, ok: false, error: "cancelled before it was processed" };
    case "expired": return { customId, ok: false, error: "expired: the 24-hour processing window ran out before it was processed", expired: true };
    default: return { customId, ok: false, error: `unknown result type ${JSON.stringify((result as { type?: unknown } | undefined)?.type)}` };
  }
}

/**
 * The batch's requests. The SDK sends them as one JSON body, so they are held as objects (which
 * share the prompts' strings with the requests they came from), not as text.
 */
class RequestsBody implements BatchWriter {
  #requests: Anthropic.Messages.Batches.BatchCreateParams.Request[] = [];

  constructor(private readonly client: () => Promise<Anthropic>, private readonly call: BatchCall) {}

  async add(line: object): Promise<void> {
    this.#requests.push(line as { custom_id: string; params: MessageCreateParamsNonStreaming });
  }

  async submit(): Promise<string> {
    const anthropic = await this.client();
    const requests = this.#requests;
    const batch = await this.call("batch creation", (signal, timeout) =>
      anthropic.messages.batches.create({ requests }, { signal, timeout, maxRetries: 0 }), { bulk: true });
    return batch.id;
  }

  async close(): Promise<void> {
    this.#requests = [];
  }
}
