// What the eager part of the library needs to know about PostgreSQL: whether a location is a database
// URL, and the feature name in the error when `pg` is missing. The engine (lib/store/pg.ts) and the
// store's queries load at first use.
import { ConfigurationError } from "../errors.js";
import type * as PgLabRun from "./pg-lab-run.js";

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

/** `scheme:` at the start of a location: two characters at least, so a Windows drive (`C:\`) is a path. */
const URL_SCHEME = /^([a-z][a-z0-9+.-]+):/i;
/** The start of a libpq keyword string (`host=db user=lab password=...`). */
const KEYWORD_STRING = /(^|\s)(host|hostaddr|port|dbname|user|password|passfile|sslmode|service|options|connect_timeout|application_name)\s*=/i;

/**
 * Whether a lab store location given by the user (`--store`, `lab copy`, `c.lab = { url }`,
 * `TYPELM_LAB_URL`) is a PostgreSQL database or a file. Anything else that looks like a database
 * address (another scheme such as `mysql://` or a misspelt `postgress://`, a libpq keyword string)
 * is a `ConfigurationError` that shows none of it but the scheme, since it may carry a password.
 */
export function storeKind(location: string, where: string): "postgresql" | "file" {
  if (isPostgresUrl(location)) return "postgresql";
  const scheme = URL_SCHEME.exec(location)?.[1];
  if (scheme !== undefined && (location.startsWith(`${scheme}://`) || /^postgres/i.test(scheme) || location.includes("@"))) {
    throw new ConfigurationError(
      `${where}: a "${scheme.slice(0, 20)}:" address is neither a lab store file nor a PostgreSQL URL; ` +
        "give a file path or postgres://user:password@host:5432/database (postgresql:// works too)",
    );
  }
  if (KEYWORD_STRING.test(location)) {
    throw new ConfigurationError(
      `${where}: a PostgreSQL keyword string (host=... dbname=...) is not taken; give postgres://user:password@host:5432/database ` +
        "(percent-encode a password holding / ? # @ or %) or a lab store file",
    );
  }
  return "file";
}
