/**
 * Turns an MCP server's JSON Schema for a tool's input into the zod shape a typelm `Tool` declares:
 * objects, strings, numbers, integers, booleans, null, arrays, enums and consts, required and optional
 * properties, descriptions, and `["T", "null"]` as nullable. Anything else (anyOf, oneOf, allOf, $ref,
 * a missing type) becomes `z.any()`: the server still checks it, and a note says which part was not
 * translated, so a caller can see what the agent is not told.
 */
import { z } from "zod";

type JsonSchema = Record<string, unknown>;

/** The zod shape of a tool's input and the notes about the parts of the schema that became `z.any()`. */
export interface ConvertedInput {
  shape: z.ZodRawShape;
  notes: string[];
}

const isObject = (value: unknown): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value);

/** The zod shape for a tool's `inputSchema` (an object schema); `notes` lists the untranslated parts by path. */
export function inputSchemaToZod(schema: unknown): ConvertedInput {
  const notes: string[] = [];
  const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const required = isObject(schema) && Array.isArray(schema.required) ? schema.required : [];
  return { shape: propertiesToShape(properties, required, "", notes), notes };
}

function propertiesToShape(properties: JsonSchema, required: unknown[], path: string, notes: string[]): z.ZodRawShape {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, sub] of Object.entries(properties)) {
    const field = toZod(sub, path === "" ? key : `${path}.${key}`, notes);
    shape[key] = required.includes(key) ? field : field.optional();
  }
  return shape;
}

function withDescription(type: z.ZodType, schema: JsonSchema): z.ZodType {
  return typeof schema.description === "string" && schema.description !== "" ? type.describe(schema.description) : type;
}

function literals(values: unknown[], path: string, notes: string[]): z.ZodType {
  if (values.length > 0 && values.every((v) => typeof v === "string")) return z.enum(values as [string, ...string[]]);
  const usable = values.filter((v): v is string | number | boolean | null => v === null || ["string", "number", "boolean"].includes(typeof v));
  if (usable.length !== values.length || usable.length === 0) return untranslated("enum of objects or arrays", path, notes);
  const members = usable.map((v) => z.literal(v));
  return members.length === 1 ? members[0]! : z.union(members as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]]);
}

function untranslated(what: string, path: string, notes: string[]): z.ZodType {
  notes.push(`${path || "(input)"}: ${what} is not translated; any value is accepted here and the server checks it`);
  return z.any();
}

/** One JSON Schema node as a zod type, at `path` (for the notes). */
function toZod(schema: unknown, path: string, notes: string[]): z.ZodType {
  if (schema === true || (isObject(schema) && Object.keys(schema).length === 0)) return z.any();
  if (!isObject(schema)) return untranslated(`the schema ${JSON.stringify(schema)}`, path, notes);
  return withDescription(translate(schema, path, notes), schema);
}

function translate(schema: JsonSchema, path: string, notes: string[]): z.ZodType {
  if (Array.isArray(schema.enum)) return literals(schema.enum, path, notes);
  if ("const" in schema) return literals([schema.const], path, notes);
  const type = schema.type;
  if (Array.isArray(type)) {
    const others = type.filter((t) => t !== "null");
    if (others.length === 1 && type.length === 2) return translate({ ...schema, type: others[0] }, path, notes).nullable();
    return untranslated(`a type list ${JSON.stringify(type)}`, path, notes);
  }
  switch (type) {
    case "string":
      return z.string();
    case "number":
      return z.number();
    case "integer":
      return z.number().int();
    case "boolean":
      return z.boolean();
    case "null":
      return z.null();
    case "array":
      return z.array(schema.items === undefined ? z.any() : toZod(schema.items, `${path}[]`, notes));
    case "object": {
      if (!isObject(schema.properties)) return z.record(z.string(), z.any());
      const required = Array.isArray(schema.required) ? schema.required : [];
      return z.object(propertiesToShape(schema.properties, required, path, notes));
    }
    default: {
      const construct = ["anyOf", "oneOf", "allOf", "$ref", "not"].find((k) => k in schema);
      return untranslated(construct ?? (type === undefined ? "a schema without a type" : `the type ${JSON.stringify(type)}`), path, notes);
    }
  }
}
