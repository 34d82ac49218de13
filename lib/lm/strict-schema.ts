import type { JsonSchema } from "./types.js";
import { isPlainObject } from "../plain-object.js";

/**
 * Makes a JSON Schema acceptable to OpenAI's strict structured outputs, which demand that every
 * object lists all of its properties in `required` and sets `additionalProperties: false`.
 * Some schemas cannot be made strict without changing their meaning: `strictSchemaProblem` names
 * the first such place in the result, and the provider then asks without `strict`.
 *
 * - A property that was optional becomes nullable instead (the converter treats `null` as "absent").
 * - `additionalProperties: false` is added to objects with `properties`; an existing value schema
 *   (a record, `z.record(...)`) is kept: replacing it would silently change what the model may return.
 * - `oneOf` becomes `anyOf` (strict mode has no `oneOf`); `$schema` and `default` are dropped
 *   (not accepted there; defaults are applied by the converter after the reply).
 * - `$defs` / `definitions`, `anyOf`, `allOf`, `items`, `prefixItems` and record value schemas are
 *   transformed recursively; `$ref`s are left pointing at the transformed definitions.
 *
 * The input is never mutated.
 */
export function toStrictSchema(schema: JsonSchema): JsonSchema {
  return transform(schema) as JsonSchema;
}

const DROPPED_KEYS = new Set(["$schema", "default"]);
const SCHEMA_MAP_KEYS = ["$defs", "definitions"] as const;
const SCHEMA_LIST_KEYS = ["anyOf", "allOf", "prefixItems"] as const;

function transform(node: unknown): unknown {
  if (!isPlainObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYS.has(key)) continue;
    out[key] = value;
  }

  for (const key of SCHEMA_MAP_KEYS) {
    const defs = out[key];
    if (isPlainObject(defs)) out[key] = Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, transform(v)]));
  }
  if (Array.isArray(out["oneOf"])) {
    const merged = [...(Array.isArray(out["anyOf"]) ? out["anyOf"] : []), ...out["oneOf"]];
    delete out["oneOf"];
    out["anyOf"] = merged;
  }
  for (const key of SCHEMA_LIST_KEYS) {
    const list = out[key];
    if (Array.isArray(list)) out[key] = list.map(transform);
  }
  if (out["items"] !== undefined) {
    out["items"] = Array.isArray(out["items"]) ? out["items"].map(transform) : transform(out["items"]);
  }
  if (isPlainObject(out["not"])) out["not"] = transform(out["not"]);

  // A record's value schema is transformed but never replaced.
  if (isPlainObject(out["additionalProperties"])) out["additionalProperties"] = transform(out["additionalProperties"]);

  if (isPlainObject(out["properties"])) {
    const properties = out["properties"];
    const required = new Set(Array.isArray(out["required"]) ? (out["required"] as unknown[]).map(String) : []);
    const next: Record<string, unknown> = {};
    for (const [name, propertySchema] of Object.entries(properties)) {
      const strict = transform(propertySchema);
      next[name] = required.has(name) ? strict : nullable(strict);
    }
    out["properties"] = next;
    out["required"] = Object.keys(next);
    if (out["additionalProperties"] === undefined || out["additionalProperties"] === true) {
      out["additionalProperties"] = false;
    }
  }
  return out;
}

/** The same schema, also accepting `null`. */
function nullable(schema: unknown): unknown {
  if (!isPlainObject(schema)) return schema;
  if (acceptsNull(schema)) return schema;
  const type = schema["type"];
  // Plain `type` schemas widen in place; anything else (refs, unions, consts) is wrapped.
  if (typeof type === "string" && schema["$ref"] === undefined) {
    const out: Record<string, unknown> = { ...schema, type: [type, "null"] };
    if (Array.isArray(schema["enum"])) out["enum"] = [...schema["enum"], null];
    return out;
  }
  if (Array.isArray(type) && schema["$ref"] === undefined && !Array.isArray(schema["enum"])) {
    return { ...schema, type: [...type, "null"] };
  }
  if (Array.isArray(schema["anyOf"]) && Object.keys(schema).every((k) => k === "anyOf" || k === "description" || k === "title")) {
    return { ...schema, anyOf: [...schema["anyOf"], { type: "null" }] };
  }
  const { description, ...rest } = schema;
  return description === undefined
    ? { anyOf: [rest, { type: "null" }] }
    : { anyOf: [rest, { type: "null" }], description };
}

function acceptsNull(schema: Record<string, unknown>): boolean {
  const type = schema["type"];
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true;
  const anyOf = schema["anyOf"];
  return Array.isArray(anyOf) && anyOf.some((s) => isPlainObject(s) && acceptsNull(s));
}

/** Keywords of which a strict subschema needs one. */
const TYPED_BY = ["type", "anyOf", "$ref", "enum", "const"] as const;

/** Keywords OpenAI's strict mode rejects wherever they appear. */
const UNSUPPORTED_KEYWORDS = [
  "patternProperties", "propertyNames", "unevaluatedProperties", "minProperties", "maxProperties",
  "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
] as const;

/**
 * Where a schema made by `toStrictSchema` still breaks OpenAI's strict mode, as
 * `"<JSON pointer>: <why>"`, or undefined when strict mode can express it. Strict mode needs an
 * object at the root and `additionalProperties: false` on every object, so a record
 * (`z.record(...)`, a value schema under `additionalProperties`) or an open object cannot be strict.
 */
export function strictSchemaProblem(schema: JsonSchema): string | undefined {
  if (schema["type"] !== "object") return `/: the root must be an object schema, received type ${JSON.stringify(schema["type"])}`;
  return findProblem(schema, "");
}

function findProblem(node: unknown, pointer: string): string | undefined {
  if (!isPlainObject(node)) return undefined;
  const at = pointer === "" ? "/" : pointer;
  for (const keyword of UNSUPPORTED_KEYWORDS) {
    if (node[keyword] !== undefined) return `${at}: strict mode does not support "${keyword}"`;
  }
  // z.any() / z.unknown() give `{}`: OpenAI wants every subschema to say what it holds.
  if (!TYPED_BY.some((keyword) => node[keyword] !== undefined)) {
    return `${at}: a schema without a type (any value); strict mode needs ${TYPED_BY.map((k) => `"${k}"`).join(", ").replace(/, ([^,]*)$/, " or $1")}`;
  }
  const isObjectSchema = node["type"] === "object" || (Array.isArray(node["type"]) && node["type"].includes("object"));
  if (isObjectSchema && node["additionalProperties"] !== false) {
    return isPlainObject(node["additionalProperties"])
      ? `${at}: a record (additionalProperties is a value schema); strict mode needs additionalProperties: false`
      : `${at}: an object without a fixed list of properties; strict mode needs additionalProperties: false`;
  }
  // Only the places that hold subschemas are walked: `enum`, `const`, `required` hold data.
  const children: [string, unknown][] = [];
  for (const key of ["properties", ...SCHEMA_MAP_KEYS]) {
    const map = node[key];
    if (isPlainObject(map)) for (const [name, sub] of Object.entries(map)) children.push([`${key}/${escapePointer(name)}`, sub]);
  }
  for (const key of [...SCHEMA_LIST_KEYS, "items"]) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((sub, i) => children.push([`${key}/${i}`, sub]));
    else if (isPlainObject(list)) children.push([key, list]);
  }
  for (const [path, sub] of children) {
    const problem = findProblem(sub, `${pointer}/${path}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function escapePointer(name: string): string {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}
