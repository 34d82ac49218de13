import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import type { MessageBatch } from "@anthropic-ai/sdk/resources/messages/batches";
import type { Batch } from "openai/resources/batches";
import { LMError, OutputError } from "../../lib/errors.js";
import { BatchClient, batchEnded, nextPollDelay, sleepSteps, type BatchRequest, type BatchResult, type BatchStatus, type SubmittedBatch } from "../../lib/lm/batch.js";
import { readdir, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Instrumentation, type TypelmEvent } from "../../lib/instrument/bus.js";
import { LM } from "../../lib/lm/lm.js";
import { anthropicBatchStatus, anthropicResultLine } from "../../lib/lm/providers/anthropic-batch.js";
import { PROVIDERS } from "../../lib/lm/providers/index.js";
import { openaiBatchStatus, openaiResultLine } from "../../lib/lm/providers/openai-batch.js";
import { readResultLines } from "../../lib/lm/providers/jsonl-batch.js";
import type { CallSettings, UnreadableResultLine } from "../../lib/lm/providers/provider.js";
import type { LMRequest, LMResponse } from "../../lib/lm/types.js";
import { startFakeProvider, type FakeBatchScript, type FakeProvider, type FakeRequest } from "../../lib/testing/fake-provider.js";
import { PROVIDER_MODELS, TEST_KEY } from "./helpers.js";

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

  it("a status the Batch API does not document is an LMError naming it and the batch, not a batch still in progress", () => {
    const read = () => openaiBatchStatus(openaiBatch({ status: "paused" as Batch["status"] }));
    expect(read).toThrow(LMError);
    expect(read).toThrow(/^openai batch batch_1 reports status "paused", which is not one of the Batch API's \(validating, in_progress, .*\); stopped waiting for it/);
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

  it("a processing status Message Batches does not document is an LMError naming it and the batch", () => {
    const read = () => anthropicBatchStatus(anthropicBatch({ processing_status: "archived" as MessageBatch["processing_status"] }));
    expect(read).toThrow(LMError);
    expect(read).toThrow(/^anthropic batch msgbatch_1 reports processing_status "archived", which is not one of Message Batches' \(in_progress, canceling, ended\)/);
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
    expect(reply).toEqual({ content: "positive", usage: { inputTokens: 12, outputTokens: 3, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, finishReason: "stop" });
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
    expect(reply).toEqual({ content: '{"sentiment":"positive"}', usage: { inputTokens: 20, outputTokens: 5, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, finishReason: "tool_use" });
  });

  it("a reply without the forced tool call is an OutputError, as it is live", () => {
    expect(() => PROVIDERS["anthropic"]!.batch!.reply(message([{ type: "text", text: "positive" }]), request, settings("claude-3-5-haiku-20241022")))
      .toThrow(OutputError);
  });
});

function settings(model: string): CallSettings {
  return { model, temperature: undefined, maxTokens: undefined, timeoutMs: 60_000 };
}

describe("reading a results file line by line", () => {
  it("hands on every readable line and reports each other one with its line number, its reason and the custom id its start names", async () => {
    const good = (id: string) => JSON.stringify({ id: "r", custom_id: id, response: { status_code: 200, body: { ok: 1 } }, error: null });
    const text = [good("ex-0"), "not json at all", "", '{"id":"r","custom_id":"ex-2","response":{"status_co', JSON.stringify({ id: "r", response: null }), good("ex-4")].join("\n") + "\n";
    const body = new Blob([text]).stream();
    const read: string[] = [];
    const unreadable: UnreadableResultLine[] = [];
    await readResultLines(body, "output file", openaiResultLine, (r) => read.push(r.customId), (u) => unreadable.push(u));
    expect(read).toEqual(["ex-0", "ex-4"]);
    expect(unreadable.map(({ line, file, customId }) => ({ line, file, customId }))).toEqual([
      { line: 2, file: "output file", customId: undefined },
      { line: 4, file: "output file", customId: "ex-2" },
      { line: 5, file: "output file", customId: undefined },
    ]);
    expect(unreadable[0]!.reason).toMatch(/JSON/);
    expect(unreadable[2]!.reason).toMatch(/without a custom_id/);
  });
});

describe("polling back-off", () => {
  it("doubles the wait from pollInterval up to a minute", () => {
    const waits = [5];
    for (let i = 0; i < 6; i++) waits.push(nextPollDelay(waits.at(-1)!, 5));
    expect(waits).toEqual([5, 10, 20, 40, 60, 60, 60]);
  });

  it("cuts a wait longer than a minute into minutes, so the waiting is told at least once a minute", () => {
    expect(sleepSteps(5_000)).toEqual([5_000]);
    expect(sleepSteps(60_000)).toEqual([60_000]);
    expect(sleepSteps(150_000)).toEqual([60_000, 60_000, 30_000]);
    expect(sleepSteps(300, 100)).toEqual([100, 100, 100]);
  });

  it("keeps a pollInterval longer than a minute as it is", () => {
    expect(nextPollDelay(90, 90)).toBe(90);
  });
});

// End to end: the batch client over the official SDKs against the fake provider's batch services.

/** Depends on the request (last message, schema or not), so a reply given to the wrong request shows. */
function defaultReply(request: FakeRequest): string | Record<string, unknown> {
  const last = request.messages.at(-1)?.content ?? "";
  return request.schema === undefined ? `answer to ${last}` : { sentiment: last.length % 2 === 0 ? "positive" : "negative" };
}

const sentiment = { type: "object", properties: { sentiment: { type: "string", enum: ["positive", "negative"] } }, required: ["sentiment"], additionalProperties: false };
const ask = (text: string, structured = true): LMRequest => ({
  messages: [{ role: "system", content: "Classify the sentiment." }, { role: "user", content: text }],
  ...(structured ? { responseSchema: { name: "Classify", schema: sentiment } } : {}),
});
const requestsOf = (texts: string[]): BatchRequest[] => texts.map((text, i) => ({ customId: `ex-${i}`, request: ask(text) }));

let server: FakeProvider;
beforeAll(async () => {
  server = await startFakeProvider({ defaultReply });
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  LM.resetConfiguration();
});

type Wire = "openai" | "anthropic";
const WIRES: Wire[] = ["openai", "anthropic"];
const baseURL = (wire: Wire): string => (wire === "openai" ? server.openaiBaseURL : server.url);
const clientFor = (wire: Wire, options: { maxRequestsPerBatch?: number; temperature?: number; pollInterval?: number } = {}): BatchClient =>
  new BatchClient(PROVIDER_MODELS[wire], { apiKey: TEST_KEY, baseURL: baseURL(wire), pollInterval: 0.001, ...options });
const liveLM = (wire: Wire): LM => new LM(PROVIDER_MODELS[wire], { apiKey: TEST_KEY, baseURL: baseURL(wire) });

describe.each(WIRES)("%s batches against the fake provider", (wire) => {
  it("sends the live bodies, polls to the end, and reads each reply as the live call does", async () => {
    const requests = requestsOf(["good", "bad film", "fine", "meh"]);
    const live: LMResponse[] = [];
    for (const { request } of requests) live.push(await liveLM(wire).chat(request));
    const liveBodies = server.requests.map((r) => r.body);
    server.reset();

    server.batch({ polls: 2, order: "reversed" });
    const client = clientFor(wire);
    const submitted = await client.submit(requests);
    expect(submitted).toEqual([{ id: server.batches[0]!.id, customIds: ["ex-0", "ex-1", "ex-2", "ex-3"] }]);
    expect(server.batches[0]!.requests.map((r) => r.body)).toEqual(liveBodies);
    expect(server.requests).toHaveLength(0);

    const seen: BatchStatus[] = [];
    const final = await client.wait(submitted[0]!.id, { onPoll: (s) => seen.push(s) });
    expect(final).toEqual({ id: submitted[0]!.id, status: "completed", counts: { total: 4, completed: 4, failed: 0 } });
    expect(seen.map((s) => s.status)).toEqual(["in_progress", "in_progress", "completed"]);

    const results = await client.results(submitted[0]!.id, requests);
    expect([...results.keys()].sort()).toEqual(["ex-0", "ex-1", "ex-2", "ex-3"]);
    requests.forEach(({ customId }, i) => {
      expect(results.get(customId)).toEqual({ ok: true, reply: { content: live[i]!.content, usage: live[i]!.usage, finishReason: live[i]!.finishReason } });
    });
  });

  it("splits at maxRequestsPerBatch, reporting each batch as soon as it is accepted", async () => {
    const client = clientFor(wire, { maxRequestsPerBatch: 2 });
    const reported: { batch: SubmittedBatch; batchesAtServer: number }[] = [];
    const submitted = await client.submit(requestsOf(["a", "b", "c", "d", "e"]), {
      onSubmitted: (batch) => { reported.push({ batch, batchesAtServer: server.batches.length }); },
    });
    expect(submitted.map((b) => b.customIds)).toEqual([["ex-0", "ex-1"], ["ex-2", "ex-3"], ["ex-4"]]);
    expect(server.batches.map((b) => b.customIds)).toEqual([["ex-0", "ex-1"], ["ex-2", "ex-3"], ["ex-4"]]);
    expect(submitted.map((b) => b.id)).toEqual(server.batches.map((b) => b.id));
    // Each batch is reported before the next one is uploaded.
    expect(reported.map((r) => [r.batch.id, r.batchesAtServer])).toEqual(server.batches.map((b, i) => [b.id, i + 1]));
    expect(server.uploads).toBe(wire === "openai" ? 3 : 0);
  });

  it("reports a failed line with the provider's message and an expired one as expired; the rest are answered", async () => {
    server.batch({ failIds: ["ex-1"], lineError: { status: 400, message: "max_tokens is too large" }, expireIds: ["ex-2"] });
    const requests = requestsOf(["good", "bad", "late", "fine"]);
    const client = clientFor(wire);
    const [batch] = await client.submit(requests);
    const final = await client.wait(batch!.id);
    expect(final.counts).toMatchObject({ total: 4, failed: 2 });
    const results = await client.results(batch!.id, requests);
    expect(results.get("ex-0")).toMatchObject({ ok: true });
    expect(results.get("ex-3")).toMatchObject({ ok: true });
    const failed = results.get("ex-1")!;
    expect(failed).toMatchObject({ ok: false });
    expect(failed.ok ? "" : failed.error).toContain("max_tokens is too large");
    expect(failed).not.toHaveProperty("expired");
    expect(results.get("ex-2")).toMatchObject({ ok: false, expired: true });
  });

  it("a batch that expires with nothing answered is an LMError saying so, worth retrying", async () => {
    server.batch({ expire: true, polls: 1 });
    const client = clientFor(wire);
    const [batch] = await client.submit(requestsOf(["a", "b"]));
    const error = await client.wait(batch!.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as LMError).message).toMatch(new RegExp(`^${wire} batch ${batch!.id} for model "[^"]+" ended expired: `));
    expect((error as LMError).retryable).toBe(true);
    expect((error as LMError).provider).toBe(wire);
  });

  /** Submits three requests under `script`, waits, and reads their results. */
  const resultsUnder = async (script: FakeBatchScript): Promise<{ batchId: string; results: Map<string, BatchResult> }> => {
    server.batch(script);
    const requests = requestsOf(["good", "bad", "fine"]);
    const client = clientFor(wire);
    const [batch] = await client.submit(requests);
    await client.wait(batch!.id);
    const results = await client.results(batch!.id, requests);
    expect(results.get("ex-0")).toMatchObject({ ok: true });
    expect(results.get("ex-2")).toMatchObject({ ok: true });
    return { batchId: batch!.id, results };
  };

  it("a malformed line in the results fails only its own request, naming the line; the others are answered from one download", async () => {
    const { batchId, results } = await resultsUnder({ malformedIds: ["ex-1"] });
    const bad = results.get("ex-1")!;
    expect(bad.ok).toBe(false);
    const where = wire === "openai" ? "output file" : "results";
    expect(bad.ok ? "" : bad.error).toMatch(new RegExp(`^line 2 of batch ${batchId}'s ${where} could not be read: `));
    // Read once: a bad line is not a broken download to fetch again.
    expect(server.batches[0]!.downloads).toBe(1);
  });

  it("a request with two different results in the batch is a failure saying so, not the last line's answer", async () => {
    const { batchId, results } = await resultsUnder({ duplicateIds: ["ex-1"] });
    const twice = results.get("ex-1")!;
    expect(twice.ok).toBe(false);
    expect(twice.ok ? "" : twice.error).toBe(`batch ${batchId} returned 2 different results for this request (custom_id "ex-1"); none is used`);
  });

  it("a batch reporting a status the service does not document ends the wait with an LMError naming the status and the batch", async () => {
    server.batch({ unknownStatus: "on_hold" });
    const client = clientFor(wire);
    const [batch] = await client.submit(requestsOf(["a"]));
    const error = await client.wait(batch!.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as Error).message).toContain(`${wire} batch ${batch!.id} reports ${wire === "openai" ? "status" : "processing_status"} "on_hold"`);
    expect(server.batches[0]!.polls).toBe(1);
    expect(batchEnded(error)).toBe(false);
  });

  it("maxWait ends the wait with an LMError naming the batch, its status and the limit; the batch is not taken for ended", async () => {
    server.batch({ polls: 1000 });
    const client = clientFor(wire, { pollInterval: 0.02 });
    const [batch] = await client.submit(requestsOf(["a", "b"]));
    const started = performance.now();
    const error = await client.wait(batch!.id, { maxWait: 0.15 }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(error).toBeInstanceOf(LMError);
    expect((error as Error).message).toMatch(new RegExp(`^${wire} batch ${batch!.id} for model "[^"]+" has not ended after 0.15 s \\(maxWait 0.15 s\\): status (validating|in_progress), 0 of 2 requests answered\\. It is still at the provider`));
    expect(batchEnded(error)).toBe(false);
    await expect(client.wait(batch!.id, { maxWait: 0 })).rejects.toThrow(/maxWait: expected a positive number of seconds/);
  });

  it("refuses to read results before the batch has ended", async () => {
    server.batch({ polls: 5 });
    const client = clientFor(wire);
    const requests = requestsOf(["a"]);
    const [batch] = await client.submit(requests);
    await expect(client.results(batch!.id, requests)).rejects.toThrow(/has not ended \(status (validating|in_progress)\)/);
  });
});

describe("OpenAI input files", () => {
  /** Input files written since `since` that hold a line of `marker` (other test files may be writing their own). */
  const inputFilesWith = async (marker: string, since: number): Promise<string[]> => {
    const found: string[] = [];
    for (const name of await readdir(tmpdir())) {
      if (!name.startsWith("typelm-batch-")) continue;
      const path = join(tmpdir(), name, "requests.jsonl");
      const info = await stat(path).catch(() => undefined);
      if (info !== undefined && info.mtimeMs >= since && (await readFile(path, "utf8")).includes(marker)) found.push(path);
    }
    return found;
  };

  it("are written to a temporary file that is gone once the batch is submitted, or its upload failed", async () => {
    const since = Date.now() - 1000;
    const marker = `tmpcheck${process.pid}x${since}`;
    const requests = [{ customId: `${marker}-0`, request: ask("a") }, { customId: `${marker}-1`, request: ask("b") }];
    await clientFor("openai").submit(requests);
    expect(server.uploads).toBe(1);
    expect(server.batches[0]!.customIds).toEqual([`${marker}-0`, `${marker}-1`]);
    expect(await inputFilesWith(marker, since)).toEqual([]);

    LM.configure((c) => { c.maxRetries = 0; });
    const dead = new BatchClient(PROVIDER_MODELS.openai, { apiKey: TEST_KEY, baseURL: "http://127.0.0.1:9/v1" });
    await expect(dead.submit(requests)).rejects.toThrow(LMError);
    expect(await inputFilesWith(marker, since)).toEqual([]);
  });
});

describe("batch events", () => {
  it("lm.batch.submitted and lm.batch.poll carry the batch id, its size and counts, for progress displays", async () => {
    const events: TypelmEvent[] = [];
    const off = Instrumentation.subscribe(/^lm\.batch\./, (e) => events.push(e));
    try {
      server.batch({ polls: 1 });
      const client = clientFor("anthropic");
      const [batch] = await client.submit(requestsOf(["a", "b", "c"]));
      await client.wait(batch!.id);
    } finally {
      off();
    }
    expect(events.map((e) => [e.name, e.payload["status"]])).toEqual([
      ["lm.batch.submitted", undefined], ["lm.batch.poll", "in_progress"], ["lm.batch.poll", "completed"],
    ]);
    expect(events[0]!.payload).toMatchObject({ provider: "anthropic", model: "claude-3-5-haiku-20241022", batchId: server.batches[0]!.id, requests: 3 });
    expect(events[0]!.payload["bytes"]).toBeGreaterThan(0);
    expect(events[2]!.payload).toMatchObject({ batchId: server.batches[0]!.id, total: 3, completed: 3, failed: 0 });
    expect(JSON.stringify(events)).not.toContain(TEST_KEY);
  });
});

describe("a batch that fails as a whole", () => {
  it("OpenAI: the batch's validation error is an LMError with the provider's reason, and no key", async () => {
    server.batch({ fail: { message: "The model `gpt-4o-mini` does not exist.", code: "model_not_found" } });
    const client = clientFor("openai");
    const [batch] = await client.submit(requestsOf(["a", "b"]));
    const error = await client.wait(batch!.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as Error).message).toContain(`openai batch ${batch!.id} for model "gpt-4o-mini" ended failed: `);
    expect((error as Error).message).toContain("The model `gpt-4o-mini` does not exist.");
    expect((error as LMError).retryable).toBe(false);
    expect((error as Error).message).not.toContain(TEST_KEY);
  });

  it("Anthropic: a batch refused at creation is an LMError naming the creation, with the provider's reason and no key", async () => {
    server.batch({ fail: "requests.0.params.max_tokens: too large" });
    const error = await clientFor("anthropic").submit(requestsOf(["a"])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LMError);
    expect((error as Error).message).toMatch(/^anthropic batch creation: anthropic request for model "claude-3-5-haiku-20241022" failed: HTTP 400/);
    expect((error as Error).message).toContain("requests.0.params.max_tokens: too large");
    expect((error as LMError).status).toBe(400);
    expect((error as Error).message).not.toContain(TEST_KEY);
  });
});

describe("results checked against the request that was sent", () => {
  it("Anthropic: a reply without the forced tool call is a failed result, as the live call fails", async () => {
    server.reply("positive, I think");
    const client = clientFor("anthropic");
    const requests = requestsOf(["good"]);
    const [batch] = await client.submit(requests);
    await client.wait(batch!.id);
    const result = (await client.results(batch!.id, requests)).get("ex-0")!;
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error).toMatch(/^unreadable reply: anthropic reply for model "claude-3-5-haiku-20241022" has no call of the forced tool "Classify"/);
  });

  it("a request asked about that the batch has no result for is a failure naming the batch", async () => {
    const client = clientFor("openai");
    const [batch] = await client.submit(requestsOf(["good"]));
    await client.wait(batch!.id);
    const results = await client.results(batch!.id, [...requestsOf(["good"]), { customId: "not-sent", request: ask("x") }]);
    expect(results.get("ex-0")).toMatchObject({ ok: true });
    expect(results.get("not-sent")).toEqual({ ok: false, error: `no result for this request in batch ${batch!.id} (status completed)` });
  });
});
