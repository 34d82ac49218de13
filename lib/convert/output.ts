import type { z } from "zod";
import { Temporal } from "../signature/temporal.js";
import type { CompiledSignature } from "../signature/compile.js";
import type { Shape } from "../signature/signature.js";
import { unwrap } from "../signature/fields.js";
import { kindOf, type Kind } from "../signature/kind.js";
import { describeType } from "../signature/type-text.js";
import { joinPath } from "./path.js";
import { parseInstant, parsePlainDate, parseZonedDateTime } from "./dates.js";
import { fail, type Converter } from "./fail.js";
import { isPlainObject, setOwn } from "../plain-object.js";
import { unionConverter } from "./union.js";

// Converters are built once per zod schema and reused by every prediction: schema analysis
// (unwrapping, enum tables, union ordering data) stays off the hot path.
const converters = new WeakMap<z.ZodType, Converter>();
const objectConverters = new WeakMap<Shape, Converter>();

/** The converter for a schema (cached). Recursive schemas resolve through the cache entry set first. */
export function converterFor(schema: z.ZodType): Converter {
  const hit = converters.get(schema);
  if (hit !== undefined) return hit;
  // Register an indirection before building so a schema that reaches itself (z.lazy, getters)
  // finds this entry instead of recursing forever.
  let impl: Converter | undefined;
  const entry: Converter = (value, path, raw) => (impl ??= build(schema))(value, path, raw);
  converters.set(schema, entry);
  impl = build(schema);
  return entry;
}

function build(schema: z.ZodType): Converter {
  const u = unwrap(schema);
  const inner = buildBase(u.base);
  if (!u.optional && !u.nullable && !u.hasDefault) {
    const expected = describeType(u.base);
    return (value, path, raw) => {
      if (value === undefined || value === null) fail(path, expected, value, raw, value === undefined ? "missing" : undefined);
      return inner(value, path, raw);
    };
  }
  const defaultValue = u.hasDefault ? u.defaultValue : undefined;
  // Missing or null: the default if declared, else null (never undefined, so results survive JSON).
  return (value, path, raw) => {
    if (value === undefined || value === null) return defaultValue === undefined ? null : defaultValue();
    return inner(value, path, raw);
  };
}

function buildBase(base: z.ZodType): Converter {
  const k = kindOf(base);
  const expected = describeType(base);
  const checked = withChecks(base, k);
  switch (k.kind) {
    case "string":
      return checked((value, path, raw) => {
        if (typeof value === "string") return value;
        // A model that writes 42 for a string field meant "42".
        if (typeof value === "number" || typeof value === "boolean") return String(value);
        return fail(path, expected, value, raw);
      });
    case "number":
      return checked(numberConverter(k.int, expected));
    case "boolean":
      return (value, path, raw) => {
        if (typeof value === "boolean") return value;
        if (typeof value === "string") {
          const s = value.trim().toLowerCase();
          if (s === "true") return true;
          if (s === "false") return false;
        }
        return fail(path, expected, value, raw);
      };
    case "date":
      return (value, path, raw) => {
        if (value instanceof Temporal.PlainDate) return value;
        const date = typeof value === "string" ? parsePlainDate(value) : undefined;
        return date ?? fail(path, expected, value, raw);
      };
    case "datetime":
      return (value, path, raw) => {
        if (value instanceof Temporal.ZonedDateTime) return value;
        const dt = typeof value === "string" ? parseZonedDateTime(value) : undefined;
        return dt ?? fail(path, expected, value, raw);
      };
    case "instant":
      return (value, path, raw) => {
        if (value instanceof Date && !Number.isNaN(value.getTime())) return value;
        const d = typeof value === "string" ? parseInstant(value) : undefined;
        return d ?? fail(path, expected, value, raw);
      };
    case "enum":
    case "literal":
      return choiceConverter(k.values, expected);
    case "array": {
      const element = converterFor(k.element);
      return checked((value, path, raw) => {
        if (!Array.isArray(value)) return fail(path, expected, value, raw);
        const out = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) out[i] = element(value[i], `${path}[${i}]`, raw);
        return out;
      });
    }
    case "object":
      return objectConverter(k.shape);
    case "record":
      return recordConverter(k.key, k.value, expected);
    case "union":
      return unionConverter(k.options, k.discriminator, expected, converterFor);
    case "lazy": {
      let target: Converter | undefined;
      return (value, path, raw) => (target ??= converterFor(k.inner()))(value, path, raw);
    }
    case "pipe":
      return pipeConverter(base, k.input);
    case "null":
      return (value, path, raw) => (value === null || value === undefined ? null : fail(path, expected, value, raw));
    default:
      return (value) => value;
  }
}

/** Runs a leaf schema's own checks (min length, regex, ranges) on the converted value. */
function withChecks(base: z.ZodType, k: Kind): (c: Converter) => Converter {
  const checks = (base._zod.def as { checks?: unknown[] }).checks ?? [];
  const intOnly = k.kind === "number" && k.int && checks.length <= 1;
  if (checks.length === 0 || intOnly) return (c) => c;
  const expected = describeType(base);
  return (c) => (value, path, raw) => {
    const converted = c(value, path, raw);
    // Arrays were converted element-wise already; check only the array's own constraints.
    const probe = Array.isArray(converted) ? converted.map(() => undefined) : converted;
    const result = k.kind === "array" ? lengthOnly(base, probe as unknown[]) : base.safeParse(probe);
    if (result !== undefined && !result.success) {
      fail(path, expected, value, raw, result.error.issues[0]?.message);
    }
    return converted;
  };
}

function lengthOnly(base: z.ZodType, items: unknown[]) {
  const bag = base._zod.bag as { minimum?: number; maximum?: number; length?: number };
  const n = items.length;
  const ok = (bag.minimum === undefined || n >= bag.minimum) && (bag.maximum === undefined || n <= bag.maximum) &&
    (bag.length === undefined || n === bag.length);
  return ok ? undefined : { success: false as const, error: { issues: [{ message: `array length ${n} out of bounds` }] } };
}

const NUMERIC = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$/;

function numberConverter(int: boolean, expected: string): Converter {
  return (value, path, raw) => {
    let n: number;
    if (typeof value === "number") n = value;
    else if (typeof value === "string" && NUMERIC.test(value)) n = Number(value);
    else if (typeof value === "bigint") n = Number(value);
    else return fail(path, expected, value, raw);
    if (!Number.isFinite(n)) return fail(path, expected, value, raw);
    if (int && !Number.isInteger(n)) return fail(path, expected, value, raw);
    return n;
  };
}

/** Enums and literals: exact match, then one case-insensitive match; ambiguity is an error. */
function choiceConverter(values: readonly unknown[], expected: string): Converter {
  const exact = new Map<unknown, unknown>();
  const byText = new Map<string, unknown>();
  const folded = new Map<string, unknown[]>();
  for (const v of values) {
    exact.set(v, v);
    byText.set(String(v), v);
    const key = String(v).toLowerCase();
    folded.set(key, [...(folded.get(key) ?? []), v]);
  }
  return (value, path, raw) => {
    if (exact.has(value)) return exact.get(value);
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      return fail(path, expected, value, raw);
    }
    const text = String(value).trim();
    if (byText.has(text)) return byText.get(text);
    const candidates = folded.get(text.toLowerCase());
    if (candidates !== undefined && candidates.length === 1) return candidates[0];
    const detail = candidates !== undefined ? `ambiguous: matches ${candidates.map((c) => JSON.stringify(c)).join(", ")} ignoring case` : undefined;
    return fail(path, expected, value, raw, detail);
  };
}

/** Converts a struct: declared keys in declaration order, undeclared keys dropped. */
function objectConverter(shape: Shape): Converter {
  const hit = objectConverters.get(shape);
  if (hit !== undefined) return hit;
  let fields: Array<[string, Converter]> | undefined;
  const expected = Object.keys(shape).length > 0 ? `object {${Object.keys(shape).join(", ")}}` : "object";
  const conv: Converter = (value, path, raw) => {
    if (!isPlainObject(value)) return fail(path, expected, value, raw);
    // Built on first use: getter-based recursive shapes may not be readable at declaration time.
    fields ??= Object.keys(shape).map((name) => [name, converterFor(shape[name] as z.ZodType)]);
    const out: Record<string, unknown> = {};
    for (const [name, convert] of fields) {
      out[name] = convert(value[name], joinPath(path, name), raw);
    }
    return out;
  };
  objectConverters.set(shape, conv);
  return conv;
}

function recordConverter(keySchema: z.ZodType, valueSchema: z.ZodType, expected: string): Converter {
  const keyKind = kindOf(unwrap(keySchema).base);
  const keyConv = keyKind.kind === "enum" || keyKind.kind === "literal" ? converterFor(keySchema) : undefined;
  const valueConv = converterFor(valueSchema);
  return (value, path, raw) => {
    if (!isPlainObject(value)) return fail(path, expected, value, raw);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const at = joinPath(path, key);
      const outKey = keyConv === undefined ? key : String(keyConv(key, at, raw));
      setOwn(out, outKey, valueConv(value[key], at, raw));
    }
    return out;
  };
}

/** Converts with the pipe's input side, then lets zod run the transform. */
function pipeConverter(base: z.ZodType, input: z.ZodType): Converter {
  const inner = converterFor(input);
  const expected = describeType(input);
  return (value, path, raw) => {
    const converted = inner(value, path, raw);
    const result = base.safeParse(converted);
    if (!result.success) return fail(path, expected, value, raw, result.error.issues[0]?.message);
    return result.data;
  };
}

/** Converts one value to the declared schema; throws OutputError naming `path`. */
export function convertValue(schema: z.ZodType, value: unknown, path: string, raw: string): unknown {
  return converterFor(schema)(value, path, raw);
}

/**
 * Converts a parsed model reply to the signature's typed outputs. The reply must be an object;
 * keys the signature does not declare are ignored.
 */
export function convertOutputs(sig: CompiledSignature, value: unknown, raw: string): Record<string, unknown> {
  return objectConverter(sig.outputShape)(value, "", raw) as Record<string, unknown>;
}
