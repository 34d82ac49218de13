import { z } from "zod";
import type { Shape } from "./signature.js";
import { unwrap } from "./fields.js";
import { temporalKind } from "./temporal.js";
import { mediaJsonSchema, mediaKind } from "../media/field.js";

type Json = Record<string, unknown>;

const DRAFT_06 = "http://json-schema.org/draft-06/schema#";
/** Marks union members so zod's `anyOf` → `type: [...]` compaction leaves unions as `anyOf`. */
const KEEP = "x-typelm-union-member";
const SAFE_INT = Number.MAX_SAFE_INTEGER;

function isRequired(schema: z.ZodType): boolean {
  const u = unwrap(schema);
  return !u.optional && !u.nullable && !u.hasDefault;
}

function replaceContents(target: Json, next: Json): void {
  for (const key of Object.keys(target)) {
    // Keep annotations (description, default, title, examples) the user attached.
    if (key !== "description" && key !== "default" && key !== "title" && key !== "examples") delete target[key];
  }
  Object.assign(target, next);
}

/**
 * Adjusts zod's output per schema, before zod's own final passes. Runs once per zod schema
 * in the document (inner schemas first).
 */
function override(ctx: { zodSchema: unknown; jsonSchema: Json }): void {
  const schema = ctx.zodSchema as z.ZodType;
  const json = ctx.jsonSchema;
  const def = schema._zod.def as { type: string; shape?: Shape };
  switch (def.type) {
    case "custom": {
      const kind = temporalKind(schema);
      const media = mediaKind(schema);
      if (media !== undefined) replaceContents(json, mediaJsonSchema(media));
      else if (kind === "date") replaceContents(json, { type: "string", format: "date" });
      else if (kind === "datetime") replaceContents(json, { type: "string", format: "date-time" });
      break;
    }
    case "date":
      replaceContents(json, { type: "string", format: "date-time" });
      break;
    case "number":
      // zod writes the safe-integer range onto every int; it says nothing a model needs.
      if (json.minimum === -SAFE_INT) delete json.minimum;
      if (json.maximum === SAFE_INT) delete json.maximum;
      break;
    case "object": {
      // zod counts nullable fields as required; the API's "required" means "must be given".
      const shape = def.shape ?? {};
      json.required = Object.keys(shape).filter((key) => isRequired(shape[key] as z.ZodType));
      // Strict-mode adapters add `additionalProperties: false` themselves when a provider needs it.
      if (json.additionalProperties === false) delete json.additionalProperties;
      break;
    }
    case "record": {
      const names = json.propertyNames as Json | undefined;
      if (names !== undefined && Object.keys(names).length === 1 && names.type === "string") delete json.propertyNames;
      break;
    }
    case "union": {
      // Discriminated unions come out as `oneOf`; providers' structured-output modes accept only `anyOf`.
      if (Array.isArray(json.oneOf)) {
        json.anyOf = json.oneOf;
        delete json.oneOf;
      }
      if (Array.isArray(json.anyOf)) {
        for (const option of json.anyOf as unknown[]) {
          if (option !== null && typeof option === "object") (option as Json)[KEEP] = true;
        }
      }
      break;
    }
  }
}

/** Final clean-up over the plain JSON: drop markers, flatten `anyOf` nesting, name defs `$defs`. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== "object") return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === KEEP) continue;
    if (key === "$ref" && typeof value === "string") out.$ref = value.replace(/^#\/definitions\//, "#/$defs/");
    else if (key === "definitions") out.$defs = tidy(value);
    else out[key] = tidy(value);
  }
  if (Array.isArray(out.anyOf)) {
    // `(A | B).nullable()` arrives as anyOf[anyOf[A, B], null]; one flat list says the same.
    out.anyOf = (out.anyOf as unknown[]).flatMap((option) => {
      const o = option as Json;
      return o !== null && typeof o === "object" && Object.keys(o).length === 1 && Array.isArray(o.anyOf) ? (o.anyOf as unknown[]) : [option];
    });
  }
  return out;
}

function generate(schema: z.ZodType): Json {
  const raw = z.toJSONSchema(schema, {
    // draft-07 output is draft-06 compatible for everything a signature can declare (no `if`/`then`).
    target: "draft-07",
    // The wire side: defaulted fields are optional, transforms render as their input type.
    io: "input",
    unrepresentable: "any",
    override,
  }) as Json;
  delete raw.$schema;
  return tidy(raw) as Json;
}

const shapeCache = new WeakMap<Shape, Json>();
const schemaCache = new WeakMap<z.ZodType, Json>();

/**
 * The JSON Schema of a signature's input or output shape:
 * `{ $schema (draft-06), type: "object", properties, required, $defs? }`.
 * Returns a fresh copy each call; callers (provider adapters) may decorate it.
 */
export function shapeToJsonSchema(shape: Shape): Json {
  let cached = shapeCache.get(shape);
  if (cached === undefined) {
    const body = generate(z.object(shape));
    cached = { $schema: DRAFT_06, type: "object", properties: body.properties ?? {}, required: body.required ?? [] };
    if (body.$defs !== undefined) cached.$defs = body.$defs;
    shapeCache.set(shape, cached);
  }
  return structuredClone(cached);
}

/** The JSON Schema of one value (no `$schema`; `$defs` included when the schema is recursive). */
export function zodToJsonSchema(schema: z.ZodType): Json {
  let cached = schemaCache.get(schema);
  if (cached === undefined) {
    cached = generate(schema);
    schemaCache.set(schema, cached);
  }
  return structuredClone(cached);
}
