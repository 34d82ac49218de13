import type { ServerResponse } from "node:http";
import { errorBody, fakeRequest, parseBody, sendJson, type FakeRequest } from "./fake-wire.js";
import {
  ANTHROPIC_CUSTOM_ID, CANCELLED_MESSAGE, DAY_MS, EXPIRED_MESSAGE, LIMITS,
  type BatchError, type BatchState, type FakeBatch, type FakeBatchScript, type FakeBatchWire, type Line, type Outcome, type StoredFile,
} from "./fake-batch-script.js";
import { anthropicResult, fileObject, iso, listOf, matches, sendBytes } from "./fake-batch-shapes.js";

export type { FakeBatch, FakeBatchLineMatch, FakeBatchScript, FakeBatchWire } from "./fake-batch-script.js";

// The two batch services of the fake provider: OpenAI's Files + Batch API and Anthropic's Message
// Batches. Batches advance by polls, not by time, so a test decides exactly what each poll sees.
// Each line is answered by the same reply machinery as a live request (`answer`), when the line is
// processed: in request order, in step with the batch's progress.

export interface BatchServiceOptions {
  /** Base URL of the server (for Anthropic's `results_url`). */
  url: string;
  /** The success body for a line, from the same reply machinery as a live request; throws when the reply function does. */
  answer: (request: FakeRequest) => Promise<unknown>;
  /** The script of batches none was queued for. */
  defaultScript: FakeBatchScript;
}

export interface BatchService {
  /** Answers `method path` when it is a batch or file route; false when it is not one. */
  handle(method: string, path: string, headers: Record<string, string>, raw: Buffer, res: ServerResponse): Promise<boolean>;
  script(script: FakeBatchScript): void;
  readonly batches: FakeBatch[];
  readonly uploads: number;
  /** Forgets records and queued scripts; submitted batches and files stay retrievable, as at a provider. */
  reset(): void;
}

export function createBatchService(options: BatchServiceOptions): BatchService {
  const files = new Map<string, StoredFile>();
  /** The batch whose results an output or error file holds, by file id. */
  const resultsOf = new Map<string, BatchState>();
  const states = new Map<string, BatchState>();
  const records: FakeBatch[] = [];
  const scripts: { script: FakeBatchScript; remaining: number }[] = [];
  let uploads = 0;
  let counter = 0;
  const nextId = (prefix: string): string => `${prefix}${(++counter).toString().padStart(6, "0")}`;

  const takeScript = (): FakeBatchScript => {
    const head = scripts[0];
    if (head === undefined) return options.defaultScript;
    head.remaining -= 1;
    if (head.remaining <= 0) scripts.shift();
    return head.script;
  };

  const storeFile = (filename: string, purpose: string, content: Buffer): StoredFile => {
    const file = { id: nextId("file-fake"), filename, purpose, createdAt: Date.now(), content };
    files.set(file.id, file);
    return file;
  };

  const newState = (wire: FakeBatchWire, id: string, script: FakeBatchScript, lines: Line[]): BatchState => {
    const status = wire === "openai" ? "validating" : "in_progress";
    const state: BatchState = {
      record: { id, wire, customIds: lines.map((l) => l.customId), requests: lines.map((l) => l.request), statuses: [status], status, polls: 0, cancelRequested: false, downloads: 0 },
      wire, script, lines, createdAt: Date.now(), queue: Promise.resolve(),
    };
    const fail = script.fail;
    if (fail !== undefined) {
      state.failure = [typeof fail === "string" ? { code: "invalid_request", message: fail, line: null } : { code: fail.code ?? "invalid_request", message: fail.message, line: null }];
    }
    states.set(id, state);
    records.push(state.record);
    return state;
  };

  /** Runs `fn` after every earlier operation on the same batch. */
  const serially = <T>(state: BatchState, fn: () => Promise<T>): Promise<T> => {
    const result = state.queue.then(fn);
    state.queue = result.catch(() => undefined);
    return result;
  };

  const settleLine = async (state: BatchState, line: Line): Promise<void> => {
    if (line.outcome !== undefined) return;
    const { script } = state;
    if (matches(script.expireIds, line)) {
      line.outcome = { kind: "expired" };
    } else if (matches(script.failIds, line)) {
      line.outcome = { kind: "errored", status: script.lineError?.status ?? 500, message: script.lineError?.message ?? "fake provider: injected batch line failure" };
    } else {
      try {
        line.outcome = { kind: "succeeded", body: await options.answer(line.request) };
      } catch (error) {
        line.outcome = { kind: "errored", status: 500, message: `fake provider: the reply function threw: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    if (matches(script.duplicateIds, line)) {
      const other: FakeRequest = { ...line.request, messages: [...line.request.messages.slice(0, -1), { role: "user", content: "a different question" }] };
      line.second = { kind: "succeeded", body: await options.answer(other) };
    }
  };

  /** Moves the batch on by one poll: processes the lines due by now and ends it when its time has come. */
  const advance = async (state: BatchState): Promise<void> => {
    if (state.end !== undefined || state.script.unknownStatus !== undefined) return;
    const due = (state.script.polls ?? 0) + 1;
    // A cancelled batch ends at the first poll after the cancel, keeping the lines already processed.
    if (state.cancelAskedAt !== undefined) {
      for (const line of state.lines) line.outcome ??= { kind: "canceled" };
      return finish(state, state.wire === "openai" ? "cancelled" : "ended");
    }
    if (state.failure !== undefined) {
      if (state.record.polls >= due) finish(state, state.wire === "openai" ? "failed" : "ended");
      return;
    }
    if (state.script.expire === true) {
      if (state.record.polls >= due) {
        for (const line of state.lines) line.outcome ??= { kind: "expired" };
        finish(state, state.wire === "openai" ? "expired" : "ended");
      }
      return;
    }
    const processed = Math.min(state.lines.length, Math.floor((state.lines.length * state.record.polls) / due));
    for (const line of state.lines.slice(0, processed)) await settleLine(state, line);
    if (state.record.polls >= due) finish(state, state.wire === "openai" ? "completed" : "ended");
  };

  const finish = (state: BatchState, end: string): void => {
    state.end = end;
    state.endedAt = Date.now();
    const { script } = state;
    const submitted = script.order === "reversed" ? [...state.lines].reverse() : state.lines;
    // A duplicated line is followed by its second result: the same custom id with a different answer.
    const lines: { line: Line; outcome: Outcome | undefined }[] = submitted.flatMap((line) =>
      line.outcome === undefined || line.second === undefined ? [{ line, outcome: line.outcome }] : [{ line, outcome: line.outcome }, { line, outcome: line.second }]);
    /** The line as written: cut off half-way when the script breaks it. */
    const written = (line: Line, text: string): string => (matches(script.malformedIds, line) ? text.slice(0, Math.floor(text.length / 2)) : text);
    if (state.wire === "anthropic") {
      state.results = lines.map(({ line, outcome }) =>
        written(line, JSON.stringify({ custom_id: line.customId, result: anthropicResult(outcome ?? { kind: "canceled" }) })) + "\n").join("");
      return;
    }
    if (state.failure !== undefined || state.openai === undefined) return;
    const output: string[] = [];
    const errors: string[] = [];
    for (const { line, outcome } of lines) {
      if (outcome === undefined) continue;
      const id = nextId("batch_req_fake");
      if (outcome.kind === "succeeded") {
        output.push(written(line, JSON.stringify({ id, custom_id: line.customId, response: { status_code: 200, request_id: nextId("req_fake"), body: outcome.body }, error: null })));
      } else if (outcome.kind === "errored") {
        errors.push(written(line, JSON.stringify({ id, custom_id: line.customId, response: { status_code: outcome.status, request_id: nextId("req_fake"), body: errorBody("openai", outcome.status, outcome.message) }, error: null })));
      } else {
        const [code, message] = outcome.kind === "expired" ? ["batch_expired", EXPIRED_MESSAGE] : ["batch_cancelled", CANCELLED_MESSAGE];
        errors.push(written(line, JSON.stringify({ id, custom_id: line.customId, response: null, error: { code, message } })));
      }
    }
    // As at OpenAI, a file exists only when it has lines.
    if (output.length > 0) state.openai.outputFileId = storeFile(`${state.record.id}_output.jsonl`, "batch_output", Buffer.from(output.join("\n") + "\n")).id;
    if (errors.length > 0) state.openai.errorFileId = storeFile(`${state.record.id}_error.jsonl`, "batch_output", Buffer.from(errors.join("\n") + "\n")).id;
    for (const id of [state.openai.outputFileId, state.openai.errorFileId]) if (id !== undefined) resultsOf.set(id, state);
  };

  /** The status a poll reports now. */
  const statusOf = (state: BatchState): string => {
    if (state.script.unknownStatus !== undefined) return state.script.unknownStatus;
    if (state.end !== undefined) return state.end;
    if (state.cancelAskedAt !== undefined) return state.wire === "openai" ? "cancelling" : "canceling";
    if (state.wire === "anthropic") return "in_progress";
    return state.failure !== undefined || state.record.polls === 0 ? "validating" : "in_progress";
  };

  const report = (state: BatchState): unknown => {
    const status = statusOf(state);
    state.record.status = status;
    state.record.statuses.push(status);
    return state.wire === "openai" ? openaiBatch(state, status) : anthropicBatch(state, status);
  };

  const anthropicBatch = (state: BatchState, status: string): unknown => {
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (state.end === undefined) counts.processing = state.lines.length;
    else for (const line of state.lines) counts[anthropicResult(line.outcome ?? { kind: "canceled" }).type as keyof typeof counts] += 1;
    return {
      id: state.record.id, type: "message_batch", processing_status: status, request_counts: counts,
      created_at: iso(state.createdAt), expires_at: iso(state.createdAt + DAY_MS), ended_at: iso(state.endedAt),
      cancel_initiated_at: iso(state.cancelAskedAt), archived_at: null,
      results_url: state.end === undefined ? null : `${options.url}/v1/messages/batches/${state.record.id}/results`,
    };
  };

  const openaiBatch = (state: BatchState, status: string): unknown => {
    const o = state.openai!;
    let completed = 0;
    let failed = 0;
    if (state.failure === undefined) for (const line of state.lines) {
      if (line.outcome?.kind === "succeeded") completed++;
      else if (line.outcome !== undefined) failed++;
    }
    const at = (ms: number | undefined): number | null => (ms === undefined ? null : Math.floor(ms / 1000));
    const endedAs = (name: string): number | null => (state.end === name ? at(state.endedAt) : null);
    return {
      id: state.record.id, object: "batch", endpoint: o.endpoint, model: o.model,
      errors: state.failure === undefined ? null : { object: "list", data: state.failure.map((e) => ({ code: e.code, message: e.message, param: null, line: e.line })) },
      input_file_id: o.inputFileId, completion_window: o.completionWindow, status,
      output_file_id: o.outputFileId ?? null, error_file_id: o.errorFileId ?? null,
      created_at: at(state.createdAt), in_progress_at: state.failure === undefined && state.record.polls > 0 ? at(state.createdAt) : null,
      expires_at: at(state.createdAt + DAY_MS), finalizing_at: endedAs("completed"), completed_at: endedAs("completed"),
      failed_at: endedAs("failed"), expired_at: endedAs("expired"),
      cancelling_at: at(state.cancelAskedAt), cancelled_at: endedAs("cancelled"),
      request_counts: { total: state.lines.length, completed, failed },
      metadata: o.metadata ?? null,
    };
  };

  // --- OpenAI: files and batches -------------------------------------------------------------

  const uploadFile = async (headers: Record<string, string>, raw: Buffer, res: ServerResponse): Promise<void> => {
    let form: FormData;
    try {
      form = await new Response(raw, { headers: { "content-type": headers["content-type"] ?? "" } }).formData();
    } catch {
      return sendJson(res, 400, errorBody("openai", 400, "POST /v1/files: expected a multipart/form-data body with fields file and purpose"));
    }
    const file = form.get("file");
    const purpose = form.get("purpose");
    if (typeof file === "string" || file === null) return sendJson(res, 400, errorBody("openai", 400, "POST /v1/files: the field \"file\" is missing or is not a file"));
    if (purpose !== "batch") return sendJson(res, 400, errorBody("openai", 400, `POST /v1/files: purpose ${JSON.stringify(purpose)}: the fake provider stores only purpose "batch"`));
    const content = Buffer.from(await file.arrayBuffer());
    if (content.length > LIMITS.openai.bytes) return sendJson(res, 400, errorBody("openai", 400, `File is ${content.length} bytes; a batch input file may hold at most ${LIMITS.openai.bytes} bytes (200 MB)`));
    uploads++;
    sendJson(res, 200, fileObject(storeFile(file.name, purpose, content)));
  };

  const createOpenAIBatch = (headers: Record<string, string>, body: any, res: ServerResponse): void => {
    const file = typeof body?.input_file_id === "string" ? files.get(body.input_file_id) : undefined;
    if (file === undefined) return sendJson(res, 404, errorBody("openai", 404, `No such File object: ${String(body?.input_file_id)}`));
    if (file.purpose !== "batch") return sendJson(res, 400, errorBody("openai", 400, `File ${file.id} has purpose "${file.purpose}"; a batch input file needs purpose "batch"`));
    if (body.endpoint !== "/v1/chat/completions") return sendJson(res, 400, errorBody("openai", 400, `endpoint ${JSON.stringify(body.endpoint)}: the fake provider batches only "/v1/chat/completions"`));
    if (body.completion_window !== "24h") return sendJson(res, 400, errorBody("openai", 400, `completion_window ${JSON.stringify(body.completion_window)}: expected "24h"`));
    const id = nextId("batch_fake");
    const { lines, errors, model } = readInputFile(file.content, body.endpoint, headers, id);
    const state = newState("openai", id, takeScript(), lines);
    if (errors.length > 0) state.failure = errors;
    state.openai = { inputFileId: file.id, endpoint: body.endpoint, completionWindow: body.completion_window, metadata: body.metadata, model };
    sendJson(res, 200, openaiBatch(state, "validating"));
  };

  // --- Anthropic: message batches ------------------------------------------------------------

  const createAnthropicBatch = (headers: Record<string, string>, raw: Buffer, body: any, res: ServerResponse): void => {
    const refuse = (message: string): void => sendJson(res, 400, errorBody("anthropic", 400, message));
    if (raw.length > LIMITS.anthropic.bytes) return refuse(`The batch is ${raw.length} bytes; a message batch may hold at most ${LIMITS.anthropic.bytes} bytes (256 MB)`);
    const requests: unknown = body?.requests;
    if (!Array.isArray(requests) || requests.length === 0) return refuse("requests: expected a non-empty array of { custom_id, params }");
    if (requests.length > LIMITS.anthropic.requests) return refuse(`requests: ${requests.length} requests; a message batch may hold at most ${LIMITS.anthropic.requests}`);
    const id = nextId("msgbatch_fake");
    const seen = new Set<string>();
    const lines: Line[] = [];
    for (const [i, entry] of requests.entries()) {
      const customId: unknown = entry?.custom_id;
      if (typeof customId !== "string" || !ANTHROPIC_CUSTOM_ID.test(customId)) {
        return refuse(`requests.${i}.custom_id: expected 1 to 64 characters from [a-zA-Z0-9_-], received ${JSON.stringify(customId)}`);
      }
      if (seen.has(customId)) return refuse(`requests.${i}.custom_id: "${customId}" is used twice; custom ids must be unique within a batch`);
      seen.add(customId);
      const params = entry.params;
      if (typeof params !== "object" || params === null || typeof params.model !== "string" || !Array.isArray(params.messages) || typeof params.max_tokens !== "number") {
        return refuse(`requests.${i}.params: expected Messages API parameters with model, max_tokens and messages`);
      }
      if (params.stream === true) return refuse(`requests.${i}.params.stream: streaming is not supported in a message batch`);
      lines.push({ customId, request: { ...fakeRequest("anthropic", "POST", "/v1/messages", headers, params), batch: { id, customId } } });
    }
    const script = takeScript();
    if (script.fail !== undefined) return refuse(typeof script.fail === "string" ? script.fail : script.fail.message);
    const state = newState("anthropic", id, script, lines);
    sendJson(res, 200, anthropicBatch(state, "in_progress"));
  };

  const readInputFile = (content: Buffer, endpoint: string, headers: Record<string, string>, id: string): { lines: Line[]; errors: BatchError[]; model: string | null } => {
    const lines: Line[] = [];
    const errors: BatchError[] = [];
    const seen = new Set<string>();
    const models = new Set<string>();
    const texts = content.toString("utf8").split("\n");
    const invalid = (line: number, message: string): void => void errors.push({ code: "invalid_request", message: `Line ${line}: ${message}`, line });
    for (const [i, text] of texts.entries()) {
      if (text.trim() === "") continue;
      const n = i + 1;
      const entry = parseBody(text);
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) { invalid(n, "expected a JSON object"); continue; }
      if (typeof entry.custom_id !== "string" || entry.custom_id === "") { invalid(n, "custom_id: expected a non-empty string"); continue; }
      if (seen.has(entry.custom_id)) { invalid(n, `custom_id "${entry.custom_id}" is used twice; custom ids must be unique within a batch`); continue; }
      seen.add(entry.custom_id);
      if (entry.method !== "POST") { invalid(n, `method ${JSON.stringify(entry.method)}: expected "POST"`); continue; }
      if (entry.url !== endpoint) { invalid(n, `url ${JSON.stringify(entry.url)}: expected the batch's endpoint "${endpoint}"`); continue; }
      if (typeof entry.body !== "object" || entry.body === null || typeof entry.body.model !== "string" || !Array.isArray(entry.body.messages)) {
        invalid(n, "body: expected chat completion parameters with model and messages");
        continue;
      }
      models.add(entry.body.model);
      lines.push({ customId: entry.custom_id, request: { ...fakeRequest("openai", "POST", entry.url, headers, entry.body), batch: { id, customId: entry.custom_id } } });
    }
    if (lines.length === 0 && errors.length === 0) errors.push({ code: "empty_file", message: "The input file holds no requests", line: null });
    if (lines.length > LIMITS.openai.requests) errors.push({ code: "too_many_requests", message: `The input file holds ${lines.length} requests; a batch may hold at most ${LIMITS.openai.requests}`, line: null });
    if (models.size > 1) errors.push({ code: "mismatched_model", message: `The input file uses several models (${[...models].join(", ")}); a batch may use one`, line: null });
    return { lines, errors, model: models.size === 1 ? [...models][0]! : null };
  };

  // --- routing --------------------------------------------------------------------------------

  const pollOrCancel = async (id: string, wire: FakeBatchWire, cancel: boolean, res: ServerResponse): Promise<void> => {
    const state = states.get(id);
    if (state === undefined || state.wire !== wire) return sendJson(res, 404, errorBody(wire, 404, `No batch with id ${id}`));
    const body = await serially(state, async () => {
      if (!cancel) {
        state.record.polls += 1;
        await advance(state);
        return { status: 200, body: report(state) };
      }
      if (state.end !== undefined) return { status: 409, body: errorBody(wire, 409, `Batch ${id} has already ended (${state.end}); it cannot be cancelled`) };
      if (state.cancelAskedAt === undefined) {
        state.cancelAskedAt = Date.now();
        state.record.cancelRequested = true;
      }
      return { status: 200, body: report(state) };
    });
    sendJson(res, body.status, body.body);
  };

  const missingFile = (res: ServerResponse, id: string): void => sendJson(res, 404, errorBody("openai", 404, `No such File object: ${id}`));
  const json = (raw: Buffer): any => parseBody(raw.toString("utf8"));
  type Route = [method: string, pattern: RegExp, run: (id: string, headers: Record<string, string>, raw: Buffer, res: ServerResponse) => void | Promise<void>];
  const routes: Route[] = [
    ["POST", /^\/v1\/files$/, (_, headers, raw, res) => uploadFile(headers, raw, res)],
    ["GET", /^\/v1\/files\/([^/]+)$/, (id, _h, _r, res) => {
      const file = files.get(id);
      if (file === undefined) missingFile(res, id);
      else sendJson(res, 200, fileObject(file));
    }],
    ["DELETE", /^\/v1\/files\/([^/]+)$/, (id, _h, _r, res) => {
      if (files.delete(id)) sendJson(res, 200, { id, object: "file", deleted: true });
      else missingFile(res, id);
    }],
    ["GET", /^\/v1\/files\/([^/]+)\/content$/, (id, _h, _r, res) => {
      const file = files.get(id);
      if (file === undefined) return missingFile(res, id);
      const batch = resultsOf.get(id);
      if (batch !== undefined) batch.record.downloads += 1;
      sendBytes(res, file.content);
    }],
    ["POST", /^\/v1\/batches$/, (_, headers, raw, res) => createOpenAIBatch(headers, json(raw), res)],
    ["GET", /^\/v1\/batches$/, (_i, _h, _r, res) => sendJson(res, 200, listOf(newestFirst("openai").map((s) => openaiBatch(s, statusOf(s))), true))],
    ["GET", /^\/v1\/batches\/([^/]+)$/, (id, _h, _r, res) => pollOrCancel(id, "openai", false, res)],
    ["POST", /^\/v1\/batches\/([^/]+)\/cancel$/, (id, _h, _r, res) => pollOrCancel(id, "openai", true, res)],
    ["POST", /^\/v1\/messages\/batches$/, (_, headers, raw, res) => createAnthropicBatch(headers, raw, json(raw), res)],
    ["GET", /^\/v1\/messages\/batches$/, (_i, _h, _r, res) => sendJson(res, 200, listOf(newestFirst("anthropic").map((s) => anthropicBatch(s, statusOf(s))), false))],
    ["GET", /^\/v1\/messages\/batches\/([^/]+)$/, (id, _h, _r, res) => pollOrCancel(id, "anthropic", false, res)],
    ["POST", /^\/v1\/messages\/batches\/([^/]+)\/cancel$/, (id, _h, _r, res) => pollOrCancel(id, "anthropic", true, res)],
    ["GET", /^\/v1\/messages\/batches\/([^/]+)\/results$/, (id, _h, _r, res) => {
      const state = states.get(id);
      if (state?.wire === "anthropic" && state.results !== undefined) {
        state.record.downloads += 1;
        return sendBytes(res, Buffer.from(state.results));
      }
      const why = state?.wire === "anthropic" ? `Batch ${id} is still processing; its results exist once it has ended` : `No batch with id ${id}`;
      sendJson(res, 404, errorBody("anthropic", 404, why));
    }],
  ];
  const newestFirst = (wire: FakeBatchWire): BatchState[] => [...states.values()].filter((s) => s.wire === wire).reverse();

  const handle: BatchService["handle"] = async (method, path, headers, raw, res) => {
    for (const [routeMethod, pattern, run] of routes) {
      const match = method === routeMethod ? pattern.exec(path) : null;
      if (match === null) continue;
      await run(decodeURIComponent(match[1] ?? ""), headers, raw, res);
      return true;
    }
    return false;
  };

  return {
    handle,
    script(script) {
      scripts.push({ script, remaining: script.times ?? 1 });
    },
    batches: records as FakeBatch[],
    get uploads() {
      return uploads;
    },
    reset() {
      records.length = 0;
      scripts.length = 0;
      uploads = 0;
    },
  };
}
