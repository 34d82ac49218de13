import { redactString } from "../../instrument/redact.js";
import { setOwn } from "../../plain-object.js";

/**
 * How results.json's manifest records an experiment's `optimizerOptions`: as data that cannot carry
 * a credential. The file is meant to be committed, so the rule is by shape, not by a list of known
 * option names:
 *
 * - a model (anything with a `chat` or `call` method) is recorded by its id (`[model openai/gpt-4o]`),
 *   or `[model ClassName]` when it has none: never its fields;
 * - any other object that is not plain data (a class instance, a Map, a RegExp) is `[object ClassName]`;
 * - a function is `[function name]`;
 * - plain objects and arrays are recorded field by field, except that a field named like a credential
 *   (apiKey, key, token, secret, password, authorization, cookie, credentials…) is masked whatever it holds;
 * - in every string and key, registered secrets and key-shaped text (`sk-…`) are masked.
 */
export function recordedOptions(value: unknown): unknown {
  return recorded(value, 0, new Set());
}

const MASK = "[REDACTED]";
const MAX_DEPTH = 32;
/** The words of a field name that make it a credential's (after splitting camelCase, `-`, `_`). */
const CREDENTIAL_WORDS = new Set([
  "key", "apikey", "token", "secret", "password", "passwd", "pwd", "passphrase", "authorization", "auth",
  "credential", "credentials", "cookie", "bearer", "session",
]);
/** Key-shaped text (`sk-…`, `sk-ant-…`, `sk-proj-…`), masked even when no LM registered it. */
const KEY_SHAPED = /\b(?:sk|pk|rk)-[A-Za-z0-9*_-]{6,}/g;

/** Whether a field's name says it holds a credential: `apiKey`, `api_key`, `x-api-key`, `accessToken`, `clientSecret`… */
export function isCredentialName(name: string): boolean {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== "");
  return words.some((w) => CREDENTIAL_WORDS.has(w)) || CREDENTIAL_WORDS.has(words.join(""));
}

function text(value: string): string {
  return redactString(value).replace(KEY_SHAPED, MASK);
}

function recorded(value: unknown, depth: number, path: Set<object>): unknown {
  switch (typeof value) {
    case "string": return text(value);
    case "number": case "boolean": case "undefined": return value;
    case "bigint": return value.toString();
    case "symbol": return text(value.toString());
    case "function": return `[function ${text((value as { name?: string }).name || "anonymous")}]`;
  }
  if (value === null) return null;
  const object = value as object;
  if (path.has(object)) return "[Circular]";
  if (depth >= MAX_DEPTH) return "[Truncated]";
  if (isModel(object)) return `[model ${modelName(object)}]`;
  if (Array.isArray(object)) return within(path, object, () => object.map((v) => recorded(v, depth + 1, path)));
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? null : object.toISOString();
  const proto = Object.getPrototypeOf(object) as object | null;
  if (proto !== Object.prototype && proto !== null) return `[object ${className(object)}]`;
  return within(path, object, () => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(object)) {
      setOwn(out, text(k), isCredentialName(k) && v !== null && v !== undefined ? MASK : recorded(v, depth + 1, path));
    }
    return out;
  });
}

function within<T>(path: Set<object>, object: object, make: () => T): T {
  path.add(object);
  try {
    return make();
  } finally {
    path.delete(object);
  }
}

/** Reads a property without letting a throwing getter stop the report. */
function read(object: object, name: string): unknown {
  try {
    return (object as Record<string, unknown>)[name];
  } catch {
    return undefined;
  }
}

function isModel(object: object): boolean {
  return typeof read(object, "chat") === "function" || typeof read(object, "call") === "function";
}

/** A model's `provider/model` id (its `id`, else `provider` and `model`), else its class name. */
function modelName(object: object): string {
  const id = read(object, "id");
  if (typeof id === "string" && id !== "") return text(id);
  const provider = read(object, "provider");
  const model = read(object, "model");
  if (typeof provider === "string" && typeof model === "string") return text(`${provider}/${model}`);
  return className(object);
}

function className(object: object): string {
  try {
    const name = (Object.getPrototypeOf(object) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === "string" && name !== "" ? text(name) : "Object";
  } catch {
    return "Object";
  }
}
