import type { z } from "zod";
import { unwrap } from "../signature/fields.js";
import { temporalKind } from "../signature/temporal.js";
import type { Shape } from "../signature/signature.js";

/**
 * One analysis of "what is this zod schema, for our purposes", shared by the converters and the
 * BAML/TOON renderers so they agree on what counts as a date, an int, an enum, a struct.
 */
export type Kind =
  | { kind: "string" }
  | { kind: "number"; int: boolean }
  | { kind: "boolean" }
  | { kind: "date" } // t.date(): Temporal.PlainDate
  | { kind: "datetime" } // t.dateTime(): Temporal.ZonedDateTime, fixed offset
  | { kind: "instant" } // z.date(): JS Date in UTC
  | { kind: "enum"; values: readonly (string | number)[] }
  | { kind: "literal"; values: readonly unknown[] }
  | { kind: "array"; element: z.ZodType }
  | { kind: "object"; shape: Shape }
  | { kind: "record"; key: z.ZodType; value: z.ZodType }
  | { kind: "union"; options: readonly z.ZodType[]; discriminator: string | undefined }
  | { kind: "lazy"; inner: () => z.ZodType }
  | { kind: "pipe"; input: z.ZodType }
  | { kind: "null" }
  | { kind: "any" };

type Def = {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Shape;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  values?: unknown[];
  getter?: () => z.ZodType;
  in?: z.ZodType;
};

/** The kind of a schema that has no optional/nullable/default wrapper left (see `unwrap`). */
export function kindOf(base: z.ZodType): Kind {
  const def = base._zod.def as Def;
  switch (def.type) {
    case "string":
    case "template_literal":
      return { kind: "string" };
    case "number":
      return { kind: "number", int: (base as { isInt?: boolean }).isInt === true };
    case "bigint":
      return { kind: "number", int: true };
    case "boolean":
      return { kind: "boolean" };
    case "date":
      return { kind: "instant" };
    case "custom": {
      const temporal = temporalKind(base);
      if (temporal === "date") return { kind: "date" };
      if (temporal === "datetime") return { kind: "datetime" };
      return { kind: "any" };
    }
    case "enum":
      // `_zod.values` already drops the reverse mappings of numeric TS enums.
      return { kind: "enum", values: [...((base._zod as { values?: Set<string | number> }).values ?? [])] };
    case "literal":
      return { kind: "literal", values: def.values ?? [] };
    case "array":
      return { kind: "array", element: def.element as z.ZodType };
    case "object":
      return { kind: "object", shape: def.shape as Shape };
    case "record":
      return { kind: "record", key: def.keyType as z.ZodType, value: def.valueType as z.ZodType };
    case "union":
      return { kind: "union", options: def.options ?? [], discriminator: def.discriminator };
    case "lazy":
      // zod caches the getter's result on `_zod.innerType`, so recursion sees one schema instance.
      return { kind: "lazy", inner: () => (base._zod as unknown as { innerType: z.ZodType }).innerType };
    case "pipe":
      return { kind: "pipe", input: def.in as z.ZodType };
    case "null":
    case "undefined":
    case "void":
      return { kind: "null" };
    default:
      return { kind: "any" };
  }
}

/** Follows lazies and pipes to the schema that describes the wire value. */
export function resolve(schema: z.ZodType): { base: z.ZodType; kind: Kind; optional: boolean; nullable: boolean; hasDefault: boolean } {
  let u = unwrap(schema);
  let optional = u.optional;
  let nullable = u.nullable;
  let hasDefault = u.hasDefault;
  for (let guard = 0; guard < 64; guard++) {
    const k = kindOf(u.base);
    if (k.kind !== "lazy" && k.kind !== "pipe") return { base: u.base, kind: k, optional, nullable, hasDefault };
    u = unwrap(k.kind === "lazy" ? k.inner() : k.input);
    optional ||= u.optional;
    nullable ||= u.nullable;
    hasDefault ||= u.hasDefault;
  }
  return { base: u.base, kind: { kind: "any" }, optional, nullable, hasDefault };
}

export const DATE_HINT = "YYYY-MM-DD";
export const DATETIME_HINT = "YYYY-MM-DDTHH:MM:SS+HH:MM";
export const INSTANT_HINT = "YYYY-MM-DDTHH:MM:SSZ";

const described = new WeakMap<z.ZodType, string>();

/** A short human description of a type for error messages ("integer", "one of \"a\", \"b\"", ...). */
export function describeType(schema: z.ZodType, depth = 0): string {
  const hit = described.get(schema);
  if (hit !== undefined) return hit;
  const r = resolve(schema);
  let text = describeKind(r.kind, depth);
  if (r.nullable || r.optional) text = `${text} or null`;
  if (depth === 0) described.set(schema, text);
  return text;
}

function describeKind(k: Kind, depth: number): string {
  // Depth limit keeps recursive schemas from describing themselves forever.
  const inner = (s: z.ZodType) => (depth > 2 ? "…" : describeType(s, depth + 1));
  switch (k.kind) {
    case "string":
      return "string";
    case "number":
      return k.int ? "integer" : "number";
    case "boolean":
      return "boolean";
    case "date":
      return `date (${DATE_HINT})`;
    case "datetime":
      return `date-time with offset (${DATETIME_HINT})`;
    case "instant":
      return `ISO 8601 date-time (${INSTANT_HINT})`;
    case "enum":
    case "literal":
      return `one of ${k.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "array":
      return `array of ${inner(k.element)}`;
    case "object": {
      const keys = Object.keys(k.shape);
      return keys.length > 0 ? `object {${keys.join(", ")}}` : "object";
    }
    case "record":
      return `object of ${inner(k.value)}`;
    case "union":
      return k.options.map((o) => inner(o)).join(" | ");
    case "null":
      return "null";
    default:
      return "any value";
  }
}

/** Appends a key to a path: `a.b`, `items[2]`, `map["odd key"]`. */
export function joinPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}
