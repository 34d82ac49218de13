/**
 * Keeps secrets out of everything typelm writes down. Keys are registered by the LM layer when a
 * client is built; anything that looks like a credential header or field is masked as well.
 */
const secrets = new Set<string>();
const SECRET_FIELD = /^(api[-_]?key|authorization|x-api-key|secret|password|token|auth[-_]?token|openai-organization|openai-project)$/i;

/** Registers a secret value that must never appear in logs, events, records or errors. */
export function registerSecret(value: string | undefined | null): void {
  if (value && value.length >= 4) secrets.add(value);
}

/** Replaces every registered secret inside a string. */
export function redactString(text: string): string {
  if (secrets.size === 0) return text;
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join("[REDACTED]");
  return out;
}

/** Deep copy of `value` with secrets masked (strings scrubbed, credential-named fields replaced). */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactString(value);
  if (value === null || typeof value !== "object" || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Error) return redactString(value.message);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_FIELD.test(k) && v != null ? "[REDACTED]" : redact(v, depth + 1);
  }
  return out;
}
