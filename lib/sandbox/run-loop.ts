/**
 * One run of guest code: evaluate it as a global script with top-level `await`, then pump guest
 * jobs and tool calls until the script's promise settles, the time runs out or a limit is hit.
 */
import type { QuickJSHandle } from "quickjs-emscripten-core";
import { FILENAME, describeError } from "./describe-error.js";
import type { Guest } from "./guest.js";
import { toHost } from "./marshal.js";
import { LOST_STATE, RunStopped, type RunState } from "./run-state.js";
import type { ToolCalls } from "./tool-calls.js";

/**
 * QuickJS 2025-09 flag: top-level await in a global script; the eval returns a promise of `{ value }`.
 * Top-level `const`/`let`/`function` declarations persist into later runs of the same guest.
 */
const JS_EVAL_FLAG_ASYNC = 1 << 7;

export interface RunContext {
  guest: Guest;
  run: RunState;
  calls: ToolCalls;
  memory: { exhausted: boolean };
  /** True once the sandbox was disposed (checked after each wait). */
  disposed(): boolean;
}

/** The script's completion value; anything the code does wrong is thrown as `RunStopped`. */
export async function execute(code: string, ctx: RunContext): Promise<unknown> {
  const { guest, run, calls } = ctx;
  const { context, runtime } = guest;
  // A new run's output is empty: the guest's console writes again (it stops once the output is full).
  context.setProp(guest.helpers, "outputFull", context.false);
  const evaluated = context.evalCode(code, FILENAME, JS_EVAL_FLAG_ASYNC);
  if (evaluated.error) throw stop(evaluated.error, ctx);
  const promise = evaluated.value;
  try {
    for (;;) {
      const jobs = runtime.executePendingJobs();
      if (jobs.error) throw stop(jobs.error, ctx);
      // QuickJS turns an interrupt inside a promise job into a rejection nobody sees, not a job error.
      if (run.interrupted) throw interruptStop(ctx);
      const state = context.getPromiseState(promise);
      if (state.type === "rejected") throw stop(state.error, ctx);
      if (state.type === "fulfilled") {
        try {
          return completionValue(state.value, ctx);
        } finally {
          if (!state.notAPromise) state.value.dispose();
        }
      }
      if (calls.size === 0) {
        throw new RunStopped("the code awaited a promise that can never settle (no tool call or job is pending)");
      }
      await calls.waitForAny(run);
      if (ctx.disposed()) throw new RunStopped("the sandbox was disposed during the run");
    }
  } finally {
    if (promise.alive) promise.dispose();
  }
}

function completionValue(wrapper: QuickJSHandle, ctx: RunContext): unknown {
  const { context } = ctx.guest;
  const value = context.typeof(wrapper) === "object" ? context.getProp(wrapper, "value") : wrapper;
  try {
    return toHost(ctx.guest, value);
  } catch (failure) {
    // Copying runs guest code (getters, toJSON), which may have hit a limit.
    throw ctx.run.interrupted ? interruptStop(ctx) : failure;
  } finally {
    if (value !== wrapper) value.dispose();
  }
}

/** Turns a guest exception into the run's error, resetting the guest when its state is unsafe. */
function stop(errorHandle: QuickJSHandle, ctx: RunContext): RunStopped {
  let message = "";
  try {
    if (!ctx.run.interrupted) message = describeError(ctx.guest, errorHandle, ctx.run, ctx.memory);
  } finally {
    errorHandle.dispose();
  }
  // Checked after describing too: a getter on the thrown value may have run out the clock.
  if (ctx.run.interrupted) return interruptStop(ctx);
  if (!message.startsWith("out of memory")) return new RunStopped(message);
  return new RunStopped(`${message}; ${LOST_STATE}`, "module");
}

/** An interrupted guest with jobs still queued would run them in the next call: it is replaced. */
function interruptStop({ guest, run }: RunContext): RunStopped {
  if (!guest.runtime.hasPendingJob()) return new RunStopped(run.interruptMessage());
  return new RunStopped(`${run.interruptMessage()}; ${LOST_STATE}`, "runtime");
}
