/** Loading QuickJS's WebAssembly module with a hard memory cap (lazily: importing typelm stays cheap). */
import { createRequire } from "node:module";
import { builtin } from "../load-sync.js";
import type { QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core";

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
/** A compiled `WebAssembly.Module`: immutable code, instantiated any number of times. */
type CompiledWasm = object;
const wasm = (globalThis as unknown as {
  WebAssembly: {
    Memory: new (d: { initial: number; maximum: number }) => WasmMemory;
    compile(bytes: Uint8Array): Promise<CompiledWasm>;
  };
}).WebAssembly;

let compiled: Promise<CompiledWasm> | undefined;

/**
 * QuickJS's WebAssembly code (the RELEASE_SYNC build), compiled once per process. Each sandbox
 * still gets its own instance, with its own memory, runtime and context: only the read-only code is
 * shared, so a module dropped after a host-side failure (a V8 stack overflow, a WASM abort) is replaced by a fresh
 * instance without compiling again.
 */
function compiledQuickJS(): Promise<CompiledWasm> {
  if (compiled === undefined) {
    compiled = (async () => {
      // The build package is a direct dependency: its "./wasm" export is the .wasm file.
      const bytes = await builtin("node:fs/promises").readFile(createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm"));
      return wasm.compile(bytes);
    })();
    // A failed load (a missing file) is not remembered: the next sandbox tries again.
    compiled.catch(() => {
      compiled = undefined;
    });
  }
  return compiled;
}

/**
 * A module whose WebAssembly memory cannot grow past the guest limit. QuickJS's own limit
 * (`setMemoryLimit`) counts only a few bytes per block in this build, so many large blocks (typed
 * arrays, long strings) slip past it; a capped linear memory makes such a bomb fail with an
 * ordinary "out of memory" instead of growing the host's memory by gigabytes.
 */
export async function loadModule(memoryLimitBytes: number): Promise<LoadedModule> {
  const [{ newQuickJSWASMModuleFromVariant, newVariant }, build] = await Promise.all([
    import("quickjs-emscripten-core"),
    import("@jitl/quickjs-wasmfile-release-sync"),
  ]);
  // The build package declares its types as CommonJS (`exports.default`) but Node imports its ES
  // module, whose default export is the variant itself: take the variant either way.
  const exported = build.default as unknown as QuickJSSyncVariant | { default: QuickJSSyncVariant };
  const RELEASE_SYNC = "default" in exported ? exported.default : exported;
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
  const variant = newVariant(RELEASE_SYNC, { wasmModule: compiledQuickJS as never, wasmMemory: wasmMemory as never, emscriptenModule });
  return { module: await newQuickJSWASMModuleFromVariant(variant), memory };
}

