import { z } from "zod";

/** A zod schema with its optional/nullable/default wrappers peeled off. */
export interface Unwrapped {
  /** The innermost schema (string, number, object, enum, ...). */
  base: z.ZodType;
  /** `.optional()` somewhere in the wrapper chain. */
  optional: boolean;
  /** `.nullable()` somewhere in the wrapper chain. */
  nullable: boolean;
  /** True when a `.default(...)` is in the chain. */
  hasDefault: boolean;
  /** The default value (a fresh copy each call). */
  defaultValue: () => unknown;
}

const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);

export function unwrap(schema: z.ZodType): Unwrapped {
  let current = schema;
  let optional = false;
  let nullable = false;
  let defaultHolder: z.ZodType | undefined;
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: z.ZodType };
    if (!WRAPPERS.has(def.type) || def.innerType === undefined) break;
    if (def.type === "optional") optional = true;
    else if (def.type === "nullable") nullable = true;
    else if ((def.type === "default" || def.type === "prefault") && defaultHolder === undefined) defaultHolder = current;
    current = def.innerType;
  }
  const holder = defaultHolder;
  return {
    base: current,
    optional,
    nullable,
    hasDefault: holder !== undefined,
    defaultValue: () => (holder === undefined ? undefined : copyPlain((holder._zod.def as unknown as { defaultValue: unknown }).defaultValue)),
  };
}

/** The `.describe()` / `.meta({ description })` text of a schema or any of its wrappers. */
export function descriptionOf(schema: z.ZodType): string | undefined {
  let current: z.ZodType | undefined = schema;
  while (current !== undefined) {
    const text = z.globalRegistry.get(current)?.description;
    if (text !== undefined) return text;
    const def = current._zod.def as { type: string; innerType?: z.ZodType };
    current = WRAPPERS.has(def.type) ? def.innerType : undefined;
  }
  return undefined;
}

/** Whether a zod value is a schema (and not, say, a plain value put in a shape by mistake). */
export function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === "object" && value !== null && "_zod" in value;
}

/** Copies arrays and plain objects so a default is never shared between results; other values as they are. */
function copyPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyPlain);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = copyPlain(v);
    return out;
  }
  return value;
}
