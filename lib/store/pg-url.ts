// What the eager part of the library needs to know about PostgreSQL: whether a location is a database
// URL, and the feature name in the error when `pg` is missing. The engine (lib/store/pg.ts) and the
// store's queries load at first use. `storeKind`, the check of a location the user gave, is in
// store-kind.ts, which the bundle loads at its first call.
import type * as PgLabRun from "./pg-lab-run.js";

export { storeKind } from "./store-kind.js";

/** Whether `location` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than a file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** What needs `pg`, in the error raised when it is not installed. */
export const PG_FEATURE = "The PostgreSQL lab store (c.lab = { url } or TYPELM_LAB_URL)";

/**
 * Loads the PostgreSQL lab store's sending and queries (lib/store/pg-lab-run.ts, with `pg` and the
 * migrations). Here, in a module `import "typelm"` loads, rather than in the store: the bundle builds
 * lib/store/pg-lab-store.ts apart as CommonJS, where `import()` of a library module cannot be resolved.
 */
export function loadPostgresLabRun(): Promise<typeof PgLabRun> {
  return import("./pg-lab-run.js");
}
