import type { z } from "zod";
import { OutputError, preview } from "../errors.js";
import { unwrap } from "../signature/fields.js";
import { kindOf } from "../signature/kind.js";
import type { Converter } from "./fail.js";
import { isPlainObject } from "../plain-object.js";

// Union members are chosen from the value itself: a discriminated union by its tag, otherwise the
// members are tried in order of structural fit and the first that converts wins.

type Member = {
  convert: Converter;
  /** The JS kind of value this member takes without coercion. */
  accepts: "string" | "number" | "boolean" | "array" | "object" | "null" | "any";
  keys: string[] | undefined;
  required: string[] | undefined;
  discriminatorValues: Set<unknown> | undefined;
};

function memberOf(schema: z.ZodType, discriminator: string | undefined, converterFor: (s: z.ZodType) => Converter): Member {
  const u = unwrap(schema);
  let k = kindOf(u.base);
  for (let i = 0; i < 16 && k.kind === "lazy"; i++) k = kindOf(unwrap(k.inner()).base);
  let accepts: Member["accepts"] = "any";
  let keys: string[] | undefined;
  let required: string[] | undefined;
  switch (k.kind) {
    case "string": case "date": case "datetime": case "instant": accepts = "string"; break;
    case "number": accepts = "number"; break;
    case "boolean": accepts = "boolean"; break;
    case "array": accepts = "array"; break;
    case "record": accepts = "object"; break;
    case "null": accepts = "null"; break;
    case "enum": case "literal": accepts = typeof k.values[0] === "number" ? "number" : "string"; break;
    case "object":
      accepts = "object";
      keys = Object.keys(k.shape);
      required = keys.filter((key) => {
        const f = unwrap(k.shape[key] as z.ZodType);
        return !f.optional && !f.nullable && !f.hasDefault;
      });
      break;
  }
  const propValues = (u.base._zod as { propValues?: Record<string, Set<unknown>> }).propValues;
  return {
    convert: converterFor(schema),
    accepts,
    keys,
    required,
    discriminatorValues: discriminator === undefined ? undefined : propValues?.[discriminator],
  };
}

function jsKind(value: unknown): Member["accepts"] {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  const t = typeof value;
  return t === "string" || t === "number" || t === "boolean" || t === "object" ? t : "any";
}

/** Picks the union member from the value's shape, then tries members in order of fit. */
export function unionConverter(
  options: readonly z.ZodType[],
  discriminator: string | undefined,
  expected: string,
  converterFor: (s: z.ZodType) => Converter,
): Converter {
  let members: Member[] | undefined;
  return (value, path, raw) => {
    members ??= options.map((o) => memberOf(o, discriminator, converterFor));
    if (discriminator !== undefined && isPlainObject(value)) {
      const tag = value[discriminator];
      let chosen = members.find((m) => m.discriminatorValues?.has(tag));
      if (chosen === undefined && typeof tag === "string") {
        const lower = tag.trim().toLowerCase();
        const loose = members.filter((m) => [...(m.discriminatorValues ?? [])].some((v) => String(v).toLowerCase() === lower));
        if (loose.length === 1) chosen = loose[0];
      }
      if (chosen !== undefined) return chosen.convert(value, path, raw);
    }
    const kind = jsKind(value);
    const ranked = rank(members, value, kind);
    let firstError: unknown;
    for (const m of ranked) {
      try {
        return m.convert(value, path, raw);
      } catch (error) {
        if (!(error instanceof OutputError)) throw error;
        firstError ??= error;
      }
    }
    const where = path === "" ? "Output" : `Output field "${path}"`;
    throw new OutputError(`${where}: expected ${expected}, received ${preview(value)} (no union member matched)`, {
      raw,
      path,
      expected,
      received: value,
      cause: firstError,
    });
  };
}

function rank(members: Member[], value: unknown, kind: Member["accepts"]): Member[] {
  const scored = members.map((m, index) => {
    let score = 0;
    if (m.accepts === kind) {
      score = 1000;
      if (m.keys !== undefined && isPlainObject(value)) {
        const present = m.required?.every((key) => value[key] !== undefined && value[key] !== null) ?? true;
        const matching = m.keys.filter((key) => key in value).length;
        const unknown = Object.keys(value).length - matching;
        score += (present ? 500 : 0) + matching * 4 - unknown;
      }
    } else if (m.accepts === "any") score = 10;
    return { m, score, index };
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  return scored.map((s) => s.m);
}
