import { describe, expect, it } from "@jest/globals";
import type { MessageBatch } from "@anthropic-ai/sdk/resources/messages/batches";
import type { Batch } from "openai/resources/batches";
import { OutputError } from "../../lib/errors.js";
import { anthropicBatchStatus, anthropicResultLine } from "../../lib/lm/providers/anthropic-batch.js";
import { PROVIDERS } from "../../lib/lm/providers/index.js";
import { openaiBatchStatus, openaiResultLine } from "../../lib/lm/providers/openai-batch.js";
import type { CallSettings } from "../../lib/lm/providers/provider.js";
import type { LMRequest } from "../../lib/lm/types.js";

const openaiBatch = (fields: Partial<Batch>): Batch => ({
  id: "batch_1", object: "batch", endpoint: "/v1/chat/completions", completion_window: "24h", created_at: 0,
  input_file_id: "file_1", status: "in_progress", request_counts: { total: 10, completed: 4, failed: 1 }, ...fields,
});

const anthropicBatch = (fields: Partial<MessageBatch>, counts: Partial<MessageBatch["request_counts"]> = {}): MessageBatch => ({
  id: "msgbatch_1", type: "message_batch", processing_status: "in_progress", archived_at: null, cancel_initiated_at: null,
  created_at: "2026-11-23T00:00:00Z", ended_at: null, expires_at: "2026-11-24T00:00:00Z", results_url: null,
  request_counts: { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0, ...counts }, ...fields,
});

describe("OpenAI batch status, normalised", () => {
  it.each([
    ["validating", "validating"], ["in_progress", "in_progress"], ["finalizing", "in_progress"], ["cancelling", "in_progress"],
    ["completed", "completed"], ["failed", "failed"], ["expired", "expired"], ["cancelled", "cancelled"],
  ] as const)("%s is %s", (status, normalised) => {
    expect(openaiBatchStatus(openaiBatch({ status })).status).toBe(normalised);
  });

  it("keeps the request counts and says nothing more while running", () => {
    expect(openaiBatchStatus(openaiBatch({}))).toEqual({ id: "batch_1", status: "in_progress", counts: { total: 10, completed: 4, failed: 1 } });
  });

  it("gives a failed batch's validation errors, with their line numbers, as the reason", () => {
    const status = openaiBatchStatus(openaiBatch({
      status: "failed",
      errors: { data: [{ code: "invalid_json", line: 3, message: "Line is not valid JSON." }, { code: "x", message: "Model not found." }] },
    }));
    expect(status.reason).toBe("line 3: Line is not valid JSON.; Model not found.");
  });

  it("says how many requests were answered when the completion window ran out", () => {
    expect(openaiBatchStatus(openaiBatch({ status: "expired" })).reason).toBe("the 24h completion window ran out with 4 of 10 requests answered");
  });
});

describe("Anthropic batch status, normalised", () => {
  it("is in progress until it ends, canceling included, with counts folded into total / completed / failed", () => {
    const counts = { processing: 5, succeeded: 3, errored: 1, canceled: 0, expired: 0 };
    expect(anthropicBatchStatus(anthropicBatch({}, counts))).toEqual({ id: "msgbatch_1", status: "in_progress", counts: { total: 9, completed: 3, failed: 1 } });
    expect(anthropicBatchStatus(anthropicBatch({ processing_status: "canceling" }, counts)).status).toBe("in_progress");
  });

  it("an ended batch is completed, cancelled when cancelled, expired when requests ran out of time", () => {
    expect(anthropicBatchStatus(anthropicBatch({ processing_status: "ended" }, { succeeded: 8, errored: 2 }))).toEqual({
      id: "msgbatch_1", status: "completed", counts: { total: 10, completed: 8, failed: 2 },
    });
    const cancelled = anthropicBatchStatus(anthropicBatch({ processing_status: "ended", cancel_initiated_at: "2026-11-23T01:00:00Z" }, { succeeded: 2, canceled: 8 }));
    expect(cancelled).toMatchObject({ status: "cancelled", counts: { total: 10, completed: 2, failed: 8 }, reason: "the batch was cancelled" });
    const expired = anthropicBatchStatus(anthropicBatch({ processing_status: "ended" }, { succeeded: 6, errored: 1, expired: 3 }));
    expect(expired).toMatchObject({ status: "expired", counts: { total: 10, completed: 6, failed: 4 } });
    expect(expired.reason).toBe("the 24-hour processing window ran out with 7 of 10 requests processed");
  });
});

describe("OpenAI result lines", () => {
  const completion = { id: "c", object: "chat.completion", created: 0, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "positive", refusal: null }, finish_reason: "stop", logprobs: null }], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } };

  it("a 200 response is the chat completion, read as the live reply is", () => {
    const raw = openaiResultLine({ id: "r", custom_id: "ex-1", response: { status_code: 200, request_id: "q", body: completion }, error: null });
    expect(raw).toEqual({ customId: "ex-1", ok: true, body: completion });
    const reply = PROVIDERS["openai"]!.batch!.reply((raw as { body: unknown }).body, { messages: [] }, settings("gpt-4o-mini"));
    expect(reply).toEqual({ content: "positive", usage: { inputTokens: 12, outputTokens: 3 }, finishReason: "stop" });
  });

  it("an error response keeps its status and the provider's message", () => {
    const raw = openaiResultLine({ custom_id: "ex-2", response: { status_code: 400, body: { error: { message: "Invalid 'messages'." } } }, error: null });
    expect(raw).toEqual({ customId: "ex-2", ok: false, status: 400, error: "HTTP 400: Invalid 'messages'." });
  });

  it("an error-file line for a request the window ran out on is marked expired", () => {
    const raw = openaiResultLine({ custom_id: "ex-3", response: null, error: { code: "batch_expired", message: "This request could not be executed before the completion window expired." } });
    expect(raw).toEqual({ customId: "ex-3", ok: false, expired: true, error: "batch_expired: This request could not be executed before the completion window expired." });
    expect(openaiResultLine({ custom_id: "ex-4", response: null, error: { code: "batch_cancelled", message: "cancelled" } })).not.toHaveProperty("expired");
  });

  it("a line without a custom_id is a malformed download", () => {
    expect(() => openaiResultLine({ response: { status_code: 200, body: completion } })).toThrow(SyntaxError);
  });
});

describe("Anthropic results", () => {
  const message = (content: unknown[]): Record<string, unknown> => ({
    id: "m", type: "message", role: "assistant", model: "claude-3-5-haiku-20241022", content, stop_reason: "tool_use", stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 5 },
  });
  const request: LMRequest = {
    messages: [{ role: "user", content: "I love it" }],
    responseSchema: { name: "Classify", schema: { type: "object", properties: { sentiment: { type: "string" } } } },
  };

  it("maps succeeded, errored, canceled and expired results", () => {
    const body = message([]);
    expect(anthropicResultLine({ custom_id: "a", result: { type: "succeeded", message: body } } as never)).toEqual({ customId: "a", ok: true, body });
    expect(anthropicResultLine({ custom_id: "b", result: { type: "errored", error: { type: "error", request_id: null, error: { type: "invalid_request_error", message: "max_tokens: too large" } } } } as never))
      .toEqual({ customId: "b", ok: false, error: "invalid_request_error: max_tokens: too large" });
    expect(anthropicResultLine({ custom_id: "c", result: { type: "canceled" } })).toEqual({ customId: "c", ok: false, error: "cancelled before it was processed" });
    expect(anthropicResultLine({ custom_id: "d", result: { type: "expired" } })).toMatchObject({ customId: "d", ok: false, expired: true });
  });

  it("reads the forced tool's input as the reply, as the live call does", () => {
    const reply = PROVIDERS["anthropic"]!.batch!.reply(
      message([{ type: "tool_use", id: "t", name: "Classify", input: { sentiment: "positive" } }]), request, settings("claude-3-5-haiku-20241022"),
    );
    expect(reply).toEqual({ content: '{"sentiment":"positive"}', usage: { inputTokens: 20, outputTokens: 5 }, finishReason: "tool_use" });
  });

  it("a reply without the forced tool call is an OutputError, as it is live", () => {
    expect(() => PROVIDERS["anthropic"]!.batch!.reply(message([{ type: "text", text: "positive" }]), request, settings("claude-3-5-haiku-20241022")))
      .toThrow(OutputError);
  });
});

function settings(model: string): CallSettings {
  return { model, temperature: undefined, maxTokens: undefined, timeoutMs: 60_000 };
}
