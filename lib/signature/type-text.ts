import type { z } from "zod";
import { DATE_HINT, DATETIME_HINT, INSTANT_HINT, resolve, type Kind, type Resolved } from "./kind.js";

// One walk over a schema's type, shared by every place that writes a type as text (BAML classes,
// the TOON field summary, the TOON reply template, error messages). A format says how each kind
// looks; the walk decides what is inside what, stops at a struct that contains itself and
// abbreviates past a depth, so the renderers cannot disagree on those.

/** Kinds with no type inside them. */
export type LeafKind = Exclude<Kind, { kind: "array" | "object" | "record" | "union" | "lazy" | "pipe" }>;

/** Renders the type one level down: `walk(schema, nameHint)`. */
export type Walk = (schema: z.ZodType, name: string) => string;

/** How a format names single values; `choice` writes an enum's or literal's values. */
export interface LeafWords {
  string: string;
  integer: string;
  number: string;
  boolean: string;
  date: string;
  datetime: string;
  instant: string;
  null: string;
  any: string;
  choice(values: readonly unknown[]): string;
}

/** The text of a single value's type in `words`. */
export function leafText(k: LeafKind, words: LeafWords): string {
  switch (k.kind) {
    case "number":
      return k.int ? words.integer : words.number;
    case "enum":
    case "literal":
      return words.choice(k.values);
    default:
      return words[k.kind];
  }
}

export interface TypeFormat {
  words: LeafWords;
  /** Replaces `leafText(k, words)` where a format needs more than words (BAML notes date formats). */
  leaf?(k: LeafKind): string;
  array(element: string): string;
  record(value: string): string;
  /** A struct; `walk` renders its field types (the walk guards recursion). `name` is the field it sits in. */
  object(r: Resolved & { kind: { kind: "object" } }, schema: z.ZodType, name: string, walk: Walk): string;
  union(options: string[]): string;
  /** A struct met again inside itself: a reference to `first`, the field where it was first written. */
  recursive(r: Resolved, first: string): string;
  /** Applies optional/nullable to a type's text. */
  wrap(text: string, r: Resolved): string;
  /** Past this depth a struct, list, map or union is written as `…` (none: no limit). */
  maxDepth?: number;
  /** The name hint for an array's element (BAML names element classes after one element). */
  elementName?(name: string): string;
}

/** Whether a type's text is a union at its top level (not only inside `{...}`, `<...>`, `(...)` or a quoted value). */
export function isUnionText(type: string): boolean {
  let depth = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i];
    if (c === '"') {
      // Skip a quoted enum value or literal: its text may hold brackets or " | ".
      for (i++; i < type.length && type[i] !== '"'; i++) if (type[i] === "\\") i++;
    } else if (c === "{" || c === "<" || c === "(" || c === "[") depth++;
    else if (c === "}" || c === ">" || c === ")" || c === "]") depth--;
    else if (depth === 0 && type.startsWith(" | ", i)) return true;
  }
  return false;
}

/** Wraps a union so a suffix (`[]`, `?`) applies to all of it. */
export function group(type: string): string {
  return isUnionText(type) ? `(${type})` : type;
}

/** Whether a kind is a single value (no type inside it). */
export function isLeaf(k: Kind): k is LeafKind {
  return k.kind !== "array" && k.kind !== "object" && k.kind !== "record" && k.kind !== "union" && k.kind !== "lazy" && k.kind !== "pipe";
}

function walkType(schema: z.ZodType, format: TypeFormat, name: string, depth: number, stack: Map<object, string>): string {
  const r = resolve(schema);
  const k = r.kind;
  if (!isLeaf(k) && format.maxDepth !== undefined && depth > format.maxDepth) return "…";
  const walk: Walk = (s, n) => walkType(s, format, n, depth + 1, stack);
  let text: string;
  if (isLeaf(k)) text = format.leaf?.(k) ?? leafText(k, format.words);
  else if (k.kind === "array") text = format.array(walk(k.element, format.elementName?.(name) ?? name));
  else if (k.kind === "record") text = format.record(walk(k.value, name));
  else if (k.kind === "union") text = format.union(k.options.map((o, i) => walk(o, i === 0 ? name : `${name}${i + 1}`)));
  else if (k.kind === "object") {
    const first = stack.get(r.base);
    if (first !== undefined) text = format.recursive(r, first);
    else {
      stack.set(r.base, name);
      text = format.object(r as Resolved & { kind: { kind: "object" } }, schema, name, walk);
      stack.delete(r.base);
    }
  } else text = format.words.any;
  return format.wrap(text, r);
}

/**
 * The text of a schema's type in `format`. `name` is the field it describes (used in references
 * to recursive structs and for naming); `stack` carries the structs already open around it when a
 * layout (a field summary, a template) walks into nested fields itself.
 */
export function renderType(schema: z.ZodType, format: TypeFormat, name = "", stack = new Map<object, string>()): string {
  return walkType(schema, format, name, 0, stack);
}

/** Plain words for error messages: `integer`, `one of "a", "b"`, `array of date (YYYY-MM-DD)`. */
export const PLAIN: TypeFormat = {
  words: {
    string: "string",
    integer: "integer",
    number: "number",
    boolean: "boolean",
    date: `date (${DATE_HINT})`,
    datetime: `date-time with offset (${DATETIME_HINT})`,
    instant: `ISO 8601 date-time (${INSTANT_HINT})`,
    null: "null",
    any: "any value",
    choice: (values) => `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`,
  },
  array: (element) => `array of ${element}`,
  record: (value) => `object of ${value}`,
  object: (r) => {
    const keys = Object.keys(r.kind.shape);
    return keys.length > 0 ? `object {${keys.join(", ")}}` : "object";
  },
  union: (options) => options.join(" | "),
  recursive: (r) => PLAIN.object(r as Resolved & { kind: { kind: "object" } }, r.base, "", () => ""),
  wrap: (text, r) => (r.optional || r.nullable ? `${text} or null` : text),
  maxDepth: 3,
};

const described = new WeakMap<z.ZodType, string>();

/** A short human description of a type for error messages ("integer", "one of \"a\", \"b\"", ...). */
export function describeType(schema: z.ZodType): string {
  let text = described.get(schema);
  if (text === undefined) {
    text = renderType(schema, PLAIN);
    described.set(schema, text);
  }
  return text;
}
