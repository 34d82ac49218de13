/** A guest exception as the one-line message a run reports: type, message and line. */
import type { QuickJSHandle } from "quickjs-emscripten-core";
import { preview } from "../errors.js";
import type { Guest } from "./guest.js";
import { readString, toHost } from "./marshal.js";
import type { RunState } from "./run-state.js";

export const FILENAME = "sandbox.js";
const LINE = new RegExp(`${FILENAME.replace(".", "\\.")}:(\\d+)`);

/** E.g. "ReferenceError: 'x' is not defined (line 1)"; QuickJS's internal errors get the limit they hit. */
export function describeError(guest: Guest, handle: QuickJSHandle, run: RunState, memory: { exhausted: boolean }): string {
  const { context } = guest;
  let name: string | undefined;
  let message: string | undefined;
  let stack: string | undefined;
  try {
    if (context.typeof(handle) === "object") {
      name = readString(guest, handle, "name");
      message = readString(guest, handle, "message");
      stack = readString(guest, handle, "stack");
    }
  } catch {
    // Reading a property can run a guest getter; if that fails too, fall through to the raw value.
  }
  if (name === undefined || message === undefined) {
    // QuickJS may throw `null` when it cannot even allocate the error object.
    if (memory.exhausted) return run.outOfMemoryMessage();
    try {
      return `Uncaught ${preview(toHost(guest, handle), 500)}`;
    } catch {
      return "Uncaught exception (its value could not be read)";
    }
  }
  if (name === "InternalError" && message === "out of memory") return run.outOfMemoryMessage();
  if (name === "InternalError" && message === "stack overflow") {
    return `stack overflow: call stack limit of ${run.options.maxStackBytes} bytes exceeded (unbounded recursion?)`;
  }
  if (name === "InternalError" && message === "interrupted") return run.interruptMessage();
  const line = stack && LINE.exec(stack);
  return `${name}: ${message}${line ? ` (line ${line[1]})` : ""}`;
}
