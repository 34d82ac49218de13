// What a test scripts of the fake provider's batch services (FakeBatchScript), what it reads back
// (FakeBatch), and the state the fake keeps of each batch and uploaded file, with the services'
// documented limits. The services themselves are in fake-batches.ts, the wire shapes in fake-batch-shapes.ts.
import type { FakeRequest } from "./fake-wire.js";

/** Which batch service a batch was submitted to. */
export type FakeBatchWire = "openai" | "anthropic";

/** Picks lines of a batch: custom ids, or a predicate on the line's custom id and request. */
export type FakeBatchLineMatch = readonly string[] | ((customId: string, request: FakeRequest) => boolean);

/** How the next batches behave. Every field is optional: `{}` is a batch that ends on its first poll. */
export interface FakeBatchScript {
  /**
   * How many polls report the batch still running before the poll that reports its end (default 0:
   * the first poll after creation sees it ended). OpenAI: created `validating`, then `in_progress`
   * with `request_counts` growing at each poll. Anthropic: `in_progress` with every request counted
   * as `processing`, as the real service does until the end.
   */
  polls?: number;
  /** Lines that fail with `lineError` (an error-file line on OpenAI, an `errored` result on Anthropic). */
  failIds?: FakeBatchLineMatch;
  /** The failure of a line picked by `failIds` (default status 500, a short message). */
  lineError?: { status?: number; message?: string };
  /** Lines that expire unanswered (OpenAI: error code `batch_expired`; Anthropic: an `expired` result). */
  expireIds?: FakeBatchLineMatch;
  /**
   * The whole batch fails. OpenAI: `validating` until the end, then `failed` with the message in
   * `errors.data[0].message`. Anthropic has no failed status: the create call gets a 400
   * `invalid_request_error` with the message.
   */
  fail?: string | { message: string; code?: string };
  /** The whole batch expires: every line expires; OpenAI `expired`, Anthropic `ended` with expired results. */
  expire?: boolean;
  /**
   * Result lines written broken: the line of a picked request is cut off half-way, so it is not JSON
   * (its custom id is still readable at its start). The other lines are whole.
   */
  malformedIds?: FakeBatchLineMatch;
  /**
   * Result lines written twice with different answers: a picked request's result line is followed
   * by a second line with its custom id, a success holding the reply to a different question (its
   * last user message replaced by "a different question"), from the same reply machinery.
   */
  duplicateIds?: FakeBatchLineMatch;
  /**
   * Every poll reports this status (OpenAI `status`, Anthropic `processing_status`) instead of the
   * real one, and the batch never ends: a status the service does not document, for testing clients.
   */
  unknownStatus?: string;
  /** Order of the result lines: as submitted (default) or reversed, so a client must match by custom id. */
  order?: "submitted" | "reversed";
  /** How many batches, in submission order, this script covers (default 1). */
  times?: number;
}

/** A batch the fake received, updated as it is polled: what a test asserts on. */
export interface FakeBatch {
  readonly id: string;
  readonly wire: FakeBatchWire;
  /** The lines' custom ids, in submission order. */
  readonly customIds: readonly string[];
  /** One request per line (its `batch` field set), as the live route would have recorded it. */
  readonly requests: readonly FakeRequest[];
  /** Every status reported for it, in order: the create response, each poll, the cancel response. */
  readonly statuses: readonly string[];
  /** The status it reports now (OpenAI `status`, Anthropic `processing_status`). */
  readonly status: string;
  /** How many times it was polled (`GET` of the batch; the Anthropic SDK's `results()` makes one too). */
  readonly polls: number;
  /** Whether the client asked to cancel it. */
  readonly cancelRequested: boolean;
  /** How many times its results were downloaded (OpenAI: each output or error file read; Anthropic: each results request). */
  readonly downloads: number;
}

/** How one line of a batch ended. */
export type Outcome =
  | { kind: "succeeded"; body: unknown }
  | { kind: "errored"; status: number; message: string }
  | { kind: "expired" }
  | { kind: "canceled" };

/** One line of a batch: its custom id, its request and, once processed, its outcome. */
export interface Line {
  customId: string;
  request: FakeRequest;
  outcome?: Outcome;
  /** A second, different result for the same custom id (`duplicateIds`). */
  second?: Outcome;
}

/** An error of a whole batch (an OpenAI input file that did not validate, a scripted failure). */
export interface BatchError {
  code: string;
  message: string;
  line: number | null;
}

/** What the fake keeps of one batch while it is polled. */
export interface BatchState {
  record: { -readonly [K in keyof FakeBatch]: FakeBatch[K] } & { statuses: string[] };
  wire: FakeBatchWire;
  script: FakeBatchScript;
  lines: Line[];
  /** Set when the OpenAI input file did not validate, or the script fails the batch. */
  failure?: BatchError[];
  createdAt: number;
  /** When the client asked to cancel (ms). */
  cancelAskedAt?: number;
  endedAt?: number;
  /** The terminal status, once ended. */
  end?: string;
  openai?: { inputFileId: string; endpoint: string; completionWindow: string; metadata: unknown; model: string | null; outputFileId?: string; errorFileId?: string };
  /** Anthropic's results JSONL, once ended. */
  results?: string;
  /** Serializes polls and cancels of this batch (reply functions may be async). */
  queue: Promise<unknown>;
}

/** An uploaded OpenAI file. */
export interface StoredFile {
  id: string;
  filename: string;
  purpose: string;
  createdAt: number;
  content: Buffer;
}

/** The documented limits (requests per batch, bytes per input). */
export const LIMITS = { openai: { requests: 50_000, bytes: 200 * 1024 * 1024 }, anthropic: { requests: 100_000, bytes: 256 * 1024 * 1024 } };
/** The custom ids Anthropic accepts. */
export const ANTHROPIC_CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** One day (ms): the completion window. */
export const DAY_MS = 24 * 60 * 60 * 1000;
/** The error of a line not run before the completion window ended. */
export const EXPIRED_MESSAGE = "This request could not be executed before the completion window expired.";
/** The error of a line not run because its batch was cancelled. */
export const CANCELLED_MESSAGE = "This request was not executed because the batch was cancelled.";
