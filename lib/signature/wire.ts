import type { z } from "zod";
import { loadedTemporal, type Temporal } from "./temporal.js";
import type { CompiledSignature } from "./compile.js";
import { resolve } from "./kind.js";
import { setOwn } from "../plain-object.js";

// The wire form of typed values, as the schemas describe them: dates as ISO strings, everything
// else as JSON. Prompts write inputs and demos this way; agents hand values to code this way.

/** `YYYY-MM-DDTHH:MM:SS+HH:MM`: the offset form, without the `[zone]` suffix Temporal adds. */
function formatZonedDateTime(value: Temporal.ZonedDateTime): string {
  return `${value.toPlainDateTime().toString()}${value.offset}`;
}

/** A JSON-ready copy of one value: Temporal and Date values become their ISO wire strings. */
export function valueToWire(schema: z.ZodType | undefined, value: unknown): unknown {
  if (value === null || value === undefined) return value ?? null;
  // Only a loaded Temporal can have made a Temporal value, so this never loads the polyfill itself.
  const T = loadedTemporal();
  if (T !== undefined) {
    if (value instanceof T.PlainDate) return value.toString();
    if (value instanceof T.ZonedDateTime) return formatZonedDateTime(value);
    if (value instanceof T.PlainDateTime || value instanceof T.Instant) return value.toString();
  }
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    const k = schema === undefined ? undefined : resolve(schema).kind;
    const element = k?.kind === "array" ? k.element : undefined;
    return value.map((v) => valueToWire(element, v));
  }
  if (typeof value === "object") {
    const k = schema === undefined ? undefined : resolve(schema).kind;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const s = k?.kind === "object" ? k.shape[key] : k?.kind === "record" ? k.value : undefined;
      if (v !== undefined) setOwn(out, key, valueToWire(s, v));
    }
    return out;
  }
  if (typeof value === "bigint") return Number(value);
  return value;
}

/** JSON-ready input values for the prompt, in declaration order. */
export function inputsToWire(sig: CompiledSignature, values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of sig.inputs) {
    const v = values[field.name];
    if (v !== undefined) out[field.name] = valueToWire(field.schema, v);
  }
  return out;
}
