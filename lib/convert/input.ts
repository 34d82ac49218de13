import type { z } from "zod";
import { Temporal } from "../signature/temporal.js";
import { ValidationError, preview } from "../errors.js";
import { isPlainObject, setOwn } from "../plain-object.js";
import type { CompiledSignature } from "../signature/compile.js";
import type { Shape } from "../signature/signature.js";
import { resolve } from "../signature/kind.js";
import { describeType } from "../signature/type-text.js";
import { joinPath } from "./path.js";
import { parseInstant, parsePlainDate, parseZonedDateTime } from "./dates.js";

// Whether a schema has a date (or a record) inside, so inputs without one skip that walk entirely.
const temporalInside = new WeakMap<z.ZodType, boolean>();
const recordInside = new WeakMap<z.ZodType, boolean>();
const hasTemporal = (schema: z.ZodType) => inside(schema, (kind) => kind === "date" || kind === "datetime" || kind === "instant", temporalInside);
const hasRecord = (schema: z.ZodType) => inside(schema, (kind) => kind === "record", recordInside);

/**
 * Whether a value of `kind` can occur anywhere inside `schema`. Only the asked schema's answer is
 * cached: while a recursive schema is being walked, the parts met again are skipped, so a partial
 * answer for an inner part would be wrong if it were kept.
 */
function inside(schema: z.ZodType, wanted: (kind: string) => boolean, cache: WeakMap<z.ZodType, boolean>): boolean {
  const hit = cache.get(schema);
  if (hit !== undefined) return hit;
  const found = reaches(schema, wanted, new Set());
  cache.set(schema, found);
  return found;
}

function reaches(schema: z.ZodType, wanted: (kind: string) => boolean, seen: Set<object>): boolean {
  const r = resolve(schema);
  // Keyed by the resolved base: getter-based recursion makes a new `.optional()` wrapper each time.
  if (seen.has(r.base)) return false;
  seen.add(r.base);
  const k = r.kind;
  if (wanted(k.kind)) return true;
  const within = (s: z.ZodType) => reaches(s, wanted, seen);
  switch (k.kind) {
    case "array": return within(k.element);
    case "object": return Object.values(k.shape).some(within);
    case "record": return within(k.value);
    case "union": return k.options.some(within);
    default: return false;
  }
}

function invalid(sigName: string, path: string, expected: string, received: unknown, detail?: string): never {
  const extra = detail === undefined ? "" : ` (${detail})`;
  throw new ValidationError(
    `Input field "${path}" of ${sigName}: expected ${expected}, received ${preview(received)}${extra}`,
    { field: path },
  );
}

/** Turns ISO strings at date positions into Temporal/Date values; everything else is left as is. */
function revive(schema: z.ZodType, value: unknown, path: string, sigName: string): unknown {
  if (value === undefined || value === null || !hasTemporal(schema)) return value;
  const k = resolve(schema).kind;
  switch (k.kind) {
    case "date":
      if (value instanceof Temporal.PlainDate || typeof value !== "string") return value;
      return parsePlainDate(value) ?? invalid(sigName, path, describeType(schema), value);
    case "datetime":
      if (typeof value !== "string") return value;
      return parseZonedDateTime(value) ?? invalid(sigName, path, describeType(schema), value);
    case "instant":
      if (typeof value !== "string") return value;
      return parseInstant(value) ?? invalid(sigName, path, describeType(schema), value);
    case "array":
      return Array.isArray(value) ? value.map((v, i) => revive(k.element, v, joinPath(path, i), sigName)) : value;
    case "object": {
      if (!isPlainObject(value)) return value;
      const out: Record<string, unknown> = { ...value };
      for (const [name, s] of Object.entries(k.shape)) {
        if (name in out) out[name] = revive(s, out[name], joinPath(path, name), sigName);
      }
      return out;
    }
    case "record": {
      if (!isPlainObject(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) setOwn(out, key, revive(k.value, v, joinPath(path, key), sigName));
      return out;
    }
    case "union":
      // The first member under which the revived value validates wins; otherwise zod reports.
      for (const option of k.options) {
        try {
          const revived = revive(option, value, path, sigName);
          if (option.safeParse(revived).success) return revived;
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
        }
      }
      return value;
    default:
      return value;
  }
}

/**
 * Turns the ISO strings a caller (or a model, for tool arguments) wrote at the date positions of
 * `shape` into the declared Temporal/Date values; other fields are copied as they are. Throws a
 * ValidationError naming the field when a date string is not a valid date. `owner` names the
 * signature or tool in that message.
 */
export function reviveFields(shape: Shape, values: Record<string, unknown>, owner: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...values };
  for (const [name, schema] of Object.entries(shape)) {
    if (out[name] !== undefined) out[name] = revive(schema, out[name], name, owner);
  }
  return out;
}

/**
 * zod 4 skips a record key named "__proto__" (neither checked nor kept): it cannot set a prototype
 * that way, but the caller's key vanishes. This puts such keys back into zod's `parsed` copy of
 * `given`, checked against the record's value schema, as own properties (throws ValidationError).
 */
export function keepProtoKeys(schema: z.ZodType, given: unknown, parsed: unknown, path: string, owner: string): unknown {
  if (given === null || typeof given !== "object" || parsed === null || typeof parsed !== "object" || !hasRecord(schema)) return parsed;
  const k = resolve(schema).kind;
  const into = parsed as Record<string, unknown>;
  const from = given as Record<string, unknown>;
  switch (k.kind) {
    case "array":
      if (Array.isArray(given) && Array.isArray(parsed)) {
        given.forEach((v, i) => (parsed[i] = keepProtoKeys(k.element, v, parsed[i], joinPath(path, i), owner)));
      }
      return parsed;
    case "object":
      for (const [name, s] of Object.entries(k.shape)) {
        if (Object.hasOwn(from, name) && Object.hasOwn(into, name)) into[name] = keepProtoKeys(s, from[name], into[name], joinPath(path, name), owner);
      }
      return parsed;
    case "record": {
      // Rebuilt in the caller's key order when the key is there; else zod's keys are kept as they are.
      const hasKey = Object.hasOwn(from, "__proto__");
      const out: Record<string, unknown> = hasKey ? {} : into;
      for (const key of Object.keys(hasKey ? from : into)) {
        const at = joinPath(path, key);
        if (key === "__proto__") {
          const result = k.value.safeParse(from[key]);
          if (!result.success) invalid(owner, at, describeType(k.value), from[key], result.error.issues[0]?.message);
          setOwn(out, key, keepProtoKeys(k.value, from[key], result.data, at, owner));
        } else if (Object.hasOwn(into, key)) {
          out[key] = keepProtoKeys(k.value, from[key], into[key], at, owner);
        }
      }
      return out;
    }
    case "union": {
      const option = k.options.find((o) => o.safeParse(given).success);
      return option === undefined ? parsed : keepProtoKeys(option, given, parsed, path, owner);
    }
    default:
      return parsed;
  }
}

/** Reads the value at a zod issue path, for the "received" part of an error message. */
function at(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/**
 * Builds the validated input values of a call: applies defaults, turns ISO strings into the declared
 * date types, and checks every field against its zod schema. Raises ValidationError naming the field.
 */
export function validateInputs(sig: CompiledSignature, inputs: unknown): Record<string, unknown> {
  const given = inputs === undefined || inputs === null ? {} : inputs;
  if (typeof given !== "object" || Array.isArray(given)) {
    throw new ValidationError(`Inputs of ${sig.name} must be an object of named fields, received ${preview(inputs)}`, {
      field: "",
    });
  }
  const values = given as Record<string, unknown>;
  const declared = sig.inputs;
  for (const key of Object.keys(values)) {
    if (!declared.some((f) => f.name === key)) {
      const names = declared.map((f) => f.name).join(", ") || "(none)";
      throw new ValidationError(`Unknown input field "${key}" for ${sig.name}; declared inputs: ${names}`, { field: key });
    }
  }
  const out: Record<string, unknown> = {};
  for (const field of declared) {
    const value = values[field.name];
    if (value === undefined && field.required) {
      throw new ValidationError(
        `Input field "${field.name}" of ${sig.name} is required: expected ${describeType(field.schema)}, received undefined`,
        { field: field.name },
      );
    }
    const revived = revive(field.schema, value, field.name, sig.name);
    const result = field.schema.safeParse(revived);
    if (!result.success) {
      const issue = result.error.issues[0];
      const issuePath = issue?.path ?? [];
      let path = field.name;
      for (const key of issuePath) path = joinPath(path, typeof key === "number" ? key : String(key));
      const expected = issue !== undefined && "expected" in issue && typeof issue.expected === "string"
        ? issue.expected
        : describeType(field.schema);
      invalid(sig.name, path, expected, at(revived, issuePath), issue?.message);
    }
    if (result.data !== undefined) out[field.name] = keepProtoKeys(field.schema, revived, result.data, field.name, sig.name);
  }
  return out;
}
