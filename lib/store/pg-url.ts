// What the eager part of the library needs to know about PostgreSQL: whether a location is a database
// URL, and the feature name in the error when `pg` is missing. The engine (lib/store/pg.ts) and the
// store's queries load at first use.

/** Whether `location` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than a file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** What needs `pg`, in the error raised when it is not installed. */
export const PG_FEATURE = "The PostgreSQL lab store (c.lab = { url } or TYPELM_LAB_URL)";
