/**
 * Host tools as guest functions. A guest call starts the host function and gets a guest promise at
 * once, settled when the host function settles; the run loop waits on the calls in flight.
 * Promise-returning functions work anywhere (in `.then` callbacks, in `Promise.all`), unlike the
 * asyncify variant's "asyncified" functions, which never complete when called after the first `await`.
 */
import type { QuickJSDeferredPromise, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import { preview } from "../errors.js";
import type { Guest } from "./guest.js";
import { toGuest, toHost } from "./marshal.js";
import type { SandboxTool } from "./options.js";
import { RunStopped, type RunState } from "./run-state.js";

interface PendingCall {
  guest: Guest;
  deferred: QuickJSDeferredPromise;
  done: Promise<void>;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class ToolCalls {
  readonly #pending = new Set<PendingCall>();

  /** `liveGuest` is the sandbox's current guest: a call that outlived it is dropped when it settles. */
  constructor(private readonly liveGuest: () => Guest | null) {}

  get size(): number {
    return this.#pending.size;
  }

  /** Guest side of a call: counts it against the run's cap, then returns the guest promise. */
  start(run: RunState, guest: Guest, name: string, fn: SandboxTool, args: QuickJSHandle[]): QuickJSHandle | VmCallResult<QuickJSHandle> {
    if (!run.admitToolCall()) {
      return { error: guest.context.newError({ name: "ToolError", message: run.toolLimitMessage() }) };
    }
    const input = args.length === 0 ? undefined : toHost(guest, args[0]!);
    const deferred = guest.context.newPromise();
    const call: PendingCall = { guest, deferred, done: Promise.resolve() };
    call.done = Promise.resolve()
      .then(() => fn(input))
      .then(
        (value) => this.#settle(name, call, { ok: true, value }),
        (error: unknown) => this.#settle(name, call, { ok: false, error }),
      );
    this.#pending.add(call);
    return deferred.handle;
  }

  /** Waits for the next call to settle, or throws once `run`'s time is up. */
  async waitForAny(run: RunState): Promise<void> {
    const remaining = run.deadline - Date.now();
    if (remaining <= 0) throw new RunStopped(run.timeLimitMessage());
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => resolve("expired"), remaining);
    });
    try {
      const winner = await Promise.race([expired, ...[...this.#pending].map((call) => call.done)]);
      if (winner === "expired") throw new RunStopped(`${run.timeLimitMessage()} while waiting for a tool call`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Forgets every call in flight: their guest promises never settle, and late results are dropped. */
  abandon(): void {
    for (const call of this.#pending) {
      try {
        call.deferred.dispose();
      } catch {
        // The guest is being torn down anyway.
      }
    }
    this.#pending.clear();
  }

  #settle(name: string, call: PendingCall, outcome: Outcome): void {
    // A call that outlived its run (or its guest) is dropped: its guest promise never settles.
    if (!this.#pending.delete(call) || call.guest !== this.liveGuest()) return;
    const { context } = call.guest;
    let failure: string | null = null;
    if (outcome.ok) {
      try {
        const handle = toGuest(call.guest, outcome.value);
        call.deferred.resolve(handle);
        if (handle !== context.undefined) handle.dispose();
      } catch {
        failure = `the result of ${name} could not be copied into the sandbox`;
      }
    } else {
      failure = `${name} failed: ${outcome.error instanceof Error ? outcome.error.message : preview(outcome.error)}`;
    }
    if (failure !== null && call.deferred.alive) {
      const handle = context.newError({ name: "ToolError", message: failure });
      call.deferred.reject(handle);
      handle.dispose();
    }
    call.deferred.dispose();
  }
}
