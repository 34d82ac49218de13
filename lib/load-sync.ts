import { createRequire } from "node:module";

/**
 * A loader that `require`s `id` the first time it is called and returns the same module after that.
 * For what most programs never use, or use only after start-up, so `import "typelm"` does not pay for
 * it. On Node 20.19 and later `require` also loads ES modules (`@toon-format/toon`, `temporal-polyfill`).
 */
export function loadOnFirstUse<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= createRequire(import.meta.url)(id) as T);
}

/**
 * `make()` run once, at the first call: for values built at module level that cost start-up time, such
 * as the zod schemas of the library's own signatures and tools.
 */
export function onFirstUse<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

let crypto: typeof import("node:crypto") | undefined;

/** `node:crypto`, loaded at first use (hashes, ids). */
export function nodeCrypto(): typeof import("node:crypto") {
  return (crypto ??= process.getBuiltinModule("node:crypto") as typeof import("node:crypto"));
}

/**
 * A Node built-in module, loaded at first use: for built-ins only some paths need (streams, readline),
 * which otherwise cost `import "typelm"` their start-up.
 */
export function builtin<K extends keyof BuiltinModules>(name: K): BuiltinModules[K] {
  return process.getBuiltinModule(name) as BuiltinModules[K];
}

interface BuiltinModules {
  "node:events": typeof import("node:events");
  "node:fs/promises": typeof import("node:fs/promises");
  "node:os": typeof import("node:os");
  "node:readline": typeof import("node:readline");
  "node:stream": typeof import("node:stream");
  "node:stream/promises": typeof import("node:stream/promises");
  "node:timers/promises": typeof import("node:timers/promises");
  "node:perf_hooks": typeof import("node:perf_hooks");
}
