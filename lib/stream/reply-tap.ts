/**
 * The hook a predictor calls around its model call when it runs inside a stream: it reads the
 * reply as it arrives (JSON or TOON, see `json-reply.ts` and `toon-reply.ts`), converts each
 * finished field with the converter `call()` uses for that field, and sends `field` and `partial`
 * events to the stream. A field that fails conversion throws its `OutputError` from `onDelta`,
 * which makes the model abort the request: the stream fails at once, not at the end of the reply.
 * Fields not reported while streaming (a reply in a form read only at the end) are reported from
 * the final prediction, so every output field gets exactly one `field` event.
 */
import type { z } from "zod";
import { converterFor } from "../convert/output.js";
import { joinPath } from "../convert/path.js";
import type { ChatOptions } from "../lm/types.js";
import type { CompiledSignature } from "../signature/compile.js";
import { currentSink } from "./context.js";
import { replyReaders } from "./readers.js";

/** What a predictor uses while streaming: the options for its `chat`, and `finish` with the converted outputs. */
export interface ReplyTap {
  chatOptions: ChatOptions;
  finish(outputs: Record<string, unknown>): void;
}

/**
 * The tap for one model call of `predictor`, or undefined outside a stream. `format` is how the
 * reply is written: "json" (Enhanced Prompting or native structured output) or "toon".
 */
export function replyTap(predictor: object, sig: CompiledSignature, format: "json" | "toon"): ReplyTap | undefined {
  const sink = currentSink();
  if (sink === undefined) return undefined;
  const path = sink.pathOf(predictor, sig.name);
  const shape = sig.outputShape;
  const emitted = new Map<string, unknown>();
  let raw = "";
  const onMember = (name: string, value: unknown): void => {
    if (!reader.confident || emitted.has(name) || !Object.prototype.hasOwnProperty.call(shape, name)) return;
    // The converter `convertOutputs` applies to this field, at the same path: same value, same error.
    const converted = converterFor(shape[name] as z.ZodType)(value, joinPath("", name), raw);
    emitted.set(name, converted);
    sink.push({ type: "field", name, value: converted, path });
  };
  // Loaded by `openStream` before its run started, which is the only way a sink is present.
  const readers = replyReaders();
  if (readers === undefined) throw new Error("typelm: the streaming reply readers were not loaded before the stream started");
  const reader = format === "toon" ? new readers.ToonReplyReader(onMember) : new readers.JsonReplyReader(onMember);
  const build = (): unknown => {
    const read = reader.snapshot();
    // A new object each time (the reader copies what it still changes); finished fields converted.
    const partial: Record<string, unknown> = read !== null && typeof read === "object" && !Array.isArray(read) ? (read as Record<string, unknown>) : {};
    for (const [name, value] of emitted) partial[name] = value;
    return partial;
  };
  // One lazy event for the whole call: the stream keeps it only at the end of its queue, building it
  // when read or when something is queued behind it, so pushing it again per chunk allocates nothing.
  const partial = { type: "partial" as const, path, build };
  const onDelta = (text: string): void => {
    raw += text;
    reader.push(text);
    if (reader.takeChanged() && reader.confident) sink.push(partial);
  };
  return {
    chatOptions: { signal: sink.signal, onDelta },
    finish(outputs) {
      for (const [name, value] of Object.entries(outputs)) {
        if (!emitted.has(name)) sink.push({ type: "field", name, value, path });
      }
    },
  };
}
