import { redactError } from "../instrument/redact.js";

/** What went wrong in one provider attempt, in provider-neutral terms. */
export interface Failure {
  kind: "http" | "connection" | "timeout" | "invalid-response" | "stream-error" | "other";
  /** HTTP status, for `http` failures. */
  status: number | undefined;
  /** Whether trying again may succeed. */
  retryable: boolean;
  /** How long the server asked us to wait (from `retry-after-ms` / `retry-after`), in ms. */
  retryAfterMs: number | undefined;
  /** A short description with every registered secret, anything shaped like a key and URL credentials masked. */
  message: string;
}

/** Error types the providers send inside a stream; the transient ones are worth retrying (before the first byte). */
const STREAM_ERROR_TYPES = new Set([
  "overloaded_error", "rate_limit_error", "api_error", "server_error", "invalid_request_error", "authentication_error", "permission_error",
]);
const TRANSIENT_STREAM_ERRORS = new Set(["overloaded_error", "rate_limit_error", "api_error", "server_error"]);

/** Statuses worth retrying: request timeout, conflict, rate limit and server errors. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Minimal view of a `Headers` object or a plain header record. */
type HeaderSource = { get(name: string): string | null } | Record<string, unknown>;

/**
 * Classifies an error thrown by an SDK call. Duck-typed rather than `instanceof`, so the SDKs stay
 * lazily loaded and the same code serves all three (OpenAI and Anthropic share the Stainless error
 * classes; Ollama's `ResponseError` carries `status_code`, and its provider attaches `headers`).
 */
export function classifyFailure(error: unknown, timedOut: boolean): Failure {
  const err = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
  // Names, not `instanceof`: errors from fetch/undici may come from another realm (jest's vm, workers).
  const name = typeof err["name"] === "string" ? err["name"] : "";
  const ctorName = (error as object | null)?.constructor?.name ?? "";
  const message = safeMessage(error);

  if (timedOut || name === "TimeoutError" || ctorName === "APIConnectionTimeoutError") {
    return { kind: "timeout", status: undefined, retryable: true, retryAfterMs: undefined, message };
  }
  const status = typeof err["status"] === "number" ? err["status"] : typeof err["status_code"] === "number" ? err["status_code"] : undefined;
  if (status !== undefined) {
    return {
      kind: "http", status, retryable: isRetryableStatus(status),
      retryAfterMs: retryAfterFrom(err["headers"] as HeaderSource | undefined), message,
    };
  }
  // An error event inside a streamed reply (HTTP said 200): Anthropic's `event: error`, an OpenAI
  // `error` chunk. The provider's error type says whether it is transient.
  const type = typeof err["type"] === "string" ? err["type"] : undefined;
  if (type !== undefined && STREAM_ERROR_TYPES.has(type)) {
    return { kind: "stream-error", status: undefined, retryable: TRANSIENT_STREAM_ERRORS.has(type), retryAfterMs: undefined, message };
  }
  // Stainless wraps network failures in APIConnectionError; plain fetch (Ollama) throws TypeError
  // ("fetch failed", or "terminated" when the body is cut off mid-read).
  if (ctorName === "APIConnectionError" || (name === "TypeError" && /fetch failed|terminated|socket|network/i.test(`${message} ${causeText(err)}`))) {
    return { kind: "connection", status: undefined, retryable: true, retryAfterMs: undefined, message };
  }
  // A JSON body that does not parse is a transport accident (cut-off reply), not a caller error.
  if (name === "SyntaxError") {
    return { kind: "invalid-response", status: undefined, retryable: true, retryAfterMs: undefined, message };
  }
  return { kind: "other", status: undefined, retryable: false, retryAfterMs: undefined, message };
}

/** Longest wait a server may ask for before we stop honouring it literally. */
const MAX_RETRY_AFTER_MS = 60_000;

/** Reads `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date). */
export function retryAfterFrom(headers: HeaderSource | undefined, now = Date.now()): number | undefined {
  if (headers === undefined || headers === null) return undefined;
  const get = (key: string): string | undefined => {
    if (typeof (headers as { get?: unknown }).get === "function") {
      return (headers as { get(name: string): string | null }).get(key) ?? undefined;
    }
    const value = (headers as Record<string, unknown>)[key];
    return value === undefined || value === null ? undefined : String(value);
  };
  const ms = get("retry-after-ms");
  if (ms !== undefined && ms.trim() !== "" && Number.isFinite(Number(ms)) && Number(ms) >= 0) {
    return Math.min(Number(ms), MAX_RETRY_AFTER_MS);
  }
  const after = get("retry-after");
  if (after === undefined || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(after);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

/** Key-shaped tokens (`sk-…`, `sk-ant-…`, masked `sk-proj-****abcd`) that a server may echo back. */
const KEY_SHAPED = /\b(?:sk|pk|rk)-[A-Za-z0-9*_\-]{6,}/g;

/** An error's message, single-line, with secrets, key-shaped tokens and the credentials of any URL in it masked. */
function safeMessage(error: unknown): string {
  const message = typeof error === "object" && error !== null ? (error as { message?: unknown }).message : undefined;
  const raw = typeof message === "string" ? message : typeof error === "string" ? error : String(error);
  return scrub(raw);
}

function scrub(text: string): string {
  return redactError(text).replace(KEY_SHAPED, "[REDACTED]").replace(/\s+/g, " ").trim().slice(0, 500);
}

function causeText(error: Record<string, unknown>): string {
  const cause = error["cause"] as Record<string, unknown> | undefined;
  if (typeof cause !== "object" || cause === null) return "";
  return `${String(cause["name"] ?? "")} ${String(cause["message"] ?? "")} ${String(cause["code"] ?? "")}`;
}
