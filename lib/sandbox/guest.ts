/** A guest: one QuickJS runtime and context with the prelude, console and tools installed. */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule, VmCallResult } from "quickjs-emscripten-core";
import type { ResolvedSandboxOptions, SandboxTool } from "./options.js";
import { WRITE_FUNCTION, preludeSource } from "./prelude.js";
import { RunState } from "./run-state.js";

export interface Guest {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  /** The prelude's `{ encode, decode, outputFull }` helper object. */
  helpers: QuickJSHandle;
}

export interface GuestHooks {
  /** The run in progress (its limits, its output), read each time the guest needs it. */
  run(): RunState;
  /** Set once the module's memory could not grow: the guest is stopped at once. */
  memory: { exhausted: boolean };
  /** A guest call of tool `name`: the guest promise, or a guest error to throw. */
  callTool(guest: Guest, name: string, fn: SandboxTool, args: QuickJSHandle[]): QuickJSHandle | VmCallResult<QuickJSHandle>;
}

/** Time the prelude may take in a fresh guest (it is ours, but the interrupt handler is already on). */
const PRELUDE_TIMEOUT_MS = 5000;

export function createGuest(module: QuickJSWASMModule, options: ResolvedSandboxOptions, hooks: GuestHooks): Guest {
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(options.memoryLimitBytes);
  runtime.setMaxStackSize(options.maxStackBytes);
  let preparing: RunState | null = new RunState(options, Date.now() + PRELUDE_TIMEOUT_MS);
  // Stop a guest that keeps allocating (and catching) after memory ran out.
  runtime.setInterruptHandler(() => hooks.memory.exhausted || (preparing ?? hooks.run()).shouldInterrupt());
  const context = runtime.newContext();
  const guest: Guest = { runtime, context, helpers: context.undefined };
  const write = context.newFunction(WRITE_FUNCTION, (_level, text) => {
    const output = hooks.run().output;
    if (!output.full && text) output.write(context.getString(text));
    // Once the run's output is full the guest's console stops formatting and calling here (see the prelude).
    return output.full ? context.true : undefined;
  });
  context.setProp(context.global, WRITE_FUNCTION, write);
  write.dispose();
  for (const [name, fn] of Object.entries(options.tools)) {
    const handle = context.newFunction(name, (...args) => hooks.callTool(guest, name, fn, args));
    context.setProp(context.global, name, handle);
    handle.dispose();
  }
  try {
    guest.helpers = context.unwrapResult(context.evalCode(preludeSource(options.maxOutputChars), "prelude.js"));
  } finally {
    preparing = null;
  }
  return guest;
}

/** Disposes every handle, then the context and runtime. Throws if QuickJS objects (the module is then unsafe). */
export function disposeGuest(guest: Guest): void {
  if (guest.helpers.alive) guest.helpers.dispose();
  guest.context.dispose();
  guest.runtime.dispose();
}
