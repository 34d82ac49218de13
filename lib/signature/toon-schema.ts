import type { z } from "zod";
import type { Shape } from "./signature.js";
import { descriptionOf, unwrap } from "./fields.js";
import { DATETIME_HINT, INSTANT_HINT, resolve } from "./kind.js";
import { PLAIN, group, isLeaf, renderType, type TypeFormat } from "./type-text.js";

// A compact field summary that replaces the JSON Schema block when the schema format is TOON:
//
//   sentiment: "positive" | "negative" | "neutral"  # the label
//   confidence?: number (default: 1)
//   items[N]{name,price}:  # one row per item
//     name: string
//     price: number
//
// `?` marks a field the reply may leave out. Arrays of flat objects show the tabular header the
// reply should use; nested objects are indented under their field.

const INDENT = "  ";

/** One-line types; structures inside unions, records and lists are written inline as `{a: T, b?: U}`. */
const TOON_TYPES: TypeFormat = {
  words: {
    ...PLAIN.words,
    datetime: `date-time (${DATETIME_HINT})`,
    instant: `instant (${INSTANT_HINT})`,
    any: "any",
    choice: (values) => values.map((v) => JSON.stringify(v)).join(" | "),
  },
  array: (element) => `${group(element)}[]`,
  record: (value) => `{<key>: ${value}}`,
  object: (r, _schema, _name, walk) =>
    `{${Object.entries(r.kind.shape).map(([n, s]) => `${n}${marker(s)}: ${walk(s, n)}`).join(", ")}}`,
  union: (options) => options.join(" | "),
  recursive: (_r, first) => `(same fields as "${first}")`,
  // Optional is the `?` after the field name; only null is part of the type.
  wrap: (text, r) => (r.nullable ? `${text} | null` : text),
  maxDepth: 3,
};

function marker(schema: z.ZodType): string {
  const u = unwrap(schema);
  return u.optional || u.nullable || u.hasDefault ? "?" : "";
}

/** Default, then `# note; description`. Arrays say "(optional)" since `?` cannot sit in a TOON header. */
function suffix(schema: z.ZodType, note?: string, optionalWord = false): string {
  const u = unwrap(schema);
  let text = optionalWord && marker(schema) === "?" ? " (optional)" : "";
  if (u.hasDefault) {
    const value = JSON.stringify(u.defaultValue());
    if (value !== undefined) text += ` (default: ${value})`;
  }
  const description = descriptionOf(schema)?.replace(/\s*\n\s*/g, " ");
  const comment = [note, description].filter((c) => c !== undefined && c !== "").join("; ");
  if (comment !== "") text += `  # ${comment}`;
  return text;
}

/** Whether every field of a struct is a scalar: only then can TOON write its array as a table. */
export function isFlat(shape: Shape): boolean {
  return Object.values(shape).every((s) => isLeaf(resolve(s).kind));
}

function renderFields(shape: Shape, indent: string, lines: string[], stack: Map<object, string>): void {
  for (const [name, schema] of Object.entries(shape)) renderField(name, schema, indent, lines, stack);
}

function renderField(name: string, schema: z.ZodType, indent: string, lines: string[], stack: Map<object, string>): void {
  const r = resolve(schema);
  const k = r.kind;
  const head = `${indent}${name}${marker(schema)}`;
  const tail = suffix(schema);
  if (k.kind === "object") {
    const again = stack.get(r.base);
    if (again !== undefined) {
      lines.push(`${head}: (recursive: same fields as "${again}")${tail}`);
      return;
    }
    lines.push(`${head}:${tail}`);
    stack.set(r.base, name);
    renderFields(k.shape, indent + INDENT, lines, stack);
    stack.delete(r.base);
    return;
  }
  if (k.kind === "array") {
    const el = resolve(k.element);
    const again = el.kind.kind === "object" ? stack.get(el.base) : undefined;
    if (again !== undefined) {
      lines.push(`${indent}${name}[N]:${suffix(schema, `list of objects, recursive: each has the fields of "${again}"`, true)}`);
      return;
    }
    if (el.kind.kind === "object") {
      const shape = el.kind.shape;
      const columns = Object.keys(shape);
      // The header is exactly what the reply writes, with N the row count.
      if (isFlat(shape)) lines.push(`${indent}${name}[N]{${columns.join(",")}}:${suffix(schema, "one row per item", true)}`);
      else lines.push(`${indent}${name}[N]:${suffix(schema, 'list, each item "- " then its fields', true)}`);
      stack.set(el.base, name);
      renderFields(shape, indent + INDENT, lines, stack);
      stack.delete(el.base);
      return;
    }
    lines.push(`${indent}${name}[N]: ${renderType(k.element, TOON_TYPES, name, stack)}${suffix(schema, "comma-separated", true)}`);
    return;
  }
  lines.push(`${head}: ${renderType(schema, TOON_TYPES, name, stack).replace(/ \| null$/, "")}${tail}`);
}

/** The TOON field summary of a shape: one field per line, in declaration order. */
export function renderToonSchema(shape: Shape): string {
  const lines: string[] = [];
  renderFields(shape, "", lines, new Map());
  return lines.join("\n");
}
