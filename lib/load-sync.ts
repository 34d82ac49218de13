import type { AsyncLocalStorage } from "node:async_hooks";
// Imported, not taken from process.getBuiltinModule: under jest this is jest's own `createRequire`, so
// what typelm requires comes from the same module registry (and mocks) as the program's own imports.
import { createRequire } from "node:module";

/**
 * A loader that `require`s `id` the first time it is called and returns the same module after that.
 * For what most programs never use, or use only after start-up, so `import "typelm"` does not pay for
 * it. On Node 20.19 and later `require` also loads ES modules (`@toon-format/toon`, `temporal-polyfill`).
 *
 * `vendored` names the same package built as CommonJS into the bundle (dist/pkg/vendor/, see
 * scripts/bundle.mjs), used only where `require` refuses ES modules: jest's module registry does,
 * so a program's tests under jest still work. Where the package loads, it is the package itself, the
 * same module instance as the program's own `import` of it.
 */
export function loadOnFirstUse<T>(id: string, vendored?: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireOrVendored(id, vendored) as T);
}

function requireOrVendored(id: string, vendored: string | undefined): unknown {
  const requireHere = createRequire(import.meta.url);
  try {
    return requireHere(id);
  } catch (error) {
    if (vendored === undefined || !refusesEsModules(error)) throw error;
    for (const folder of ["./vendor/", "../vendor/"]) {
      const file = builtin("node:url").fileURLToPath(new URL(folder + vendored, import.meta.url));
      if (builtin("node:fs").existsSync(file)) return requireHere(file);
    }
    throw error;
  }
}

/** The error of a `require` that cannot load an ES module (Node before 20.19, jest's registry). */
function refusesEsModules(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "ERR_REQUIRE_ESM" || (typeof message === "string" && message.includes("Must use import to load ES Module"));
}

/**
 * A module the bundle built apart from the eager chunk (scripts/deferred-modules.mjs), loaded the first
 * time one of its functions is called: dist/pkg/deferred/<name>.cjs, beside the chunk this file is built
 * into (dist/pkg/chunks/). Only the bundle calls this: the sources import those modules as written.
 * The file is a factory called with the module's record and a `require` that answers its imports: of
 * library modules and zod from the eager chunk (see provideDeferredHost), of other deferred modules by
 * loading them, of Node's built-ins as usual.
 */
export function requireDeferred(name: string): Record<string, (...args: unknown[]) => unknown> {
  let module = deferredModules.get(name);
  if (module === undefined) {
    const factory = requireDeferredFile(name);
    module = { exports: {} };
    deferredModules.set(name, module);
    try {
      factory(module, deferredRequire);
    } catch (error) {
      deferredModules.delete(name);
      throw error;
    }
  }
  return module.exports;
}

type DeferredFactory = (module: DeferredModule, require: (id: string) => unknown) => void;

function requireDeferredFile(name: string): DeferredFactory {
  const file = `../deferred/${name}.cjs`;
  try {
    return createRequire(import.meta.url)(file) as DeferredFactory;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "MODULE_NOT_FOUND" || !String((error as Error).message).includes(`${name}.cjs`)) throw error;
    throw new Error(
      `typelm could not load dist/pkg/deferred/${name}.cjs, part of the package it loads at first use from beside its own files. ` +
        "If typelm was bundled into an application, mark it external (keep it in node_modules) instead.",
      { cause: error },
    );
  }
}

interface DeferredModule {
  exports: Record<string, (...args: unknown[]) => unknown>;
}
const deferredModules = new Map<string, DeferredModule>();
let deferredHost: ((id: string) => unknown) | undefined;

/** Called by the bundle's host module (scripts/deferred-modules.mjs) when `import "typelm"` loads it. */
export function provideDeferredHost(host: (id: string) => unknown): void {
  deferredHost = host;
}

function deferredRequire(id: string): unknown {
  if (id.startsWith("typelm-deferred:")) return requireDeferred(id.slice("typelm-deferred:".length));
  if (id.startsWith("typelm-host:")) {
    if (deferredHost === undefined) throw new Error(`typelm: ${id} is needed before the library has loaded`);
    return deferredHost(id.slice("typelm-host:".length));
  }
  return createRequire(import.meta.url)(id);
}

/**
 * `make()` run once, at the first call: for values built at module level that cost start-up time, such
 * as the zod schemas of the library's own signatures and tools.
 */
export function onFirstUse<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** `node:crypto`, loaded at first use (hashes, ids). */
export function nodeCrypto(): typeof import("node:crypto") {
  return builtin("node:crypto");
}

/**
 * A Node built-in module, loaded at first use: for built-ins only some paths need (streams, readline),
 * which otherwise cost `import "typelm"` their start-up.
 */
export function builtin<K extends keyof BuiltinModules>(name: K): BuiltinModules[K] {
  return process.getBuiltinModule(name) as BuiltinModules[K];
}

interface BuiltinModules {
  "node:async_hooks": typeof import("node:async_hooks");
  "node:fs": typeof import("node:fs");
  "node:module": typeof import("node:module");
  "node:path": typeof import("node:path");
  "node:url": typeof import("node:url");
  "node:crypto": typeof import("node:crypto");
  "node:events": typeof import("node:events");
  "node:fs/promises": typeof import("node:fs/promises");
  "node:os": typeof import("node:os");
  "node:readline": typeof import("node:readline");
  "node:stream": typeof import("node:stream");
  "node:stream/promises": typeof import("node:stream/promises");
  "node:timers/promises": typeof import("node:timers/promises");
  "node:perf_hooks": typeof import("node:perf_hooks");
}

/**
 * A new `AsyncLocalStorage`, taken from `node:async_hooks` through `process.getBuiltinModule`. A static
 * `import` of a built-in makes Node build its ES module facade at `import "typelm"`: for `node:fs` that
 * costs about 2.6 ms (its facade loads the internal streams), for `node:module`, `node:path` and
 * `node:url` about 0.3 ms each (medians of 21 fresh processes on a loaded 2-core machine); the eager
 * modules take built-ins at first use this way, except `createRequire` (see above).
 */
export function asyncLocalStorage<T>(): AsyncLocalStorage<T> {
  return new (builtin("node:async_hooks").AsyncLocalStorage)<T>();
}

/** A module loaded with `import()` at first use; see `moduleOnFirstUse`. */
export interface FirstUseModule<T> {
  /** The module once it has loaded (later calls use it without waiting), else undefined. */
  readonly loaded: T | undefined;
  /** Loads it: one promise for every caller, so calls made while it loads go on in the order they were made; a failed load is tried again at the next call. */
  load(): Promise<T>;
}

/**
 * The work behind a facade's async methods, loaded at their first call: `(m.loaded ?? (await m.load()))`
 * runs without an extra wait once it has loaded, and in call order while it loads.
 */
export function moduleOnFirstUse<T>(importIt: () => Promise<T>): FirstUseModule<T> {
  let loading: Promise<T> | undefined;
  const m: { loaded: T | undefined; load(): Promise<T> } = {
    loaded: undefined,
    load() {
      loading ??= importIt().then(
        (module) => (m.loaded = module),
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      );
      return loading;
    },
  };
  return m;
}

/**
 * The folder of this module (lib/ in the sources, dist/pkg/chunks/ in the bundle), where the library
 * resolves packages from: for modules the bundle defers, which have no `import.meta` of their own.
 */
export function libraryFolder(): string {
  return builtin("node:path").dirname(builtin("node:url").fileURLToPath(import.meta.url));
}
