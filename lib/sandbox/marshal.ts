/**
 * Copying values across the guest boundary, always as JSON text through the prelude's helpers: the
 * host never walks guest objects itself, so getters, proxies and cycles only run inside the guest.
 */
import type { QuickJSHandle } from "quickjs-emscripten-core";
import type { Guest } from "./guest.js";
import { RunStopped } from "./run-state.js";

/** Copies a guest value out as JSON-like data (see the prelude's `encode`). */
export function toHost(guest: Guest, handle: QuickJSHandle): unknown {
  const { context } = guest;
  const encode = context.getProp(guest.helpers, "encode");
  const encoded = context.callFunction(encode, guest.helpers, handle);
  encode.dispose();
  if (encoded.error) {
    encoded.error.dispose();
    throw new RunStopped("a value could not be copied out of the sandbox");
  }
  const text = encoded.value.consume((h) => context.getString(h));
  const tagged = JSON.parse(text) as { v?: unknown; big?: string };
  return tagged.big !== undefined ? BigInt(tagged.big) : tagged.v;
}

/** Copies a host value into the guest through JSON; the caller disposes the handle. */
export function toGuest(guest: Guest, value: unknown): QuickJSHandle {
  const { context } = guest;
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  } catch {
    text = JSON.stringify(String(value));
  }
  if (text === undefined) return context.undefined;
  const decode = context.getProp(guest.helpers, "decode");
  const argument = context.newString(text);
  const decoded = context.callFunction(decode, guest.helpers, argument);
  decode.dispose();
  argument.dispose();
  return context.unwrapResult(decoded);
}

/** A string property of a guest object, without copying the object. */
export function readString(guest: Guest, object: QuickJSHandle, key: string): string | undefined {
  const value = guest.context.getProp(object, key);
  try {
    return guest.context.typeof(value) === "string" ? guest.context.getString(value) : undefined;
  } finally {
    value.dispose();
  }
}
