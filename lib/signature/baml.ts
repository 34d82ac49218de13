import { z } from "zod";
import type { Shape } from "./signature.js";
import { descriptionOf } from "./fields.js";
import { DATE_HINT, DATETIME_HINT, INSTANT_HINT, resolve } from "../convert/kind.js";

// Renders BAML-style class declarations for the prompt (no BAML package: the model only reads it).
// Nested structs become their own `class` blocks, emitted before the class that uses them.

interface Context {
  /** Class name per struct, keyed by the object schema (or the top-level shape). */
  names: Map<object, string>;
  taken: Set<string>;
  blocks: string[];
}

function pascalCase(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[^A-Za-z0-9]+/).filter(Boolean);
  const text = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return /^[A-Za-z]/.test(text) ? text : `T${text}`;
}

/** `line_items` → `LineItem`: an array field's element class is named for one element. */
function singular(name: string): string {
  if (/ies$/i.test(name)) return `${name.slice(0, -3)}y`;
  if (/(ss|us|is)$/i.test(name)) return name;
  return name.replace(/s$/i, "");
}

function metaId(schema: z.ZodType): string | undefined {
  const id = z.globalRegistry.get(schema)?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

function uniqueName(ctx: Context, wanted: string): string {
  let name = wanted;
  for (let i = 2; ctx.taken.has(name); i++) name = `${wanted}${i}`;
  ctx.taken.add(name);
  return name;
}

function quote(text: string): string {
  return JSON.stringify(text);
}

/** Wraps a union so a suffix (`[]`, `?`) applies to all of it. */
function group(type: string): string {
  return type.includes(" | ") ? `(${type})` : type;
}

/** The BAML type of a schema; date formats found along the way go into `hints`. */
function typeOf(schema: z.ZodType, hintName: string, ctx: Context, hints: Set<string>): string {
  const r = resolve(schema);
  const k = r.kind;
  let type: string;
  switch (k.kind) {
    case "string":
      type = "string";
      break;
    case "number":
      type = k.int ? "int" : "float";
      break;
    case "boolean":
      type = "bool";
      break;
    case "date":
      hints.add(DATE_HINT);
      type = "string";
      break;
    case "datetime":
      hints.add(DATETIME_HINT);
      type = "string";
      break;
    case "instant":
      hints.add(`${INSTANT_HINT} (UTC)`);
      type = "string";
      break;
    case "enum":
    case "literal":
      type = k.values.map((v) => (typeof v === "string" ? quote(v) : String(v))).join(" | ");
      break;
    case "array":
      type = `${group(typeOf(k.element, singular(hintName), ctx, hints))}[]`;
      break;
    case "record":
      type = `map<string, ${typeOf(k.value, hintName, ctx, hints)}>`;
      break;
    case "object":
      type = classFor(r.base, k.shape, metaId(r.base) ?? metaId(schema) ?? pascalCase(hintName), ctx);
      break;
    case "union":
      type = k.options.map((o, i) => typeOf(o, `${hintName}${i === 0 ? "" : i + 1}`, ctx, hints)).join(" | ");
      break;
    case "null":
      type = "null";
      break;
    default:
      type = "json";
  }
  if (r.optional || r.nullable) return type.includes(" | ") ? `${type} | null` : `${type}?`;
  return type;
}

/** Declares (once) the class of a struct and returns its name. */
function classFor(key: object, shape: Shape, wanted: string, ctx: Context): string {
  const known = ctx.names.get(key);
  if (known !== undefined) return known;
  const name = uniqueName(ctx, wanted);
  // Registered before the fields render, so a recursive struct refers to itself by name.
  ctx.names.set(key, name);
  const lines = Object.entries(shape).map(([field, schema]) => fieldLine(field, schema, ctx));
  ctx.blocks.push(`class ${name} {\n${lines.join("\n")}${lines.length > 0 ? "\n" : ""}}`);
  return name;
}

function fieldLine(field: string, schema: z.ZodType, ctx: Context): string {
  const hints = new Set<string>();
  const type = typeOf(schema, field, ctx, hints);
  const description = descriptionOf(schema);
  let line = `  ${field} ${type}`;
  if (description !== undefined) line += ` @description(${quote(description)})`;
  if (hints.size > 0) line += ` // ${[...hints].join(", ")}`;
  return line;
}

/**
 * BAML class declarations for a shape: `class <className> { field type ... }`, preceded by one
 * class per nested struct.
 */
export function renderBaml(className: string, shape: Shape): string {
  const ctx: Context = { names: new Map(), taken: new Set(), blocks: [] };
  classFor(shape, shape, className, ctx);
  return ctx.blocks.join("\n\n");
}
