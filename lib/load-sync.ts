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

let crypto: typeof import("node:crypto") | undefined;

/** `node:crypto`, loaded at first use (hashes, ids). */
export function nodeCrypto(): typeof import("node:crypto") {
  return (crypto ??= process.getBuiltinModule("node:crypto") as typeof import("node:crypto"));
}
