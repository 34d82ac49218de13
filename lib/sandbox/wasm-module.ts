/** Loading QuickJS's WebAssembly module with a hard memory cap (lazily: importing typelm stays cheap). */
import type { QuickJSWASMModule } from "quickjs-emscripten";

export interface LoadedModule {
  module: QuickJSWASMModule;
  /** Set once the guest asked for more memory than the cap: the module is then replaced after the run. */
  memory: { exhausted: boolean };
}

const WASM_PAGE = 64 * 1024;
/** The build's own initial memory (16 MiB): static data, the C stack and the first heap. */
const INITIAL_PAGES = 256;

/** The slice of the WebAssembly API used here (the project's `lib` setting has no DOM types). */
interface WasmMemory {
  grow(delta: number): number;
}
const wasm = (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => WasmMemory } })
  .WebAssembly;

/**
 * A module whose WebAssembly memory cannot grow past the guest limit. QuickJS's own limit
 * (`setMemoryLimit`) counts only a few bytes per block in this build, so many large blocks (typed
 * arrays, long strings) slip past it; a capped linear memory makes such a bomb fail with an
 * ordinary "out of memory" instead of growing the host's memory by gigabytes.
 */
export async function loadModule(memoryLimitBytes: number): Promise<LoadedModule> {
  const { RELEASE_SYNC, newQuickJSWASMModuleFromVariant, newVariant } = await import("quickjs-emscripten");
  const maximum = INITIAL_PAGES + Math.ceil(memoryLimitBytes / WASM_PAGE);
  const wasmMemory = new wasm.Memory({ initial: INITIAL_PAGES, maximum });
  const memory = { exhausted: false };
  // An allocation that fails inside a promise job only rejects a promise nobody watches; a failed
  // grow is the one signal that always reaches the host.
  const grow = wasmMemory.grow.bind(wasmMemory);
  wasmMemory.grow = (delta: number) => {
    try {
      return grow(delta);
    } catch (error) {
      memory.exhausted = true;
      throw error;
    }
  };
  // Library code never prints, not even Emscripten's abort notes (`print`/`printErr` are untyped there).
  const silent = () => undefined;
  const emscriptenModule = { print: silent, printErr: silent } as Record<string, unknown>;
  const variant = newVariant(RELEASE_SYNC, { wasmMemory: wasmMemory as never, emscriptenModule });
  return { module: await newQuickJSWASMModuleFromVariant(variant), memory };
}

