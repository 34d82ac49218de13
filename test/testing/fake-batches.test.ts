import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import OpenAI, { toFile } from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../../lib/testing/fake-provider.js";

// The fake provider's batch services, driven by the real SDKs on loopback.

const MODEL = "gpt-4o-mini";
const CLAUDE = "claude-3-5-haiku-20241022";
const SCHEMA = { type: "object", properties: { label: { type: "string" } }, required: ["label"], additionalProperties: false };

/** Depends on the request (its last message, whether a schema was asked for), so a wrong request shows. */
function defaultReply(request: FakeRequest): string | Record<string, unknown> {
  const last = request.messages.at(-1)?.content ?? "";
  return request.schema === undefined ? `answer to ${last}` : { label: last.toUpperCase() };
}

let fake: FakeProvider;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  fake = await startFakeProvider({ defaultReply });
  openai = new OpenAI({ apiKey: "sk-test-batch", baseURL: fake.openaiBaseURL, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: "sk-ant-test-batch", baseURL: fake.url, maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function chatBody(text: string, structured = false): OpenAI.ChatCompletionCreateParamsNonStreaming {
  return {
    model: MODEL,
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: text }],
    ...(structured ? { response_format: { type: "json_schema" as const, json_schema: { name: "Out", schema: SCHEMA, strict: true } } } : {}),
  };
}

/** Uploads one JSONL batch input file, a line per [customId, body], and creates the batch. */
async function submit(lines: [string, OpenAI.ChatCompletionCreateParamsNonStreaming][]): Promise<OpenAI.Batch> {
  const jsonl = lines.map(([custom_id, body]) => JSON.stringify({ custom_id, method: "POST", url: "/v1/chat/completions", body })).join("\n") + "\n";
  const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl), "batch.jsonl"), purpose: "batch" });
  return openai.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
}

async function fileLines(fileId: string | null | undefined): Promise<any[]> {
  expect(typeof fileId).toBe("string");
  const text = await (await openai.files.content(fileId!)).text();
  return text.trim().split("\n").map((line) => JSON.parse(line));
}

/** Polls until the batch reports a terminal status; returns every status seen. */
async function pollOpenAI(id: string): Promise<{ batch: OpenAI.Batch; statuses: string[] }> {
  const statuses: string[] = [];
  for (let i = 0; i < 20; i++) {
    const batch = await openai.batches.retrieve(id);
    statuses.push(batch.status);
    if (["completed", "failed", "expired", "cancelled"].includes(batch.status)) return { batch, statuses };
  }
  throw new Error(`batch ${id} never ended: ${statuses.join(", ")}`);
}

function claudeParams(text: string, tool = false): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model: CLAUDE, max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: text }],
    ...(tool ? { tools: [{ name: "Out", input_schema: SCHEMA as Anthropic.Tool.InputSchema }], tool_choice: { type: "tool" as const, name: "Out" } } : {}),
  };
}

async function pollAnthropic(id: string): Promise<{ batch: Anthropic.Messages.MessageBatch; statuses: string[] }> {
  const statuses: string[] = [];
  for (let i = 0; i < 20; i++) {
    const batch = await anthropic.messages.batches.retrieve(id);
    statuses.push(batch.processing_status);
    if (batch.processing_status === "ended") return { batch, statuses };
  }
  throw new Error(`batch ${id} never ended: ${statuses.join(", ")}`);
}

async function results(id: string): Promise<Anthropic.Messages.MessageBatchIndividualResponse[]> {
  const out: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
  for await (const line of await anthropic.messages.batches.results(id)) out.push(line);
  return out;
}

describe("OpenAI Batch API", () => {
  it("answers an uploaded JSONL file line by line with what a live call to the same fake returns", async () => {
    const lines: [string, OpenAI.ChatCompletionCreateParamsNonStreaming][] = [
      ["q-1", chatBody("What is 2 + 2?")], ["q-2", chatBody("name a colour", true)], ["q-3", chatBody("Say hi")],
    ];
    const created = await submit(lines);
    expect(created).toMatchObject({ object: "batch", status: "validating", endpoint: "/v1/chat/completions", completion_window: "24h", request_counts: { total: 3, completed: 0, failed: 0 } });
    const input = await openai.files.retrieve(created.input_file_id);
    expect(input).toMatchObject({ object: "file", purpose: "batch", filename: "batch.jsonl" });
    expect(fake.uploads).toBe(1);

    const { batch, statuses } = await pollOpenAI(created.id);
    expect(statuses).toEqual(["completed"]);
    expect(batch.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    expect(batch.error_file_id).toBeNull();
    const output = await fileLines(batch.output_file_id);
    expect(output.map((l) => l.custom_id)).toEqual(["q-1", "q-2", "q-3"]);

    for (const [customId, body] of lines) {
      const live = await openai.chat.completions.create(body);
      const line = output.find((l) => l.custom_id === customId);
      expect(line.error).toBeNull();
      expect(line.response.status_code).toBe(200);
      expect(line.response.body.choices[0].message.content).toBe(live.choices[0]!.message.content);
      expect(line.response.body.usage).toEqual(live.usage);
    }
    expect(output[1].response.body.choices[0].message.content).toBe('{"label":"NAME A COLOUR"}');

    // The lines are recorded as requests of the batch, not as live requests.
    expect(fake.requests).toHaveLength(3);
    expect(fake.batches).toHaveLength(1);
    const recorded = fake.batches[0]!;
    expect(recorded).toMatchObject({ id: created.id, wire: "openai", customIds: ["q-1", "q-2", "q-3"], status: "completed", polls: 1 });
    expect(recorded.requests[1]!.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "name a colour" }]);
    expect(recorded.requests[1]!.schema).toEqual(SCHEMA);
    expect(recorded.requests[1]!.batch).toEqual({ id: created.id, customId: "q-2" });
  });

  it("uses queued replies in line order, shared with live requests", async () => {
    fake.reply("first").reply({ label: "second" }).reply("third, live");
    const created = await submit([["a", chatBody("one")], ["b", chatBody("two")]]);
    const { batch } = await pollOpenAI(created.id);
    const output = await fileLines(batch.output_file_id);
    expect(output.map((l) => l.response.body.choices[0].message.content)).toEqual(["first", '{"label":"second"}']);
    const live = await openai.chat.completions.create(chatBody("three"));
    expect(live.choices[0]!.message.content).toBe("third, live");
  });

  it("reports in_progress for the scripted number of polls, its counts growing, then completes", async () => {
    fake.batch({ polls: 2 });
    const created = await submit([["a", chatBody("1")], ["b", chatBody("2")], ["c", chatBody("3")], ["d", chatBody("4")]]);
    const seen: [string, number, string | null | undefined][] = [];
    for (let i = 0; i < 3; i++) {
      const b = await openai.batches.retrieve(created.id);
      seen.push([b.status, b.request_counts!.completed, b.output_file_id]);
    }
    expect(seen[0]).toEqual(["in_progress", 1, null]);
    expect(seen[1]).toEqual(["in_progress", 2, null]);
    expect(seen[2]![0]).toBe("completed");
    expect(seen[2]![1]).toBe(4);
    expect(fake.batches[0]!.statuses).toEqual(["validating", "in_progress", "in_progress", "completed"]);
    expect(fake.batches[0]!.polls).toBe(3);

    // The script covered one batch: the next one ends on its first poll again.
    const next = await submit([["e", chatBody("5")]]);
    expect((await pollOpenAI(next.id)).statuses).toEqual(["completed"]);
  });

  it("puts a failed line and an expired line in the error file, the others in the output file", async () => {
    fake.batch({ failIds: ["b"], lineError: { status: 400, message: "b is not a valid prompt" }, expireIds: (customId) => customId === "c" });
    fake.reply("for a").reply("for d");
    const created = await submit([["a", chatBody("1")], ["b", chatBody("2")], ["c", chatBody("3")], ["d", chatBody("4")]]);
    const { batch } = await pollOpenAI(created.id);
    expect(batch.status).toBe("completed");
    expect(batch.request_counts).toEqual({ total: 4, completed: 2, failed: 2 });

    const output = await fileLines(batch.output_file_id);
    // Failed and expired lines never reached the model: the queued replies went to a and d.
    expect(output.map((l) => [l.custom_id, l.response.body.choices[0].message.content])).toEqual([["a", "for a"], ["d", "for d"]]);
    const errors = await fileLines(batch.error_file_id);
    expect(errors.map((l) => l.custom_id)).toEqual(["b", "c"]);
    expect(errors[0].response.status_code).toBe(400);
    expect(errors[0].response.body.error.message).toBe("b is not a valid prompt");
    expect(errors[0].error).toBeNull();
    expect(errors[1].response).toBeNull();
    expect(errors[1].error.code).toBe("batch_expired");
  });

  it("writes a picked result line cut off half-way and a picked one twice with different answers; counts downloads", async () => {
    fake.batch({ malformedIds: ["b"], duplicateIds: ["c"] });
    const { batch } = await pollOpenAI((await submit([["a", chatBody("1")], ["b", chatBody("2")], ["c", chatBody("3")]])).id);
    expect(fake.batches[0]!.downloads).toBe(0);
    const text = await (await openai.files.content(batch.output_file_id!)).text();
    const lines = text.trim().split("\n");
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[0]!).custom_id).toBe("a");
    expect(() => JSON.parse(lines[1]!)).toThrow(SyntaxError);
    expect(lines[1]).toMatch(/^\{"id":"[^"]+","custom_id":"b"/);
    const copies = lines.slice(2).map((l) => JSON.parse(l));
    expect(copies.map((l) => [l.custom_id, l.response.body.choices[0].message.content])).toEqual([["c", "answer to 3"], ["c", "answer to a different question"]]);
    expect(fake.batches[0]!.downloads).toBe(1);
  });

  it("errors only the line whose reply function throws", async () => {
    fake.reply("fine").reply(() => { throw new Error("no reply for this one"); });
    const { batch } = await pollOpenAI((await submit([["a", chatBody("1")], ["b", chatBody("2")], ["c", chatBody("3")]])).id);
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const errors = await fileLines(batch.error_file_id);
    expect(errors.map((l) => [l.custom_id, l.response.status_code])).toEqual([["b", 500]]);
    expect(errors[0].response.body.error.message).toContain("no reply for this one");
  });

  it("fails a whole batch with the reason in errors.data and no output", async () => {
    fake.batch({ fail: "The model `gpt-nope` does not exist", polls: 1 });
    const created = await submit([["a", chatBody("1")]]);
    const { batch, statuses } = await pollOpenAI(created.id);
    expect(statuses).toEqual(["validating", "failed"]);
    expect(batch.errors?.data?.[0]?.message).toBe("The model `gpt-nope` does not exist");
    expect(typeof batch.failed_at).toBe("number");
    expect(batch.output_file_id).toBeNull();
    expect(batch.error_file_id).toBeNull();
  });

  it("fails a batch whose input file repeats a custom id or mixes models, naming the line", async () => {
    const repeated = await submit([["a", chatBody("1")], ["a", chatBody("2")]]);
    const { batch } = await pollOpenAI(repeated.id);
    expect(batch.status).toBe("failed");
    expect(batch.errors?.data?.[0]).toMatchObject({ line: 2 });
    expect(batch.errors?.data?.[0]?.message).toContain('custom_id "a" is used twice');

    const mixed = await submit([["a", chatBody("1")], ["b", { ...chatBody("2"), model: "gpt-4o" }]]);
    const second = (await pollOpenAI(mixed.id)).batch;
    expect(second.status).toBe("failed");
    expect(second.errors?.data?.[0]?.message).toContain("several models");
  });

  it("expires a whole batch: every line in the error file as batch_expired", async () => {
    fake.batch({ expire: true, polls: 1 });
    const created = await submit([["a", chatBody("1")], ["b", chatBody("2")]]);
    const { batch, statuses } = await pollOpenAI(created.id);
    expect(statuses).toEqual(["in_progress", "expired"]);
    expect(typeof batch.expired_at).toBe("number");
    expect(batch.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
    expect(batch.output_file_id).toBeNull();
    const errors = await fileLines(batch.error_file_id);
    expect(errors.map((l) => [l.custom_id, l.error.code])).toEqual([["a", "batch_expired"], ["b", "batch_expired"]]);
  });

  it("cancels: cancelling, then cancelled with the lines done so far in the output and the rest in the error file", async () => {
    fake.batch({ polls: 3 });
    const created = await submit([["a", chatBody("1")], ["b", chatBody("2")], ["c", chatBody("3")], ["d", chatBody("4")]]);
    expect((await openai.batches.retrieve(created.id)).request_counts?.completed).toBe(1);
    const cancelling = await openai.batches.cancel(created.id);
    expect(cancelling.status).toBe("cancelling");
    const { batch } = await pollOpenAI(created.id);
    expect(batch.status).toBe("cancelled");
    expect((await fileLines(batch.output_file_id)).map((l) => l.custom_id)).toEqual(["a"]);
    expect((await fileLines(batch.error_file_id)).map((l) => [l.custom_id, l.error.code])).toEqual([["b", "batch_cancelled"], ["c", "batch_cancelled"], ["d", "batch_cancelled"]]);
    expect(fake.batches[0]!.cancelRequested).toBe(true);
    await expect(openai.batches.cancel(created.id)).rejects.toMatchObject({ status: 409 });
  });

  it("writes results in reverse order when asked, so clients must match by custom id", async () => {
    fake.batch({ order: "reversed" });
    const created = await submit([["a", chatBody("1")], ["b", chatBody("2")], ["c", chatBody("3")]]);
    const output = await fileLines((await pollOpenAI(created.id)).batch.output_file_id);
    expect(output.map((l) => [l.custom_id, l.response.body.choices[0].message.content])).toEqual([["c", "answer to 3"], ["b", "answer to 2"], ["a", "answer to 1"]]);
  });
});

describe("Anthropic Message Batches", () => {
  it("answers each request with what a live call to the same fake returns", async () => {
    const requests = [
      { custom_id: "q-1", params: claudeParams("What is 2 + 2?") },
      { custom_id: "q-2", params: claudeParams("name a colour", true) },
    ];
    const created = await anthropic.messages.batches.create({ requests });
    expect(created).toMatchObject({ type: "message_batch", processing_status: "in_progress", results_url: null, request_counts: { processing: 2, succeeded: 0 } });
    const { batch, statuses } = await pollAnthropic(created.id);
    expect(statuses).toEqual(["ended"]);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 });
    expect(batch.results_url).toBe(`${fake.url}/v1/messages/batches/${created.id}/results`);

    const lines = await results(created.id);
    expect(lines.map((l) => l.custom_id)).toEqual(["q-1", "q-2"]);
    for (const { custom_id, params } of requests) {
      const live = await anthropic.messages.create(params);
      const result = lines.find((l) => l.custom_id === custom_id)!.result;
      expect(result.type).toBe("succeeded");
      if (result.type !== "succeeded") continue;
      expect(result.message.content).toEqual(live.content);
      expect(result.message.usage).toEqual(live.usage);
    }
    expect(lines[1]!.result).toMatchObject({ message: { content: [{ type: "tool_use", name: "Out", input: { label: "NAME A COLOUR" } }] } });
    expect(fake.batches[0]).toMatchObject({ id: created.id, wire: "anthropic", customIds: ["q-1", "q-2"] });
    expect(fake.batches[0]!.requests[0]!.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "What is 2 + 2?" }]);
    expect(fake.batches[0]!.requests[1]!.schema).toEqual(SCHEMA);
  });

  it("stays in_progress for the scripted polls, every request counted as processing, with no results yet", async () => {
    fake.batch({ polls: 2 });
    const created = await anthropic.messages.batches.create({ requests: [{ custom_id: "a", params: claudeParams("1") }, { custom_id: "b", params: claudeParams("2") }] });
    const first = await anthropic.messages.batches.retrieve(created.id);
    expect(first.processing_status).toBe("in_progress");
    expect(first.request_counts).toEqual({ processing: 2, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
    const early = await fetch(`${fake.url}/v1/messages/batches/${created.id}/results`);
    expect(early.status).toBe(404);
    const { statuses } = await pollAnthropic(created.id);
    expect(statuses).toEqual(["in_progress", "ended"]);
    expect(fake.batches[0]!.statuses).toEqual(["in_progress", "in_progress", "in_progress", "ended"]);
  });

  it("reports a failed request as errored and an expired one as expired", async () => {
    fake.batch({ failIds: (customId) => customId === "b", lineError: { status: 529, message: "Overloaded" }, expireIds: ["c"] });
    const created = await anthropic.messages.batches.create({
      requests: ["a", "b", "c"].map((custom_id) => ({ custom_id, params: claudeParams(custom_id) })),
    });
    const { batch } = await pollAnthropic(created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 1 });
    const lines = await results(created.id);
    expect(lines.map((l) => [l.custom_id, l.result.type])).toEqual([["a", "succeeded"], ["b", "errored"], ["c", "expired"]]);
    expect(lines[1]!.result).toMatchObject({ type: "errored", error: { type: "error", error: { type: "api_error", message: "Overloaded" } } });
  });

  it("writes a picked result line cut off half-way and a picked one twice with different answers; counts downloads", async () => {
    fake.batch({ malformedIds: ["b"], duplicateIds: ["c"] });
    const created = await anthropic.messages.batches.create({ requests: ["a", "b", "c"].map((custom_id) => ({ custom_id, params: claudeParams(custom_id) })) });
    await pollAnthropic(created.id);
    const text = await (await fetch(`${fake.url}/v1/messages/batches/${created.id}/results`)).text();
    const lines = text.trim().split("\n");
    expect(lines).toHaveLength(4);
    expect(() => JSON.parse(lines[1]!)).toThrow(SyntaxError);
    expect(lines[1]).toMatch(/^\{"custom_id":"b"/);
    const copies = [lines[0]!, lines[2]!, lines[3]!].map((l) => JSON.parse(l));
    expect(copies.map((l) => [l.custom_id, l.result.message.content[0].text])).toEqual([["a", "answer to a"], ["c", "answer to c"], ["c", "answer to a different question"]]);
    expect(fake.batches[0]!.downloads).toBe(1);
  });

  it("refuses a whole batch scripted to fail with a 400 carrying the reason", async () => {
    fake.batch({ fail: "requests.0.params.model: model not found" });
    const attempt = anthropic.messages.batches.create({ requests: [{ custom_id: "a", params: claudeParams("1") }] });
    await expect(attempt).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(attempt).rejects.toMatchObject({ status: 400, error: { error: { type: "invalid_request_error", message: "requests.0.params.model: model not found" } } });
    expect(fake.batches).toHaveLength(0);
  });

  it("refuses custom ids the real service refuses: invalid characters, repeats", async () => {
    await expect(anthropic.messages.batches.create({ requests: [{ custom_id: "row:1", params: claudeParams("1") }] }))
      .rejects.toMatchObject({ status: 400, error: { error: { message: expect.stringContaining("requests.0.custom_id") } } });
    await expect(anthropic.messages.batches.create({ requests: [{ custom_id: "a", params: claudeParams("1") }, { custom_id: "a", params: claudeParams("2") }] }))
      .rejects.toMatchObject({ status: 400, error: { error: { message: expect.stringContaining("used twice") } } });
  });

  it("expires a whole batch: ended with every result expired", async () => {
    fake.batch({ expire: true });
    const created = await anthropic.messages.batches.create({ requests: [{ custom_id: "a", params: claudeParams("1") }, { custom_id: "b", params: claudeParams("2") }] });
    const { batch } = await pollAnthropic(created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 2 });
    expect((await results(created.id)).map((l) => l.result.type)).toEqual(["expired", "expired"]);
  });

  it("cancels: canceling, then ended with the unprocessed requests canceled", async () => {
    fake.batch({ polls: 5 });
    const created = await anthropic.messages.batches.create({ requests: [{ custom_id: "a", params: claudeParams("1") }, { custom_id: "b", params: claudeParams("2") }] });
    const canceling = await anthropic.messages.batches.cancel(created.id);
    expect(canceling.processing_status).toBe("canceling");
    expect(canceling.cancel_initiated_at).not.toBeNull();
    const { batch } = await pollAnthropic(created.id);
    expect(batch.request_counts.canceled).toBe(2);
    expect((await results(created.id)).map((l) => l.result.type)).toEqual(["canceled", "canceled"]);
  });
});

describe("batch scripting and records", () => {
  it("takes the default script from the options: every unscripted batch runs for that many polls", async () => {
    const slow = await startFakeProvider({ batch: { polls: 1 } });
    try {
      const client = new Anthropic({ apiKey: "sk-ant-test-batch", baseURL: slow.url, maxRetries: 0 });
      for (let i = 0; i < 2; i++) {
        const created = await client.messages.batches.create({ requests: [{ custom_id: "a", params: claudeParams("1") }] });
        expect((await client.messages.batches.retrieve(created.id)).processing_status).toBe("in_progress");
        expect((await client.messages.batches.retrieve(created.id)).processing_status).toBe("ended");
      }
    } finally {
      await slow.close();
    }
  });

  it("covers `times` batches with one script", async () => {
    fake.batch({ polls: 1, times: 2 });
    const statuses: string[][] = [];
    for (let i = 0; i < 3; i++) statuses.push((await pollOpenAI((await submit([["a", chatBody("1")]])).id)).statuses);
    expect(statuses).toEqual([["in_progress", "completed"], ["in_progress", "completed"], ["completed"]]);
  });

  it("never applies live faults or the rate limit to batch calls", async () => {
    fake.fail({ status: 500 }).rateLimit({ requestsPerSecond: 0.001, burst: 1 });
    try {
      const created = await submit([["a", chatBody("1")]]);
      expect((await pollOpenAI(created.id)).batch.status).toBe("completed");
      // The fault is still queued for the first live request, which the bucket lets through.
      await expect(openai.chat.completions.create(chatBody("live"))).rejects.toMatchObject({ status: 500 });
      await expect(openai.chat.completions.create(chatBody("live"))).rejects.toMatchObject({ status: 429 });
    } finally {
      fake.rateLimit(null);
    }
  });

  it("reset forgets records, scripts and the upload count, but a submitted batch stays retrievable", async () => {
    fake.batch({ polls: 1 });
    const created = await submit([["a", chatBody("1")]]);
    fake.batch({ fail: "never used" });
    fake.reset();
    expect(fake.batches).toHaveLength(0);
    expect(fake.uploads).toBe(0);
    expect((await pollOpenAI(created.id)).statuses).toEqual(["in_progress", "completed"]);
    const next = await submit([["b", chatBody("2")]]);
    expect((await pollOpenAI(next.id)).batch.status).toBe("completed");
    expect(fake.uploads).toBe(1);
  });
});
