// Whether a lab store location the user gave (`--store`, `lab copy`, `c.lab = { url }`, `TYPELM_LAB_URL`)
// is a PostgreSQL database or a file, refusing other database addresses without showing them. Imported
// through pg-url.ts; the bundle loads this module at the first call (scripts/deferred-modules.mjs).
import { ConfigurationError } from "../errors.js";
import { isPostgresUrl } from "./pg-url.js";

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
