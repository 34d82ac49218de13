import type { z } from "zod";
import { unwrap } from "./fields.js";
import { temporalKind } from "./temporal.js";
import type { Shape } from "./signature.js";

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

/** A schema seen through its wrappers, lazies and pipes. */
export interface Resolved {
  /** The schema that describes the wire value. */
  base: z.ZodType;
  kind: Kind;
  optional: boolean;
  nullable: boolean;
  hasDefault: boolean;
}

/** Follows lazies and pipes to the schema that describes the wire value. */
export function resolve(schema: z.ZodType): Resolved {
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
