/**
 * Keeps secrets out of everything typelm writes down. Keys are registered by the LM layer and the
 * exporters when they are built; anything named like a credential field or header is masked as well.
 * The bus redacts each payload once, at emission, so every subscriber gets a clean copy.
 */
const secrets = new Set<string>();
const SECRET_FIELD =
  /^(api[-_]?key|x-api-key|x-goog-api-key|authorization|proxy-authorization|cookie|set-cookie|secret|secret[-_]?key|client[-_]?secret|password|token|auth[-_]?token|access[-_]?token|refresh[-_]?token|license[-_]?key|openai-organization|openai-project)$/i;
const MASK = "[REDACTED]";
/** Deeper than this, a value is replaced by a marker rather than copied (and never passed through unredacted). */
const MAX_DEPTH = 64;

/** Registers a secret value that must never appear in logs, events, records or errors. */
export function registerSecret(value: string | undefined | null): void {
  if (value && value.length >= 4) secrets.add(value);
}

/** Replaces every registered secret inside a string. */
export function redactString(text: string): string {
  if (secrets.size === 0) return text;
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(MASK);
  return out;
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
  if (value instanceof Error) return redactString(`${value.name}: ${value.message}`);
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
      out[redactString(k)] = SECRET_FIELD.test(k) && v != null ? MASK : copy(v, depth + 1, path);
    }
    return out;
  } finally {
    path.delete(value);
  }
}
