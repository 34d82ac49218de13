/**
 * Keeps secrets out of everything typelm writes down. Keys are registered by the LM layer and the
 * exporters when they are built; anything named like a credential field or header is masked as well.
 * The bus redacts each payload once, at emission, so every subscriber gets a clean copy; the lab store
 * redacts the decoded values of a record before serializing it (`redactedJson`), never the JSON text.
 */
import { setOwn } from "../plain-object.js";

/** Registered secrets, each with the escaped forms it takes in JSON text and URLs; longest first. */
const secrets = new Set<string>();
let longestFirst: string[] = [];
const SECRET_FIELD =
  /^(api[-_]?key|x-api-key|x-goog-api-key|authorization|proxy-authorization|cookie|set-cookie|secret|secret[-_]?key|client[-_]?secret|password|token|auth[-_]?token|access[-_]?token|refresh[-_]?token|license[-_]?key|openai-organization|openai-project)$/i;
/** Fields holding an error's text: URLs in them lose their credentials (other strings are data, kept as given). */
const ERROR_FIELD = /^errors?$/i;
const MASK = "[REDACTED]";
/**
 * Shorter values are never secrets: "test" or "1234" cannot be told from ordinary text, and masking
 * them would rewrite a user's data ("unit [REDACTED] of the la[REDACTED] build").
 */
export const MIN_SECRET_LENGTH = 8;
/** Deeper than this, a value is replaced by a marker rather than copied (and never passed through unredacted). */
const MAX_DEPTH = 64;

/**
 * Registers a secret value that must never appear in logs, events, records or errors. A value
 * shorter than MIN_SECRET_LENGTH characters is ignored. The forms it takes inside JSON text and a
 * percent-encoded URL are registered with it, so text that quotes it escaped (a server's error that
 * echoes a request body) is masked too.
 */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) return;
  const jsonEscaped = JSON.stringify(value).slice(1, -1);
  const before = secrets.size;
  for (const form of [value, jsonEscaped, JSON.stringify(jsonEscaped).slice(1, -1), encodeURIComponent(value)]) secrets.add(form);
  // Longest first: masking a short form first would leave pieces of a longer form that holds it.
  if (secrets.size !== before) longestFirst = [...secrets].sort((a, b) => b.length - a.length);
}

/** Replaces every registered secret inside a string (a decoded value or free text such as an error message). */
export function redactString(text: string): string {
  if (secrets.size === 0) return text;
  let out = text;
  for (const secret of longestFirst) if (out.includes(secret)) out = out.split(secret).join(MASK);
  return out;
}

/**
 * JSON text of `value` with every registered secret masked in its strings and keys. Works on the
 * decoded values (JSON.stringify's replacer sees each one after `toJSON`), so the result is always
 * valid JSON that parses back to the value, with only secret-bearing strings changed. Throws as
 * JSON.stringify does (a BigInt, a cycle).
 */
export function redactedJson(value: unknown): string {
  if (secrets.size === 0) return JSON.stringify(value);
  // One copy per object whose keys change, so a cycle through it is still the same object (and
  // JSON.stringify reports it) rather than a fresh copy each time round.
  const renamed = new WeakMap<object, Record<string, unknown>>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "string") return redactString(v);
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const done = renamed.get(v);
    if (done !== undefined) return done;
    const keys = Object.keys(v);
    if (keys.every((k) => redactString(k) === k)) return v;
    const out: Record<string, unknown> = {};
    renamed.set(v, out);
    for (const k of keys) setOwn(out, redactString(k), (v as Record<string, unknown>)[k]);
    return out;
  });
}

/**
 * Deep copy of `value` with secrets masked: strings scrubbed, credential-named fields replaced,
 * errors reduced to their redacted `Name: message`. Cycles become "[Circular]"; nesting past
 * MAX_DEPTH becomes "[Truncated]", so no depth lets a secret through.
 */
export function redact(value: unknown): unknown {
  return copy(value, 0, new Set());
}

function copy(value: unknown, depth: number, path: Set<object>): unknown {
  if (typeof value === "string") return redactString(value);
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Date) return value;
  if (value instanceof Error) return redactError(`${value.name}: ${value.message}`);
  if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  if (path.has(value)) return "[Circular]";
  if (depth >= MAX_DEPTH) return "[Truncated]";
  path.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => copy(v, depth + 1, path));
    if (value instanceof Map) return copy(Object.fromEntries(value), depth, path);
    if (value instanceof Set) return copy([...value], depth, path);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[redactString(k)] = SECRET_FIELD.test(k) && v != null ? MASK
        : ERROR_FIELD.test(k) && typeof v === "string" ? redactError(v) : copy(v, depth + 1, path);
    }
    return out;
  } finally {
    path.delete(value);
  }
}

/** `scheme://` at the start of a URL. */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** A URL inside free text: a scheme, then everything up to whitespace or a quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/**
 * A URL as typelm shows it: scheme, host, port and path. What a URL can carry as a credential is
 * dropped: the user and password before `@`, the query (`?key=…`) and the fragment. Works on the
 * text, so a URL the parser refuses, or a host without a scheme (`user:pw@host:11434`, as
 * `OLLAMA_HOST` allows), is cut the same way. Everything up to the last `@` goes: a password that was
 * not percent-encoded may hold `/`, `?`, `#` or `@` itself (`postgres://u:pa/ss@host/db`), so where
 * the authority ends cannot be told before its last `@`.
 */
export function shownUrl(url: string): string {
  const scheme = SCHEME.exec(url)?.[0] ?? "";
  const afterScheme = url.slice(scheme.length);
  const rest = afterScheme.slice(afterScheme.lastIndexOf("@") + 1);
  const authorityEnd = rest.search(/[/?#]/);
  const host = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const after = authorityEnd < 0 ? "" : rest.slice(authorityEnd);
  const pathEnd = after.search(/[?#]/);
  return `${scheme}${host}${pathEnd < 0 ? after : after.slice(0, pathEnd)}`;
}

/** A `password=` setting of a libpq keyword string (`host=db password=secret`), quoted or not. */
const PASSWORD_SETTING = /\b(password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s'"]*)/gi;

/**
 * Where a lab store is, as typelm shows it: a URL as `shownUrl` shows it; any other text (a file
 * path, a libpq keyword string) with the value of each `password=` masked.
 */
export function shownStore(location: string): string {
  if (SCHEME.test(location)) return shownUrl(location);
  return location.replace(PASSWORD_SETTING, `$1${MASK}`);
}

/**
 * Free text (an error message) with every URL in it cut to what `shownUrl` shows, and the value of
 * each `password=` setting masked.
 */
export function maskUrlCredentials(text: string): string {
  const cut = text.includes("://") ? text.replace(URL_IN_TEXT, shownUrl) : text;
  return /password\s*=/i.test(cut) ? cut.replace(PASSWORD_SETTING, `$1${MASK}`) : cut;
}

/**
 * The text of an error, fit to be shown or stored: registered secrets masked and the credentials
 * of any URL in it dropped (a client library's message often quotes the URL it tried).
 */
export function redactError(text: string): string {
  return maskUrlCredentials(redactString(text));
}
