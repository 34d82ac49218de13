/**
 * Runs model-written JavaScript in QuickJS compiled to WebAssembly: the only globals are the ES
 * built-ins, `console` and the tools you pass. No require, process, fetch, file system or import().
 *
 * Choices, and why:
 * - Code is evaluated as a global script with QuickJS's JS_EVAL_FLAG_ASYNC, so top-level `await`
 *   works, the completion value of the last statement is the result, and top-level `const`/`let`/
 *   `function` declarations persist into later `run` calls of the same sandbox.
 * - Tools are plain host functions that return a guest Promise (`await lookup({ id: 1 })`). The
 *   asyncify variant's "asyncified" functions were tried and rejected: a call made after the first
 *   `await` runs inside the synchronous job queue and never completes. Promise-returning functions
 *   work anywhere (in `.then` callbacks, in `Promise.all`), so the plain WASM build is used.
 * - Memory is capped twice: QuickJS's allocation limit, and a WebAssembly memory that cannot grow
 *   past it (see `loadModule`).
 * - Each sandbox owns its WASM module: a host-side failure (TOOLCHAIN.md §7: V8 stack overflow,
 *   a WASM abort) poisons the whole module, and then only this sandbox is rebuilt.
 * - After an out-of-memory error, or a time limit hit with guest jobs still queued, the guest state
 *   cannot be trusted (a full heap, a job that would run into the next call), so the runtime is
 *   rebuilt and the error says that earlier state was lost.
 */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten";
import { TypelmError, preview } from "../errors.js";
import { type LoadedModule, loadModule } from "./wasm-module.js";
import { OutputBuffer } from "./output.js";
import { type ResolvedSandboxOptions, type SandboxOptions, type SandboxTool, resolveSandboxOptions } from "./options.js";
import { WRITE_FUNCTION, preludeSource } from "./prelude.js";

export type { SandboxOptions, SandboxTool } from "./options.js";

export interface SandboxResult {
  /** Captured console text (log, info, warn, error, debug), one line per call. */
  output: string;
  /** Completion value of the script (JSON-like copy), or undefined on error. */
  result: unknown;
  /** What went wrong, e.g. "ReferenceError: 'x' is not defined (line 1)"; null on success. */
  error: string | null;
}

/** QuickJS 2025-09 flag: top-level await in a global script; the eval returns a promise of `{ value }`. */
const JS_EVAL_FLAG_ASYNC = 1 << 7;
const FILENAME = "sandbox.js";

/** What must be rebuilt after a run: nothing, the runtime (queued jobs), or the module (memory exhausted). */
type Reset = "none" | "runtime" | "module";

interface Vm {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  /** The prelude's `{ encode, decode }` helper object. */
  helpers: QuickJSHandle;
}

interface PendingCall {
  vm: Vm;
  deferred: QuickJSDeferredPromise;
  done: Promise<void>;
}

/** Thrown inside `run` to end it early with a guest-facing message; `reset` asks for a fresh guest. */
class RunStopped extends Error {
  constructor(message: string, readonly reset: Reset = "none") {
    super(message);
  }
}

export class Sandbox {
  private loaded: LoadedModule | null = null;
  private vm: Vm | null = null;
  private deadline = 0;
  private interrupted = false;
  private output = new OutputBuffer(0);
  private readonly pending = new Set<PendingCall>();
  private queue: Promise<unknown> = Promise.resolve();
  private running = false;
  private disposed = false;

  private constructor(private readonly options: ResolvedSandboxOptions) {}

  /** Loads QuickJS (lazily, so importing typelm stays cheap) and prepares an empty guest. */
  static async create(options: SandboxOptions = {}): Promise<Sandbox> {
    const sandbox = new Sandbox(resolveSandboxOptions(options));
    await sandbox.rebuild();
    return sandbox;
  }

  /**
   * Runs `code` and reports what happened. Never throws for anything the code does: errors,
   * time and memory limits come back in `error`. Calls on one sandbox run one after another.
   */
  run(code: string): Promise<SandboxResult> {
    if (this.disposed) return Promise.reject(new TypelmError("Sandbox.run: this sandbox was disposed"));
    const job = this.queue.then(() => this.runNow(String(code)));
    this.queue = job.catch(() => undefined);
    return job;
  }

  /** Frees the guest. Safe to call twice; a run in progress finishes first. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (!this.running) this.teardown();
  }

  private async runNow(code: string): Promise<SandboxResult> {
    this.running = true;
    this.output = new OutputBuffer(this.options.maxOutputChars);
    this.interrupted = false;
    this.deadline = Date.now() + this.options.timeoutMs;
    let result: unknown;
    let error: string | null = null;
    let reset: Reset = "none";
    try {
      if (!this.vm) await this.rebuild();
      result = await this.execute(code);
    } catch (failure) {
      if (failure instanceof RunStopped) {
        error = failure.message;
        reset = failure.reset;
      } else {
        // A host-side failure: the module may be corrupt, so start over from a fresh one.
        this.abandonPending();
        this.dropModule();
        error = `sandbox failure: ${failure instanceof Error ? failure.message : preview(failure)}; the sandbox was reset and earlier state is lost`;
      }
    } finally {
      this.abandonPending();
      this.deadline = 0;
      this.running = false;
    }
    if (this.loaded?.memory.exhausted) {
      error = `${this.outOfMemoryMessage()}; the sandbox was reset and earlier state is lost`;
      reset = "module";
    }
    const output = this.output.toString();
    // QuickJS can leak objects on its out-of-memory paths, and freeing such a runtime aborts the
    // module (TOOLCHAIN.md §7), so an exhausted module is dropped without disposing anything.
    if (reset === "module") this.dropModule();
    // Only now are all of the run's handles disposed, so the runtime can be freed safely.
    if (this.disposed || reset === "runtime") this.teardown();
    if (!this.disposed && !this.vm) await this.rebuild().catch(() => this.dropModule());
    return { output, result: error === null ? result : undefined, error };
  }

  /** Evaluates, then pumps guest jobs and tool calls until the script's promise settles. */
  private async execute(code: string): Promise<unknown> {
    const vm = this.vm!;
    const { context, runtime } = vm;
    const evaluated = context.evalCode(code, FILENAME, JS_EVAL_FLAG_ASYNC);
    if (evaluated.error) throw this.stop(vm, evaluated.error);
    const promise = evaluated.value;
    try {
      for (;;) {
        const jobs = runtime.executePendingJobs();
        if (jobs.error) throw this.stop(vm, jobs.error);
        // QuickJS turns an interrupt inside a promise job into a rejection nobody sees, not a job error.
        if (this.interrupted) throw this.timeLimitStop(vm);
        const state = context.getPromiseState(promise);
        if (state.type === "rejected") throw this.stop(vm, state.error);
        if (state.type === "fulfilled") {
          try {
            return this.completionValue(vm, state.value);
          } finally {
            if (!state.notAPromise) state.value.dispose();
          }
        }
        if (this.pending.size === 0) {
          throw new RunStopped("the code awaited a promise that can never settle (no tool call or job is pending)");
        }
        await this.waitForToolCall();
        if (this.disposed) throw new RunStopped("the sandbox was disposed during the run");
      }
    } finally {
      if (promise.alive) promise.dispose();
    }
  }

  private completionValue(vm: Vm, wrapper: QuickJSHandle): unknown {
    if (vm.context.typeof(wrapper) !== "object") return this.toHost(vm, wrapper);
    const value = vm.context.getProp(wrapper, "value");
    try {
      return this.toHost(vm, value);
    } finally {
      value.dispose();
    }
  }

  /** Waits for the next tool call to settle, or for the time limit. */
  private async waitForToolCall(): Promise<void> {
    const remaining = this.deadline - Date.now();
    if (remaining <= 0) throw new RunStopped(this.timeLimitMessage());
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => resolve("expired"), remaining);
    });
    try {
      const winner = await Promise.race([expired, ...[...this.pending].map((call) => call.done)]);
      if (winner === "expired") throw new RunStopped(`${this.timeLimitMessage()} while waiting for a tool call`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Turns a guest exception into the run's error message, resetting the guest when its state is unsafe. */
  private stop(vm: Vm, errorHandle: QuickJSHandle): RunStopped {
    let message = "";
    try {
      if (!this.interrupted) message = this.describeError(vm, errorHandle);
    } finally {
      errorHandle.dispose();
    }
    // Checked after describing too: a getter on the thrown value may have run out the clock.
    if (this.interrupted) return this.timeLimitStop(vm);
    if (!message.startsWith("out of memory")) return new RunStopped(message);
    return new RunStopped(`${message}; the sandbox was reset and earlier state is lost`, "module");
  }

  private timeLimitStop(vm: Vm): RunStopped {
    if (!vm.runtime.hasPendingJob()) return new RunStopped(this.timeLimitMessage());
    return new RunStopped(`${this.timeLimitMessage()}; the sandbox was reset and earlier state is lost`, "runtime");
  }

  private timeLimitMessage(): string {
    return `interrupted: time limit of ${this.options.timeoutMs} ms exceeded`;
  }

  private describeError(vm: Vm, handle: QuickJSHandle): string {
    const { context } = vm;
    let name: string | undefined;
    let message: string | undefined;
    let stack: string | undefined;
    try {
      if (context.typeof(handle) === "object") {
        name = this.readString(vm, handle, "name");
        message = this.readString(vm, handle, "message");
        stack = this.readString(vm, handle, "stack");
      }
    } catch {
      // Reading a property can run a guest getter; if that fails too, fall through to the raw value.
    }
    if (name === undefined || message === undefined) {
      // QuickJS may throw `null` when it cannot even allocate the error object.
      if (this.loaded?.memory.exhausted) return this.outOfMemoryMessage();
      try {
        return `Uncaught ${preview(this.toHost(vm, handle), 500)}`;
      } catch {
        return "Uncaught exception (its value could not be read)";
      }
    }
    if (name === "InternalError" && message === "out of memory") return this.outOfMemoryMessage();
    if (name === "InternalError" && message === "stack overflow") {
      return `stack overflow: call stack limit of ${this.options.maxStackBytes} bytes exceeded (unbounded recursion?)`;
    }
    if (name === "InternalError" && message === "interrupted") return this.timeLimitMessage();
    const line = stack && new RegExp(`${FILENAME.replace(".", "\\.")}:(\\d+)`).exec(stack);
    return `${name}: ${message}${line ? ` (line ${line[1]})` : ""}`;
  }

  private outOfMemoryMessage(): string {
    return `out of memory: memory limit of ${this.options.memoryLimitBytes} bytes exceeded`;
  }

  private readString(vm: Vm, object: QuickJSHandle, key: string): string | undefined {
    const value = vm.context.getProp(object, key);
    try {
      return vm.context.typeof(value) === "string" ? vm.context.getString(value) : undefined;
    } finally {
      value.dispose();
    }
  }

  /** Copies a guest value out as JSON-like data (see the prelude's `encode`). */
  private toHost(vm: Vm, handle: QuickJSHandle): unknown {
    const { context } = vm;
    const encode = context.getProp(vm.helpers, "encode");
    const encoded = context.callFunction(encode, vm.helpers, handle);
    encode.dispose();
    if (encoded.error) {
      encoded.error.dispose();
      throw new RunStopped(this.interrupted ? this.timeLimitMessage() : "a value could not be copied out of the sandbox");
    }
    const text = encoded.value.consume((h) => context.getString(h));
    const tagged = JSON.parse(text) as { v?: unknown; big?: string };
    return tagged.big !== undefined ? BigInt(tagged.big) : tagged.v;
  }

  /** Copies a host value into the guest through JSON; the caller disposes the handle. */
  private toGuest(vm: Vm, value: unknown): QuickJSHandle {
    const { context } = vm;
    let text: string | undefined;
    try {
      text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
    } catch {
      text = JSON.stringify(String(value));
    }
    if (text === undefined) return context.undefined;
    const decode = context.getProp(vm.helpers, "decode");
    const argument = context.newString(text);
    const decoded = context.callFunction(decode, vm.helpers, argument);
    decode.dispose();
    argument.dispose();
    return context.unwrapResult(decoded);
  }

  /** Guest side of a tool call: returns a guest promise that settles when the host function does. */
  private startToolCall(vm: Vm, name: string, fn: SandboxTool, args: QuickJSHandle[]): QuickJSHandle {
    const input = args.length === 0 ? undefined : this.toHost(vm, args[0]!);
    const deferred = vm.context.newPromise();
    const call: PendingCall = { vm, deferred, done: Promise.resolve() };
    call.done = Promise.resolve()
      .then(() => fn(input))
      .then(
        (value) => this.settleToolCall(name, call, { ok: true, value }),
        (error: unknown) => this.settleToolCall(name, call, { ok: false, error }),
      );
    this.pending.add(call);
    return deferred.handle;
  }

  private settleToolCall(
    name: string,
    call: PendingCall,
    outcome: { ok: true; value: unknown } | { ok: false; error: unknown },
  ): void {
    // A call that outlived its run (or its guest) is dropped: its guest promise never settles.
    if (!this.pending.delete(call) || call.vm !== this.vm) return;
    const { context } = call.vm;
    let failure: string | null = null;
    if (outcome.ok) {
      try {
        const handle = this.toGuest(call.vm, outcome.value);
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

  private abandonPending(): void {
    for (const call of this.pending) {
      try {
        call.deferred.dispose();
      } catch {
        // The guest is being torn down anyway.
      }
    }
    this.pending.clear();
  }

  /** Fresh runtime and context (and a fresh module if the old one is gone). */
  private async rebuild(): Promise<void> {
    this.teardown();
    if (!this.loaded) this.loaded = await loadModule(this.options.memoryLimitBytes);
    const { memory } = this.loaded;
    const runtime = this.loaded.module.newRuntime();
    runtime.setMemoryLimit(this.options.memoryLimitBytes);
    runtime.setMaxStackSize(this.options.maxStackBytes);
    runtime.setInterruptHandler(() => {
      // Stop a guest that keeps allocating (and catching) after memory ran out.
      if (memory.exhausted) return true;
      if (Date.now() <= this.deadline) return false;
      this.interrupted = true;
      return true;
    });
    const context = runtime.newContext();
    const vm: Vm = { runtime, context, helpers: context.undefined };
    const write = context.newFunction(WRITE_FUNCTION, (_level, text) => {
      if (!this.output.full && text) this.output.write(context.getString(text));
    });
    context.setProp(context.global, WRITE_FUNCTION, write);
    write.dispose();
    for (const [name, fn] of Object.entries(this.options.tools)) {
      const handle = context.newFunction(name, (...args) => this.startToolCall(vm, name, fn, args));
      context.setProp(context.global, name, handle);
      handle.dispose();
    }
    const savedDeadline = this.deadline;
    this.deadline = Date.now() + 5000;
    try {
      vm.helpers = context.unwrapResult(context.evalCode(preludeSource(this.options.maxOutputChars), "prelude.js"));
    } finally {
      this.deadline = savedDeadline;
    }
    this.vm = vm;
  }

  /** Disposes every handle, then the context and runtime; if QuickJS objects, the module is dropped. */
  private teardown(): void {
    const vm = this.vm;
    this.vm = null;
    if (!vm) return;
    try {
      if (vm.helpers.alive) vm.helpers.dispose();
      vm.context.dispose();
      vm.runtime.dispose();
    } catch {
      this.dropModule();
    }
  }

  /** Forgets the module without disposing anything in it (TOOLCHAIN.md §7: disposing can abort). */
  private dropModule(): void {
    this.vm = null;
    this.loaded = null;
  }
}
