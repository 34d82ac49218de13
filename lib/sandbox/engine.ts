// The sandbox itself, loaded by Sandbox.create (sandbox.ts) the first time a sandbox starts.
import { TypelmError, preview } from "../errors.js";
import { Instrumentation, spanned } from "../instrument/bus.js";
import { createGuest, disposeGuest, type Guest } from "./guest.js";
import { execute } from "./run-loop.js";
import { type ResolvedSandboxOptions, type SandboxOptions, resolveSandboxOptions } from "./options.js";
import { LOST_STATE, RunState, RunStopped, type Reset } from "./run-state.js";
import { ToolCalls } from "./tool-calls.js";
import { type LoadedModule, loadModule } from "./wasm-module.js";
import type { SandboxResult } from "./sandbox.js";



/** The sandbox behind `Sandbox` (see sandbox.ts for what it does). */
export class SandboxEngine {
  private loaded: LoadedModule | null = null;
  private guest: Guest | null = null;
  private current: RunState;
  private readonly calls = new ToolCalls(() => this.guest);
  private queue: Promise<unknown> = Promise.resolve();
  private running = false;
  private disposed = false;

  private constructor(private readonly options: ResolvedSandboxOptions) {
    this.current = new RunState(options, 0);
  }

  /** Loads QuickJS and prepares an empty guest. */
  static async create(options: SandboxOptions = {}): Promise<SandboxEngine> {
    const sandbox = new SandboxEngine(resolveSandboxOptions(options));
    await sandbox.rebuild();
    return sandbox;
  }

  /**
   * Runs `code` and reports what happened. Never throws for anything the code does: errors,
   * time, memory and tool-call limits come back in `error`. Calls on one sandbox run one after another.
   */
  run(code: string): Promise<SandboxResult> {
    if (this.disposed) return Promise.reject(new TypelmError("Sandbox.run: this sandbox was disposed"));
    // A `sandbox.run` span: tool calls the code makes nest inside it.
    const job = this.queue.then(() => spanned("sandbox.run", { codeChars: String(code).length }, () => this.runNow(String(code)),
      (r) => (r.error === null ? {} : { ok: false, error: r.error })));
    this.queue = job.catch(() => undefined);
    return job;
  }

  /** Frees the guest and its WebAssembly memory. Safe to call twice; a run in progress finishes first. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (!this.running) this.release();
  }

  /** One run, from a fresh `RunState` to a guest that is safe for the next run. */
  private async runNow(code: string): Promise<SandboxResult> {
    this.running = true;
    const run = (this.current = new RunState(this.options));
    let result: unknown;
    let error: string | null = null;
    let reset: Reset = "none";
    try {
      if (!this.guest) await this.rebuild();
      result = await execute(code, {
        guest: this.guest!, run, calls: this.calls, memory: this.loaded!.memory, disposed: () => this.disposed,
      });
    } catch (failure) {
      if (failure instanceof RunStopped) {
        error = failure.message;
        reset = failure.reset;
      } else {
        // A host-side failure: the instance may be corrupt, so start over from a fresh one.
        this.calls.abandon();
        this.dropModule("host failure");
        error = `sandbox failure: ${failure instanceof Error ? failure.message : preview(failure)}; ${LOST_STATE}`;
      }
    } finally {
      this.calls.abandon();
      run.deadline = 0;
      this.running = false;
    }
    if (this.loaded?.memory.exhausted) {
      error = `${run.outOfMemoryMessage()}; ${LOST_STATE}`;
      reset = "module";
    }
    // QuickJS can leak objects on its out-of-memory paths, and freeing such a runtime aborts the
    // instance, so an exhausted one is dropped without disposing anything.
    if (reset === "module") this.dropModule("out of memory");
    // Only now are all of the run's handles disposed, so the runtime can be freed safely.
    if (this.disposed) this.release();
    else if (reset === "runtime") this.teardown();
    if (!this.disposed && !this.guest) await this.rebuild().catch(() => this.dropModule("rebuild failed"));
    return { output: run.output.toString(), result: error === null ? result : undefined, error };
  }

  /** Fresh runtime and context (and a fresh instance if the old one is gone). */
  private async rebuild(): Promise<void> {
    this.teardown();
    if (!this.loaded) this.loaded = await loadModule(this.options.memoryLimitBytes);
    const loaded = this.loaded;
    this.guest = createGuest(loaded.module, this.options, {
      run: () => this.current,
      memory: loaded.memory,
      callTool: (guest, name, fn, args) => this.calls.start(this.current, guest, name, fn, args),
    });
  }

  /** After `dispose`: the guest, then the instance, so its memory goes even while the sandbox is referenced. */
  private release(): void {
    this.teardown();
    this.loaded = null;
  }

  /** Disposes the guest; if QuickJS objects (a leaked handle), the instance is dropped. */
  private teardown(): void {
    const guest = this.guest;
    this.guest = null;
    if (!guest) return;
    try {
      disposeGuest(guest);
    } catch (error) {
      this.dropModule("teardown failed", error);
    }
  }

  /**
   * Forgets the instance without disposing anything in it (after a host-side failure, disposing can abort it).
   * Reported as `sandbox.reset`: a guest lost with its state, and, when a teardown failed, a bug.
   */
  private dropModule(reason: string, error?: unknown): void {
    if (this.loaded !== null) {
      Instrumentation.emit("sandbox.reset", {
        reason, ...(error === undefined ? {} : { error: error instanceof Error ? error.message : preview(error) }),
      });
    }
    this.guest = null;
    this.loaded = null;
  }
}
