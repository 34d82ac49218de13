import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import type OpenAI from "openai";
import type { Batch } from "openai/resources/batches";
import { builtin } from "../../load-sync.js";
import { loadOptional } from "../../optional.js";
import { LMError } from "../../errors.js";
import { redactError } from "../../instrument/redact.js";
import { readResultLines } from "./jsonl-batch.js";
import type { BatchCall, BatchConnection, BatchLimits, BatchState, BatchStatus, BatchWriter, RawBatchResult } from "./provider.js";

/**
 * OpenAI Batch API: at most 50,000 requests and 200 MB per input file. Bytes are counted in decimal
 * megabytes, which stays under the limit whichever megabyte OpenAI means.
 */
export const OPENAI_BATCH_LIMITS: BatchLimits = { maxRequests: 50_000, maxBytes: 200_000_000 };

const ENDPOINT = "/v1/chat/completions";

/** One line of the input file: the chat completion body, unchanged, addressed to the endpoint it would go to live. */
export function openaiBatchLine(customId: string, body: object): object {
  return { custom_id: customId, method: "POST", url: ENDPOINT, body };
}

/** The Batch API through the `openai` SDK: `files.create` + `batches.create`, `batches.retrieve`, `files.content`. */
export function openaiBatches(client: () => Promise<OpenAI>, call: BatchCall): BatchConnection {
  return {
    open: () => new JsonlUpload(client, call),
    async status(batchId) {
      const openai = await client();
      const batch = await call("batch status", (signal, timeout) => openai.batches.retrieve(batchId, { signal, timeout, maxRetries: 0 }));
      return openaiBatchStatus(batch);
    },
    async results(batchId, each, unreadable) {
      const openai = await client();
      const batch = await call("batch status", (signal, timeout) => openai.batches.retrieve(batchId, { signal, timeout, maxRetries: 0 }));
      // Answers are in the output file; requests that errored, expired or were cancelled in the error file.
      for (const [file, fileId] of [["output file", batch.output_file_id], ["error file", batch.error_file_id]] as const) {
        if (!fileId) continue;
        await call("batch results", async (signal, timeout) => {
          const response = await openai.files.content(fileId, { signal, timeout, maxRetries: 0 });
          if (response.body === null) return;
          await readResultLines(response.body, file, openaiResultLine, each, unreadable);
        }, { bulk: true });
      }
    },
  };
}

/** Where an OpenAI batch is, in typelm's words: finalizing and cancelling still count as in progress. */
const STATES: Readonly<Record<Batch["status"], BatchState>> = {
  validating: "validating",
  in_progress: "in_progress",
  finalizing: "in_progress",
  cancelling: "in_progress",
  completed: "completed",
  failed: "failed",
  expired: "expired",
  cancelled: "cancelled",
};

/**
 * The batch's state in typelm's words. A status the Batch API does not document is an `LMError`
 * naming it and the batch: waiting on a state nobody knows the end of would poll for ever.
 */
export function openaiBatchStatus(batch: Batch): BatchStatus {
  const counts = batch.request_counts ?? { total: 0, completed: 0, failed: 0 };
  const status: BatchState | undefined = Object.hasOwn(STATES, batch.status) ? STATES[batch.status] : undefined;
  if (status === undefined) {
    throw new LMError(
      `openai batch ${batch.id} reports status ${JSON.stringify(redactError(String(batch.status)))}, which is not one of the Batch API's ` +
        `(${Object.keys(STATES).join(", ")}); stopped waiting for it. It may still be running at the provider: resume the run to wait for it again once it reports a known status`,
      { provider: "openai", retryable: false },
    );
  }
  const out: BatchStatus = { id: batch.id, status, counts: { total: counts.total, completed: counts.completed, failed: counts.failed } };
  if (status === "failed") {
    const errors = (batch.errors?.data ?? []).map((e) => `${e.line == null ? "" : `line ${e.line}: `}${e.message ?? e.code ?? "error"}`);
    out.reason = errors.length > 0 ? errors.join("; ") : "the input file was rejected (no reason given)";
  } else if (status === "expired") {
    out.reason = `the ${batch.completion_window} completion window ran out with ${counts.completed} of ${counts.total} requests answered`;
  } else if (status === "cancelled") {
    out.reason = "the batch was cancelled";
  }
  return out;
}

/** One line of an output or error file. */
interface OutputLine {
  custom_id?: unknown;
  response?: { status_code?: number; body?: unknown } | null;
  error?: { code?: string | null; message?: string | null } | null;
}

export function openaiResultLine(value: unknown): RawBatchResult {
  const line = (typeof value === "object" && value !== null ? value : {}) as OutputLine;
  if (typeof line.custom_id !== "string") throw new SyntaxError(`batch result line without a custom_id: ${JSON.stringify(value)?.slice(0, 200)}`);
  const customId = line.custom_id;
  if (line.error) {
    const code = line.error.code ?? undefined;
    return {
      customId, ok: false, error: `${code ? `${code}: ` : ""}${line.error.message ?? "(no message)"}`,
      ...(code === "batch_expired" ? { expired: true } : {}),
    };
  }
  const status = line.response?.status_code;
  if (status !== undefined && status >= 200 && status < 300) return { customId, ok: true, body: line.response?.body };
  const body = line.response?.body as { error?: { message?: unknown } } | undefined;
  const message = typeof body?.error?.message === "string" ? body.error.message : "(no message)";
  return { customId, ok: false, error: `HTTP ${status ?? "(no status)"}: ${message}`, ...(status === undefined ? {} : { status }) };
}

/** The input file, written line by line to a temporary file and uploaded from there as a stream. */
class JsonlUpload implements BatchWriter {
  #file: Promise<{ dir: string; path: string; stream: WriteStream }> | undefined;
  #writeError: unknown;

  constructor(private readonly client: () => Promise<OpenAI>, private readonly call: BatchCall) {}

  #open(): Promise<{ dir: string; path: string; stream: WriteStream }> {
    return (this.#file ??= builtin("node:fs/promises").mkdtemp(join(builtin("node:os").tmpdir(), "typelm-batch-")).then((dir) => {
      const path = join(dir, "requests.jsonl");
      const stream = createWriteStream(path);
      // Kept, and raised by the next add or submit (a full disk must not crash the process).
      stream.on("error", (error) => (this.#writeError ??= error));
      return { dir, path, stream };
    }));
  }

  async add(_line: object, text: string): Promise<void> {
    const { stream } = await this.#open();
    if (this.#writeError !== undefined) throw this.#writeError;
    if (!stream.write(`${text}\n`)) await builtin("node:events").once(stream, "drain");
  }

  async submit(): Promise<string> {
    const { path, stream } = await this.#open();
    stream.end();
    await builtin("node:stream/promises").finished(stream);
    const openai = await this.client();
    // Loaded already by this.client() (a ConfigurationError there when it is not installed).
    const { toStreamingFile } = await loadOptional<typeof import("openai")>("openai", "The openai provider");
    const file = await this.call("batch upload", (signal, timeout) =>
      openai.files.create(
        { file: toStreamingFile(createReadStream(path), "typelm-batch.jsonl", { type: "application/jsonl" }), purpose: "batch" },
        { signal, timeout, maxRetries: 0 },
      ), { bulk: true });
    const batch = await this.call("batch creation", (signal, timeout) =>
      openai.batches.create({ input_file_id: file.id, endpoint: ENDPOINT, completion_window: "24h" }, { signal, timeout, maxRetries: 0 }));
    return batch.id;
  }

  async close(): Promise<void> {
    if (this.#file === undefined) return;
    const { dir, stream } = await this.#file;
    stream.destroy();
    await builtin("node:fs/promises").rm(dir, { recursive: true, force: true });
  }
}
