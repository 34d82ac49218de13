import type { z } from "zod";
import { ValidationError } from "../errors.js";
import type { Shape, SignatureClass } from "./signature.js";
import { descriptionOf, isZodSchema, unwrap } from "./fields.js";
import { shapeToJsonSchema } from "./json-schema.js";

export interface FieldInfo {
  name: string;
  schema: z.ZodType;
  description: string | undefined;
  /** Neither optional/nullable nor defaulted. */
  required: boolean;
  /** Optional or nullable: may be absent or null. */
  optional: boolean;
  hasDefault: boolean;
}

/** Everything about a signature that does not change between calls, computed once. */
export interface CompiledSignature {
  cls: SignatureClass;
  name: string;
  description: string;
  inputShape: Shape;
  outputShape: Shape;
  inputs: FieldInfo[];
  outputs: FieldInfo[];
  inputJsonSchema: Record<string, unknown>;
  outputJsonSchema: Record<string, unknown>;
}

const cache = new WeakMap<SignatureClass, CompiledSignature>();

function fieldsOf(shape: Shape, side: "input" | "output", sigName: string): FieldInfo[] {
  return Object.entries(shape).map(([name, schema]) => {
    if (!isZodSchema(schema)) {
      throw new ValidationError(
        `${sigName}.${side}.${name} must be a zod schema (e.g. z.string()), got ${typeof schema}`,
        { field: name },
      );
    }
    const u = unwrap(schema);
    return {
      name,
      schema,
      description: descriptionOf(schema),
      required: !u.optional && !u.nullable && !u.hasDefault,
      optional: u.optional || u.nullable,
      hasDefault: u.hasDefault,
    };
  });
}

/** The compiled descriptor of a signature class (cached per class). */
export function compiled(cls: SignatureClass): CompiledSignature {
  let entry = cache.get(cls);
  if (entry !== undefined) return entry;
  const name = cls.name || "Signature";
  const inputShape = (cls.input ?? {}) as Shape;
  const outputShape = cls.output as Shape | undefined;
  if (outputShape === undefined || typeof outputShape !== "object") {
    throw new ValidationError(`${name} declares no output fields (static output = { ... })`, { field: "output" });
  }
  entry = {
    cls,
    name,
    description: cls.description ?? "",
    inputShape,
    outputShape,
    inputs: fieldsOf(inputShape, "input", name),
    outputs: fieldsOf(outputShape, "output", name),
    inputJsonSchema: shapeToJsonSchema(inputShape),
    outputJsonSchema: shapeToJsonSchema(outputShape),
  };
  cache.set(cls, entry);
  return entry;
}
