import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { builtin } from "../../load-sync.js";
import type { RawBatchResult, UnreadableResultLine } from "./provider.js";

/** The custom id at the start of a line that does not parse (a line cut off keeps its beginning). */
const CUSTOM_ID_AT_START = /"custom_id"\s*:\s*"([a-zA-Z0-9_-]{1,64})"/;

/**
 * Reads a batch's results (JSON Lines) from a web stream, one line at a time: a line that parses and
 * `read` turns into a result goes to `each`; any other (not JSON, no custom id, an unknown shape) goes
 * to `unreadable` with its 1-based line number and the reason, and the reading goes on, so one broken
 * line costs one request, not the file.
 */
export async function readResultLines(
  body: WebReadableStream | ReadableStream, file: string, read: (value: unknown) => RawBatchResult,
  each: (result: RawBatchResult) => void, unreadable: (line: UnreadableResultLine) => void,
): Promise<void> {
  const lines = builtin("node:readline").createInterface({ input: builtin("node:stream").Readable.fromWeb(body as WebReadableStream), crlfDelay: Infinity });
  let number = 0;
  for await (const text of lines) {
    number++;
    if (text.trim() === "") continue;
    let result: RawBatchResult;
    try {
      result = read(JSON.parse(text));
    } catch (error) {
      const customId = CUSTOM_ID_AT_START.exec(text)?.[1];
      unreadable({ file, line: number, reason: error instanceof Error ? error.message : String(error), ...(customId === undefined ? {} : { customId }) });
      continue;
    }
    each(result);
  }
}
