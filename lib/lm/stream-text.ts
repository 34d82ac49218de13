// Small pieces every streamed call shares: the AbortError a call rejects with when its caller's
// signal aborts, and the replay of a whole reply as a stream of chunks (a cache hit, a test double).
import { builtin } from "../load-sync.js";

/**
 * The error a call rejects with when `signal` aborted: the signal's reason when it is already an
 * `AbortError`, else a new `AbortError` (`error.name === "AbortError"`) whose `cause` is the reason.
 */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const error = new DOMException("The operation was aborted", "AbortError");
  if (reason !== undefined) Object.defineProperty(error, "cause", { value: reason, configurable: true, writable: true });
  return error;
}

/**
 * Hands one piece of streamed text to the caller's `onDelta`; when `onDelta` throws (a field that
 * failed conversion), `abort` stops the provider request before the error goes on up.
 */
export function handOver(onDelta: (text: string) => void, piece: string, abort: () => void): void {
  try {
    onDelta(piece);
  } catch (error) {
    abort();
    throw error;
  }
}

/** Throws `abortError(signal)` when `signal` has aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

/** How a whole reply is handed out as a stream: characters per chunk, and a pause between chunks. */
export interface ChunkPacing {
  /** Characters per chunk (at least 1; a surrogate pair is never split). */
  chunkChars?: number;
  /** Milliseconds between two chunks (0: no pause, but the event loop turns between chunks, as with a network stream). */
  delayMs?: number;
}

/** Chunk size of a cached reply replayed as a stream. */
export const REPLAY_CHUNK_CHARS = 16;

/** `text` cut in chunks of `chunkChars` characters (the last may be shorter), never inside a surrogate pair. */
export function textChunks(text: string, chunkChars: number): string[] {
  const size = Math.max(1, Math.floor(chunkChars));
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

/**
 * Hands `text` to `onDelta` in chunks (see `ChunkPacing`), the event loop turning between two, stopping with an `AbortError` as soon as
 * `signal` aborts; what `onDelta` throws stops the replay and is thrown. An empty text hands nothing.
 */
export async function replayText(text: string, onDelta: (text: string) => void, pacing: ChunkPacing = {}, signal?: AbortSignal): Promise<void> {
  const delayMs = pacing.delayMs ?? 0;
  let first = true;
  for (const chunk of textChunks(text, pacing.chunkChars ?? REPLAY_CHUNK_CHARS)) {
    if (!first) {
      try {
        // A pause, or one turn of the event loop, so consumers see each chunk's effects (and may abort) before the next.
        if (delayMs > 0) await builtin("node:timers/promises").setTimeout(delayMs, undefined, signal === undefined ? undefined : { signal });
        else await new Promise<void>((resolve) => setImmediate(resolve));
      } catch (error) {
        if (signal?.aborted) throw abortError(signal);
        throw error;
      }
    }
    first = false;
    throwIfAborted(signal);
    onDelta(chunk);
  }
}
