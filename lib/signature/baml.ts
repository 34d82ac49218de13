import { z } from "zod";
import type { Shape } from "./signature.js";
import { descriptionOf } from "./fields.js";
import { DATE_HINT, DATETIME_HINT, INSTANT_HINT } from "./kind.js";
import { group, isUnionText, leafText, renderType, type LeafWords, type TypeFormat, type Walk } from "./type-text.js";

// Renders BAML-style class declarations for the prompt (no BAML package: the model only reads it).
// Nested structs become their own `class` blocks, emitted before the class that uses them.

interface Context {
  /** Class name per struct, keyed by the object schema (or the top-level shape). */
  names: Map<object, string>;
  taken: Set<string>;
  blocks: string[];
  /** Date formats met while writing the current field line. */
  hints: Set<string>;
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

/** Dates are strings in BAML; their format goes into a comment on the field line. */
const BAML_WORDS: LeafWords = {
  string: "string",
  integer: "int",
  number: "float",
  boolean: "bool",
  date: "string",
  datetime: "string",
  instant: "string",
  null: "null",
  any: "json",
  choice: (values) => values.map((v) => (typeof v === "string" ? quote(v) : String(v))).join(" | "),
};

/** BAML types, for one render: structs become named classes declared in `ctx`. */
function bamlFormat(ctx: Context): TypeFormat {
  return {
    words: BAML_WORDS,
    leaf(k) {
      if (k.kind === "date") ctx.hints.add(DATE_HINT);
      else if (k.kind === "datetime") ctx.hints.add(DATETIME_HINT);
      else if (k.kind === "instant") ctx.hints.add(`${INSTANT_HINT} (UTC)`);
      return leafText(k, BAML_WORDS);
    },
    array: (element) => `${group(element)}[]`,
    record: (value) => `map<string, ${value}>`,
    object: (r, schema, name, walk) =>
      classFor(r.base, r.kind.shape, metaId(r.base) ?? metaId(schema) ?? pascalCase(name), ctx, walk),
    union: (options) => options.join(" | "),
    // Registered before its fields render, so a recursive struct refers to itself by name.
    recursive: (r) => ctx.names.get(r.base) as string,
    wrap: (type, r) => (r.optional || r.nullable ? (isUnionText(type) ? `${type} | null` : `${type}?`) : type),
    elementName: singular,
  };
}

/** Declares (once) the class of a struct and returns its name. */
function classFor(key: object, shape: Shape, wanted: string, ctx: Context, walk: Walk): string {
  const known = ctx.names.get(key);
  if (known !== undefined) return known;
  const name = uniqueName(ctx, wanted);
  ctx.names.set(key, name);
  const lines = Object.entries(shape).map(([field, schema]) => fieldLine(field, schema, ctx, walk));
  ctx.blocks.push(`class ${name} {\n${lines.join("\n")}${lines.length > 0 ? "\n" : ""}}`);
  return name;
}

/** `  field type @description("...") // date formats`; date hints are collected per line. */
function fieldLine(field: string, schema: z.ZodType, ctx: Context, walk: Walk): string {
  const outer = ctx.hints;
  ctx.hints = new Set();
  const type = walk(schema, field);
  const hints = ctx.hints;
  ctx.hints = outer;
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
  const ctx: Context = { names: new Map(), taken: new Set(), blocks: [], hints: new Set() };
  const format = bamlFormat(ctx);
  classFor(shape, shape, className, ctx, (schema, name) => renderType(schema, format, name));
  return ctx.blocks.join("\n\n");
}
