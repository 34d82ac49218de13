/**
 * Runs model-written JavaScript in QuickJS compiled to WebAssembly: the only globals are the ES
 * built-ins, `console` and the tools you pass. No require, process, fetch, file system or import().
 *
 * This file is the lifecycle: a queue of runs, and when to rebuild what. The run itself is in
 * `run-loop.ts`, tool plumbing in `tool-calls.ts`, copying values in `marshal.ts`, the guest in
 * `guest.ts`, and the WebAssembly module in `wasm-module.ts`.
 *
 * - Memory is capped twice: QuickJS's allocation limit, and a WebAssembly memory that cannot grow
 *   past it (see `loadModule`).
 * - Each sandbox owns its WebAssembly instance (the compiled code is shared by all): a host-side
 *   failure (a V8 stack overflow, a WASM abort) poisons the whole instance, and then
 *   only this sandbox gets a fresh one.
 * - After an out-of-memory error, or a limit hit with guest jobs still queued, the guest state cannot
 *   be trusted (a full heap, a job that would run into the next call), so it is rebuilt and the
 *   error says that earlier state was lost.
 */
import type { SandboxOptions } from "./options.js";
import type { SandboxEngine } from "./engine.js";

export type { SandboxOptions, SandboxTool } from "./options.js";

/** What `sandbox.run` resolves with: the console output, the script's completion value, and the error (null on success). */
export interface SandboxResult {
  /** Captured console text (log, info, warn, error, debug), one line per call. */
  output: string;
  /** Completion value of the script (JSON-like copy), or undefined on error. */
  result: unknown;
  /** What went wrong, e.g. "ReferenceError: 'x' is not defined (line 1)"; null on success. */
  error: string | null;
}

/** A QuickJS (WebAssembly) sandbox for model-written JavaScript, with limits on time, memory, stack, output and tool calls per run; create one with `Sandbox.create(options)`. */
export class Sandbox {
  private constructor(private readonly engine: SandboxEngine) {}

  /**
   * Loads QuickJS and the sandbox code (at the first call, so importing typelm stays cheap), checks the
   * options and prepares an empty guest.
   */
  static async create(options: SandboxOptions = {}): Promise<Sandbox> {
    const { SandboxEngine } = await import("./engine.js");
    return new Sandbox(await SandboxEngine.create(options));
  }

  /**
   * Runs `code` and reports what happened. Never throws for anything the code does: errors,
   * time, memory and tool-call limits come back in `error`. Calls on one sandbox run one after another.
   */
  run(code: string): Promise<SandboxResult> {
    return this.engine.run(code);
  }

  /** Frees the guest and its WebAssembly memory. Safe to call twice; a run in progress finishes first. */
  dispose(): void {
    this.engine.dispose();
  }
}
